// Generated from the Rust types by `PORTHOLE_BLESS=1 cargo test -p porthole-host --test contract`.
// Do not edit: change the Rust side and generate again.
import type { ChatEvent } from "./ChatEvent";
import type { Question } from "./Question";
import type { SamplingSettled } from "./SamplingSettled";
import type { ServerInstallRequest } from "./ServerInstallRequest";
import type { ServerSampling } from "./ServerSampling";
import type { ServerStatus } from "./ServerStatus";
import type { ViewEvent } from "./ViewEvent";

/** Each event the app sends a window, by name, with its payload. */
export type AppEvents = {
  "chat-event": ChatEvent;
  "view-event": ViewEvent;
  "servers-changed": Array<ServerStatus>;
  "elicitation-requested": Question;
  "sampling-requested": ServerSampling;
  "sampling-settled": SamplingSettled;
  "server-install-requested": ServerInstallRequest;
};
