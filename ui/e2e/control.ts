// What the flows (Node, Playwright) can see and steer of the fake back end running in the page
// (e2e/backend.ts), as `window.portholeE2E`, and what they can count on it holding. Both sides
// import this file: nothing here may need a browser or Node.

/** The stored conversations the fake back end starts with. */
export const SEEDED = {
  /** "Weather in Paris": a forecast tool call whose view expired, and a reply. */
  weather: "00000000000000a1",
  /** "Release notes": a message and a reply about a changelog. */
  release: "00000000000000b2",
};

/** One command the front end invoked, with the arguments it passed. */
export interface Invocation {
  cmd: string;
  args: Record<string, unknown>;
}

/** What can be held: a reply, or the answer to one of these commands. */
export type Held = "reply" | "model_info" | "app_info" | "list_conversation_page" | "general_settings";

export interface HarnessControl {
  /** Every command invoked so far, in order (event plumbing left out). */
  invocations: Invocation[];
  /** Commands the front end invoked that the fake back end does not implement (each also
   * rejected, as Tauri rejects an unknown command). A flow fails when this is not empty. */
  unknownCommands: string[];
  /** From now on a reply stops at its gate, after its first piece of text, and a held command
   * waits at its gate before it answers, until `release` (which also lets every waiting one go
   * on). Commands the app invokes as it starts are held from the page's address:
   * `harness.html?hold=model_info&hold=app_info`. */
  hold(kind: Held): void;
  release(kind: Held): void;
  /** Gates a reply or a held command is waiting at now. */
  waiting(): string[];
}

declare global {
  interface Window {
    portholeE2E: HarnessControl;
  }
}
