// Whether the Settings dialog is open, and at which tab: any part of the window may open it
// where it helps (a turn that has no model, a call's "always allowed" mark).

export type SettingsTab = "model" | "servers" | "agents" | "approvals" | "general";

class SettingsDialog {
  isOpen = $state(false);
  tab = $state<SettingsTab>("model");

  open(tab: SettingsTab = "model") {
    this.tab = tab;
    this.isOpen = true;
  }

  close() {
    this.isOpen = false;
  }
}

export const settingsDialog = new SettingsDialog();
