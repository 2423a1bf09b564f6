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

export interface HarnessControl {
  /** Every command invoked so far, in order (event plumbing left out). */
  invocations: Invocation[];
  /** Commands the front end invoked that the fake back end does not implement (each also
   * rejected, as Tauri rejects an unknown command). A flow fails when this is not empty. */
  unknownCommands: string[];
  /** From now on a reply of `kind` stops at its gate, after its first piece of text, until
   * `release` (which also lets the waiting one go on). */
  hold(kind: "reply"): void;
  release(kind: "reply"): void;
  /** Gates a reply is waiting at now. */
  waiting(): string[];
}

declare global {
  interface Window {
    portholeE2E: HarnessControl;
  }
}
