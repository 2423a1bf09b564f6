// The front end's one door to Rust. Every command and event the UI uses is declared here, with
// types that mirror the Rust structs (serde camelCase). Nothing else imports @tauri-apps/api.
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";

export type Audience = "model" | "app";
export type ServerState = "disabled" | "connecting" | "connected" | "failed";

/** porthole_mcp::CatalogTool */
export interface CatalogTool {
  server: string;
  name: string;
  modelName: string;
  title: string | null;
  description: string | null;
  inputSchema: Record<string, unknown>;
  uiResourceUri: string | null;
  visibility: Audience[];
  metaProblems: string[];
}

/** porthole_mcp::ServerStatus */
export interface ServerStatus {
  name: string;
  state: ServerState;
  error: string | null;
  endpoint: string;
  serverInfo: string | null;
  protocolVersion: string | null;
  mcpApps: boolean;
  tools: CatalogTool[];
}

/** desktop::AppInfo */
export interface AppInfo {
  version: string;
  profileDir: string;
  configFile: string;
  configProblems: string[];
  mcpApps: boolean;
}

/** desktop::Question: a server asks the user for input (MCP elicitation). */
export interface Question {
  id: number;
  server: string;
  message: string;
  /** The requested schema (form mode): an object schema of primitive properties. */
  schema: Record<string, unknown> | null;
  /** The page to open (URL mode). */
  url: string | null;
}

export type ElicitationAction = "accept" | "decline" | "cancel";

export const api = {
  appInfo: () => invoke<AppInfo>("app_info"),
  listServers: () => invoke<ServerStatus[]>("list_servers"),
  /** Tells the shell the composer can take input (start-up benchmark, logs). */
  uiReady: () => invoke<void>("ui_ready"),
  onServersChanged: (handler: (servers: ServerStatus[]) => void): Promise<UnlistenFn> =>
    listen<ServerStatus[]>("servers-changed", (event) => handler(event.payload)),
  /** Questions still waiting for an answer (asked before the window was listening, too). */
  listQuestions: () => invoke<Question[]>("list_questions"),
  onQuestion: (handler: (question: Question) => void): Promise<UnlistenFn> =>
    listen<Question>("elicitation-requested", (event) => handler(event.payload)),
  answerQuestion: (id: number, action: ElicitationAction, content?: Record<string, unknown>) =>
    invoke<void>("answer_elicitation", { id, action, content: content ?? null }),
};
