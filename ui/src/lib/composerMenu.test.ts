import { describe, expect, it } from "vitest";
import { attachmentChips, menuTrigger, promptEntries, resourceEntries, withoutTrigger } from "./composerMenu";
import type { PromptEntry, ResourceList } from "./api";

describe("menuTrigger", () => {
  it("opens the prompt menu for a slash at the start of the box only", () => {
    expect(menuTrigger("/", 1)).toEqual({ kind: "prompt", query: "", start: 0, end: 1 });
    expect(menuTrigger("/sum", 4)).toEqual({ kind: "prompt", query: "sum", start: 0, end: 4 });
    expect(menuTrigger("/sum it", 7)).toBeNull();
    expect(menuTrigger("see /etc", 8)).toBeNull();
    expect(menuTrigger("a/b", 3)).toBeNull();
  });

  it("opens the resource menu for an @ that starts a word, up to the caret", () => {
    expect(menuTrigger("@", 1)).toEqual({ kind: "resource", query: "", start: 0, end: 1 });
    expect(menuTrigger("read @doc", 9)).toEqual({ kind: "resource", query: "doc", start: 5, end: 9 });
    expect(menuTrigger("read @doc and", 13)).toBeNull();
    expect(menuTrigger("mail me@host", 12)).toBeNull();
    // The caret decides: text after it does not count.
    expect(menuTrigger("read @doc later", 9)).toEqual({ kind: "resource", query: "doc", start: 5, end: 9 });
  });

  it("takes the trigger out of the text", () => {
    const t = menuTrigger("read @doc later", 9)!;
    expect(withoutTrigger("read @doc later", t)).toBe("read  later");
  });
});

const prompts: PromptEntry[] = [
  { server: "everything", name: "simple-prompt", title: "Simple Prompt", description: "A prompt with no arguments", arguments: [] },
  { server: "everything", name: "args-prompt", title: "Arguments Prompt", description: "Two arguments", arguments: [] },
  { server: "jira", name: "summarise", title: null, description: "Summarise an issue (simple)", arguments: [] },
];

describe("promptEntries", () => {
  it("keeps what matches, names first, then by name", () => {
    expect(promptEntries(prompts, "").map((e) => e.label)).toEqual(["args-prompt", "simple-prompt", "summarise"]);
    expect(promptEntries(prompts, "SIM").map((e) => e.label)).toEqual(["simple-prompt", "summarise"]);
    expect(promptEntries(prompts, "jira").map((e) => e.key)).toEqual(["jira/summarise"]);
    expect(promptEntries(prompts, "nothing")).toEqual([]);
  });
});

describe("resourceEntries", () => {
  const list: ResourceList = {
    resources: [
      { server: "docs", uri: "file:///notes/plan.md", name: "plan.md", title: null, description: null, mimeType: "text/markdown" },
    ],
    templates: [
      {
        server: "everything",
        uriTemplate: "demo://resource/dynamic/text/{resourceId}",
        name: "Dynamic Text Resource",
        title: null,
        description: null,
        mimeType: "text/plain",
        variables: ["resourceId"],
      },
    ],
    problems: [],
  };

  it("lists resources and templates together, matched on name and URI", () => {
    expect(resourceEntries(list, "").map((e) => e.kind)).toEqual(["template", "resource"]);
    expect(resourceEntries(list, "plan").map((e) => e.label)).toEqual(["plan.md"]);
    expect(resourceEntries(list, "demo://").map((e) => e.kind)).toEqual(["template"]);
  });
});

describe("attachmentChips", () => {
  it("names each attachment by its resource's last segment, or its kind", () => {
    const chips = attachmentChips([
      { type: "text", text: "look" },
      { type: "attachment", server: "docs", content: { type: "resource", resource: { uri: "file:///notes/my%20plan.md", mimeType: "text/markdown", text: "x" } } },
      { type: "attachment", server: "everything", content: { type: "image", data: "iVBOR", mimeType: "image/png" } },
    ]);
    expect(chips).toEqual([
      { server: "docs", uri: "file:///notes/my%20plan.md", label: "my plan.md", mimeType: "text/markdown" },
      { server: "everything", uri: null, label: "image", mimeType: "image/png", image: "data:image/png;base64,iVBOR" },
    ]);
  });
});
