// What the settings form refuses, and why, before anything reaches Rust (which checks again).
import type { ProviderKind, ProviderKeys } from "./api";

export const MAX_RETENTION_DAYS = 365;

export const providerLabels: Record<ProviderKind, string> = {
  openai: "OpenAI or compatible (Ollama, llama.cpp, LM Studio, vLLM, OpenRouter)",
  anthropic: "Anthropic",
};

/** Why `value` cannot be a provider's base URL, or null when it can. */
export function baseUrlProblem(value: string): string | null {
  const text = value.trim();
  if (text === "") return "The base URL is empty.";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `“${text}” is not a URL; it starts with http:// or https://.`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `The base URL must start with http:// or https://, not ${url.protocol}//.`;
  }
  if (url.hostname === "") return "The base URL has no host.";
  if (url.username !== "" || url.password !== "") {
    return "The base URL must not carry a user name or password; save the API key instead.";
  }
  return null;
}

/** The days a view is kept, or why the field's text is not that. */
export function parseRetentionDays(value: string | number): { days: number } | { error: string } {
  const text = String(value).trim();
  const range = `from 1 to ${MAX_RETENTION_DAYS}`;
  if (text === "") return { error: `Enter a number of days ${range}.` };
  const days = Number(text);
  if (!Number.isFinite(days)) return { error: `View retention must be a number of days ${range}.` };
  if (!Number.isInteger(days)) return { error: `View retention is a whole number of days (${range}), not ${text}.` };
  if (days < 1 || days > MAX_RETENTION_DAYS) return { error: `View retention must be ${range} days, not ${days}.` };
  return { days };
}

/** The model section's fields, checked: the first problem found, with the field it concerns. */
export function modelFormProblem(form: {
  baseUrl: string;
  model: string;
}): { field: "baseUrl" | "model"; message: string } | null {
  const url = baseUrlProblem(form.baseUrl);
  if (url) return { field: "baseUrl", message: url };
  if (form.model !== "" && form.model.trim() === "") return { field: "model", message: "The model name is only spaces." };
  return null;
}

/** Where a provider's key is, in words. */
/** How long a keyring call may take before the window says it is waiting for the keyring (ms). */
export const KEYRING_PATIENCE_MS = 700;

export function keyStatusText(keys: ProviderKeys | undefined, keyringProblem: string | null): string {
  if (!keys) return "";
  const parts: string[] = [];
  if (keys.keyFromEnv) parts.push(`Using the key from ${keys.keyEnvVar} (it wins over the keyring).`);
  if (keyringProblem) {
    parts.push(`Keys cannot be saved here: ${keyringProblem}. Set ${keys.keyEnvVar} in the environment instead.`);
  } else if (keys.keyStored) {
    parts.push("A key is saved in the OS keyring.");
  } else if (!keys.keyFromEnv) {
    parts.push(`No key saved. Keys are kept in the OS keyring, never in a file (or set ${keys.keyEnvVar}). Local servers usually need none.`);
  }
  return parts.join(" ");
}
