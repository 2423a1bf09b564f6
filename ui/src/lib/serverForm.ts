// The MCP server form: its fields as text, what it refuses and why (the same checks and words
// as Rust's config_file.rs, which checks again), and the draft it sends.
import type { ServerDraft, ServerEntry } from "./api";

export type ServerTransport = "stdio" | "http";

/** The form's fields, as typed. Args, env and headers are one item per line. */
export interface ServerFormValues {
  name: string;
  transport: ServerTransport;
  command: string;
  args: string;
  env: string;
  cwd: string;
  url: string;
  headers: string;
}

export type ServerFormField = "name" | "command" | "args" | "env" | "cwd" | "url" | "headers";

export interface FormProblem {
  field: ServerFormField;
  message: string;
}

/** What the checks need besides the fields. */
export interface FormContext {
  /** Every server name configured anywhere, the edited server's own included. */
  taken: string[];
  /** The name of the server being edited; null for a new one. */
  originalName: string | null;
  /** Env and header names whose values are stored for the edited server (a name-only line keeps them). */
  storedEnv: string[];
  storedHeaders: string[];
}

export const MAX_NAME_CHARS = 100;

export const fieldLabels: Record<ServerFormField, string> = {
  name: "Name",
  command: "Command",
  args: "Arguments",
  env: "Environment",
  cwd: "Working folder",
  url: "URL",
  headers: "Headers",
};

export function emptyServerForm(): ServerFormValues {
  return { name: "", transport: "stdio", command: "", args: "", env: "", cwd: "", url: "", headers: "" };
}

/** The form for editing an entry: stored env and header values are not known here, so each is a
 * line with its name alone, which keeps the stored value. */
export function serverFormFrom(entry: ServerEntry): ServerFormValues {
  return {
    name: entry.name,
    transport: entry.transport === "http" ? "http" : "stdio",
    command: entry.command,
    args: entry.args.join("\n"),
    env: entry.envKeys.join("\n"),
    cwd: entry.cwd,
    url: entry.url,
    headers: entry.headerKeys.join("\n"),
  };
}

/** The text's lines, without line-end characters. */
export function textLines(text: string): string[] {
  return text === "" ? [] : text.split("\n").map((l) => l.replace(/\r$/, ""));
}

/** One argument per line; blank lines are skipped. */
export function splitArgs(text: string): string[] {
  return textLines(text).filter((l) => l.trim() !== "");
}

const NUL = "\u0000";
/** RFC 9110 token characters: what an HTTP header name may hold. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value: no control characters but tab. */
const HEADER_VALUE_BAD = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function isAbsolutePath(path: string): boolean {
  return path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\");
}

/** Why `url` cannot be an HTTP server's URL, or null. */
export function urlProblem(url: string): string | null {
  if (url === "") return "an HTTP server needs a URL";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a URL`;
  }
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || parsed.hostname === "") {
    return `"${url}" is not an http:// or https:// URL`;
  }
  return null;
}

/** Problems of `KEY=value` lines; `KEY` alone must name a stored value. */
export function envProblems(text: string, stored: string[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  textLines(text).forEach((line, i) => {
    if (line.trim() === "") return;
    const n = i + 1;
    const eq = line.indexOf("=");
    const key = (eq < 0 ? line : line.slice(0, eq)).trim();
    const value = eq < 0 ? null : line.slice(eq + 1);
    if (key === "") return problems.push(`line ${n}: no name before "="`);
    if (/\s/.test(key) || key.includes(NUL)) return problems.push(`line ${n}: "${key}" is not a variable name (no spaces)`);
    if (seen.has(key)) return problems.push(`line ${n}: ${key} is set twice`);
    if (value !== null && value.includes(NUL)) return problems.push(`line ${n}: the value must not contain a NUL character`);
    if (value === null && !stored.includes(key)) return problems.push(`line ${n}: ${key} has no value; write ${key}=value`);
    seen.add(key);
  });
  return problems;
}

/** Problems of `Name: value` lines; `Name` alone must name a stored header. */
export function headerProblems(text: string, stored: string[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const lower = stored.map((s) => s.toLowerCase());
  textLines(text).forEach((line, i) => {
    if (line.trim() === "") return;
    const n = i + 1;
    const colon = line.indexOf(":");
    const name = (colon < 0 ? line : line.slice(0, colon)).trim();
    const value = colon < 0 ? null : line.slice(colon + 1).trim();
    if (name === "") return problems.push(`line ${n}: no header name before ":"`);
    if (!HEADER_NAME.test(name)) return problems.push(`line ${n}: "${name}" is not a valid header name`);
    if (seen.has(name.toLowerCase())) return problems.push(`line ${n}: ${name} is set twice`);
    if (value !== null && HEADER_VALUE_BAD.test(value)) {
      return problems.push(`line ${n}: the value of ${name} is not a valid header value`);
    }
    if (value === null && !lower.includes(name.toLowerCase())) {
      return problems.push(`line ${n}: ${name} has no value; write ${name}: value`);
    }
    seen.add(name.toLowerCase());
  });
  return problems;
}

/** Everything wrong with the form, field by field (empty when it can be saved). */
export function serverFormProblems(values: ServerFormValues, context: FormContext): FormProblem[] {
  const problems: FormProblem[] = [];
  const add = (field: ServerFormField, message: string) => problems.push({ field, message });
  const name = values.name.trim();
  if (name === "") add("name", "a server needs a name");
  else if ([...name].length > MAX_NAME_CHARS) add("name", `at most ${MAX_NAME_CHARS} characters`);
    else if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) add("name", "no control characters (such as line breaks)");
  else if (name !== context.originalName && context.taken.includes(name)) {
    add("name", `a server named "${name}" already exists`);
  }
  if (values.transport === "stdio") {
    const command = values.command.trim();
    if (command === "") add("command", "a stdio server needs a command");
    else if (command.includes(NUL)) add("command", "must not contain a NUL character");
    if (values.args.includes(NUL)) add("args", "must not contain a NUL character");
    const cwd = values.cwd.trim();
    if (cwd !== "" && !cwd.startsWith("${") && !isAbsolutePath(cwd)) add("cwd", `"${cwd}" is not an absolute path`);
    for (const message of envProblems(values.env, context.storedEnv)) add("env", message);
  } else {
    const problem = urlProblem(values.url.trim());
    if (problem) add("url", problem);
    for (const message of headerProblems(values.headers, context.storedHeaders)) add("headers", message);
  }
  return problems;
}

/** What the form sends to `save_server`. */
export function serverDraft(values: ServerFormValues, enabled: boolean, mcpApps: boolean): ServerDraft {
  // Env and header lines go as typed (Rust skips blank ones), so its line numbers match the form's.
  return {
    name: values.name.trim(),
    transport:
      values.transport === "stdio"
        ? {
            type: "stdio",
            command: values.command.trim(),
            args: splitArgs(values.args),
            env: textLines(values.env),
            cwd: values.cwd.trim(),
          }
        : { type: "http", url: values.url.trim(), headers: textLines(values.headers) },
    enabled,
    mcpApps,
  };
}
