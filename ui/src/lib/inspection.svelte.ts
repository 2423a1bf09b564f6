// Whether the view inspector is on: the views the window shows from then on report what they
// do (every bridge message, their console, CSP violations), and their cards offer Inspect.
import { api, errorMessage } from "./api";

class Inspection {
  on = $state(false);
  problem = $state<string | null>(null);

  /** Reads the setting from Rust (it lasts while the app runs). */
  async load() {
    try {
      this.on = await api.viewInspectionOn();
    } catch {
      // Not known: off.
    }
  }

  async set(on: boolean) {
    this.problem = null;
    try {
      await api.setViewInspection(on);
      this.on = on;
    } catch (e) {
      this.problem = errorMessage(e);
    }
  }
}

export const inspection = new Inspection();
