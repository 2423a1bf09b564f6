// JSON a person typed into the workbench (a tool input, a tool result, capabilities): parsed, or
// an error that says which field is wrong and why.
import type { JsonValue } from "./api";

/** `text` parsed; throws "The <what> is not JSON: …" when it is not. */
export function parseJsonInput(text: string, what: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (e) {
    throw new Error(`The ${what} is not JSON: ${(e as Error).message}`);
  }
}
