// Test fixtures: a failed command's rejection, as the Rust side sends it. Used by tests only.
import type { AppError, ErrorCode } from "../api";

/** The `{code, message}` a command rejects with. */
export function refused(code: ErrorCode, message: string): AppError {
  return { code, message };
}
