import { describe, expect, it } from "vitest";
import { baseUrlProblem, keyStatusText, modelFormProblem, parseRetentionDays } from "./settings";
import type { ProviderKeys } from "./api";

describe("settings checks", () => {
  it("takes http(s) base URLs and says why it refuses others", () => {
    expect(baseUrlProblem("http://localhost:11434/v1")).toBeNull();
    expect(baseUrlProblem("  https://api.openai.com/v1 ")).toBeNull();
    expect(baseUrlProblem("")).toMatch(/empty/);
    expect(baseUrlProblem("localhost:11434")).toMatch(/http:\/\/ or https:\/\//);
    expect(baseUrlProblem("ftp://example.com")).toMatch(/not ftp:/);
    expect(baseUrlProblem("not a url")).toMatch(/not a URL/);
    expect(baseUrlProblem("https://me:secret@example.com/v1")).toMatch(/user name or password/);
  });

  it("takes a whole number of days from 1 to 365", () => {
    expect(parseRetentionDays("7")).toEqual({ days: 7 });
    expect(parseRetentionDays(365)).toEqual({ days: 365 });
    expect(parseRetentionDays(" 1 ")).toEqual({ days: 1 });
    for (const [bad, why] of [
      ["", /Enter a number/],
      ["0", /not 0/],
      ["366", /not 366/],
      ["-3", /not -3/],
      ["2.5", /whole number/],
      ["seven", /number of days/],
    ] as const) {
      const parsed = parseRetentionDays(bad);
      expect("error" in parsed && parsed.error, bad).toMatch(why);
    }
  });

  it("points at the model form's field that is wrong", () => {
    expect(modelFormProblem({ baseUrl: "http://localhost:8080/v1", model: "" })).toBeNull();
    expect(modelFormProblem({ baseUrl: "http://localhost:8080/v1", model: "qwen" })).toBeNull();
    expect(modelFormProblem({ baseUrl: "nope", model: "qwen" })?.field).toBe("baseUrl");
    expect(modelFormProblem({ baseUrl: "http://x", model: "   " })).toEqual({ field: "model", message: "The model name is only spaces." });
  });

  it("says where the key is", () => {
    const keys: ProviderKeys = {
      provider: "openai",
      defaultBaseUrl: "https://api.openai.com/v1",
      keyEnvVar: "OPENAI_API_KEY",
      keyFromEnv: false,
      keyStored: false,
    };
    expect(keyStatusText(keys, null)).toMatch(/No key saved.*OS keyring, never in a file/);
    expect(keyStatusText({ ...keys, keyStored: true }, null)).toBe("A key is saved in the OS keyring.");
    expect(keyStatusText({ ...keys, keyFromEnv: true }, null)).toMatch(/^Using the key from OPENAI_API_KEY/);
    expect(keyStatusText(keys, "no OS keyring is available (no D-Bus)")).toMatch(/no D-Bus.*Set OPENAI_API_KEY/);
    expect(keyStatusText(undefined, null)).toBe("");
  });
});
