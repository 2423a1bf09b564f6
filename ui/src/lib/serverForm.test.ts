import { describe, expect, it } from "vitest";
import type { ServerEntry } from "./api";
import {
  emptyServerForm,
  envProblems,
  headerProblems,
  serverDraft,
  serverFormFrom,
  serverFormProblems,
  splitArgs,
  urlProblem,
  type FormContext,
  type ServerFormValues,
} from "./serverForm";

const context: FormContext = { taken: ["fs", "remote"], originalName: null, storedEnv: [], storedHeaders: [] };

const stdio = (over: Partial<ServerFormValues> = {}): ServerFormValues => ({
  ...emptyServerForm(),
  name: "notes",
  command: "npx",
  ...over,
});
const http = (over: Partial<ServerFormValues> = {}): ServerFormValues => ({
  ...emptyServerForm(),
  name: "api",
  transport: "http",
  url: "https://example.com/mcp",
  ...over,
});

const entry = (over: Partial<ServerEntry> = {}): ServerEntry => ({
  name: "fs",
  source: "/p/config.json",
  editable: true,
  shadowedBy: null,
  transport: "stdio",
  command: "npx",
  args: ["-y", "server-filesystem", "/tmp"],
  envKeys: ["API_KEY"],
  cwd: "",
  url: "",
  headerKeys: [],
  enabled: true,
  mcpApps: false,
  problem: null,
  ...over,
});

describe("the MCP server form", () => {
  it("takes a valid stdio or HTTP server", () => {
    expect(serverFormProblems(stdio({ args: "-y\npkg", env: "A=1\nB=two=2", cwd: "/srv" }), context)).toEqual([]);
    expect(serverFormProblems(stdio({ cwd: "${env:HOME}/x" }), context)).toEqual([]);
    expect(serverFormProblems(http({ headers: "Authorization: Bearer x\nX-Empty:" }), context)).toEqual([]);
    expect(serverFormProblems(http({ url: "http://127.0.0.1:8080/mcp" }), context)).toEqual([]);
  });

  it("refuses a missing or taken name and a stdio server without a command, field by field", () => {
    expect(serverFormProblems(stdio({ name: "  ", command: " " }), context)).toEqual([
      { field: "name", message: "a server needs a name" },
      { field: "command", message: "a stdio server needs a command" },
    ]);
    expect(serverFormProblems(stdio({ name: "fs" }), context)).toEqual([
      { field: "name", message: 'a server named "fs" already exists' },
    ]);
    // Its own name is not taken when editing.
    expect(serverFormProblems(stdio({ name: "fs" }), { ...context, originalName: "fs" })).toEqual([]);
    expect(serverFormProblems(stdio({ name: "x".repeat(101) }), context)[0].message).toBe("at most 100 characters");
    expect(serverFormProblems(stdio({ name: "a\tb" }), context)[0].field).toBe("name");
    expect(serverFormProblems(stdio({ cwd: "relative/dir" }), context)).toEqual([
      { field: "cwd", message: '"relative/dir" is not an absolute path' },
    ]);
  });

  it("refuses URLs that are not http(s)", () => {
    expect(urlProblem("")).toBe("an HTTP server needs a URL");
    expect(urlProblem("example.com/mcp")).toBe('"example.com/mcp" is not a URL');
    expect(urlProblem("ftp://example.com/mcp")).toBe('"ftp://example.com/mcp" is not an http:// or https:// URL');
    expect(urlProblem("https://example.com/mcp")).toBeNull();
    expect(serverFormProblems(http({ url: "ws://h/mcp" }), context).map((p) => p.field)).toEqual(["url"]);
  });

  it("says which env line is wrong, in Rust's words", () => {
    expect(envProblems("=v\nA B=1\nOK=1\nOK=2\nNOVALUE\n\n", [])).toEqual([
      'line 1: no name before "="',
      'line 2: "A B" is not a variable name (no spaces)',
      "line 4: OK is set twice",
      "line 5: NOVALUE has no value; write NOVALUE=value",
    ]);
    // A name alone keeps a stored value.
    expect(envProblems("API_KEY\nNEW=1", ["API_KEY"])).toEqual([]);
  });

  it("says which header line is wrong, in Rust's words", () => {
    expect(headerProblems("Bad Name: x\nX-A: ok\nx-a: again\n: v\nX-B: a\u0007b\nX-C", [])).toEqual([
      'line 1: "Bad Name" is not a valid header name',
      "line 3: x-a is set twice",
      'line 4: no header name before ":"',
      "line 5: the value of X-B is not a valid header value",
      "line 6: X-C has no value; write X-C: value",
    ]);
    expect(headerProblems("authorization", ["Authorization"])).toEqual([]);
  });

  it("edits an entry with stored values kept by name, never shown", () => {
    const values = serverFormFrom(entry());
    expect(values).toEqual({
      name: "fs",
      transport: "stdio",
      command: "npx",
      args: "-y\nserver-filesystem\n/tmp",
      env: "API_KEY",
      cwd: "",
      url: "",
      headers: "",
    });
    const ctx = { ...context, originalName: "fs", storedEnv: ["API_KEY"] };
    expect(serverFormProblems(values, ctx)).toEqual([]);
    expect(serverFormFrom(entry({ transport: "http", url: "https://h/mcp", headerKeys: ["Authorization"] })).headers).toBe(
      "Authorization",
    );
  });

  it("sends arguments one per line and env lines as typed", () => {
    expect(splitArgs("-y\r\n\n  \n@scope/pkg\n/dir with spaces\n")).toEqual(["-y", "@scope/pkg", "/dir with spaces"]);
    expect(serverDraft(stdio({ name: " notes ", args: "a\nb c", env: "A=1\n\nB=2" }), true, false)).toEqual({
      name: "notes",
      transport: { type: "stdio", command: "npx", args: ["a", "b c"], env: ["A=1", "", "B=2"], cwd: "" },
      enabled: true,
      mcpApps: false,
    });
    expect(serverDraft(http({ headers: "X-A: 1" }), false, true)).toEqual({
      name: "api",
      transport: { type: "http", url: "https://example.com/mcp", headers: ["X-A: 1"] },
      enabled: false,
      mcpApps: true,
    });
  });
});
