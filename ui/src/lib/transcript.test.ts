import { describe, expect, it } from "vitest";
import type { StoredConversation, TurnEvent } from "./api";
import { retryText } from "./chatFormat";
import { isSendKey } from "./composer";
import { layout } from "./virtualList";
import { ev, record, shown, textBlock } from "./testing/turns";
import {
  estimatedHeight,
  hasBubble,
  lastUserIndex,
  panelRunAfter,
  retrySpot,
  rowOfScrollPosition,
  scrollPositionAt,
  Transcript,
  type AssistantItem,
  type ToolCallItem,
} from "./transcript.svelte";

function run(events: TurnEvent[], t = new Transcript()): Transcript {
  for (const e of events) t.apply(e);
  return t;
}

const calls = (t: Transcript) => t.items.filter((i): i is ToolCallItem => i.kind === "tool-call");
const assistants = (t: Transcript) => t.items.filter((i): i is AssistantItem => i.kind === "assistant");
const call = (t: Transcript, id: string) => calls(t).find((c) => c.callId === id)!;

const parisArgs = { city: "Paris" };
const osloArgs = { city: "Oslo" };
const parisModel = { content: [textBlock("Paris: 18°C, sunny")], isError: false };
const parisView = {
  content: [textBlock("Paris: 18°C, sunny")],
  structuredContent: { city: "Paris", hourly: [17, 18, 19] },
  isError: false,
};
const osloModel = { content: [textBlock("Oslo: 9°C, rain")], isError: false };
const osloView = { content: [textBlock("Oslo: 9°C, rain")], structuredContent: { city: "Oslo", hourly: [8, 9] }, isError: false };

/** One turn: reasoning and text streamed, two parallel tool calls (both approved, one with a
 * view), progress on both, then a second step with the answer. */
const fullTurn: TurnEvent[] = [
  ev.turnStarted(),
  ev.user("Weather in Paris and Oslo?"),
  ev.step(1),
  ev.reasoning("Two cities: "),
  ev.reasoning("two forecasts."),
  ev.text("Let me "),
  ev.text("check."),
  ev.callStreaming("c1", "demo__forecast", ""),
  ev.callStreaming("c1", "demo__forecast", '{"city":'),
  ev.callStreaming("c1", "demo__forecast", '{"city":"Paris"}'),
  ev.callStreaming("c2", "demo__forecast", '{"city":"Oslo"}'),
  ev.assistant([
    { type: "reasoning", text: "Two cities: two forecasts." },
    { type: "text", text: "Let me check." },
    { type: "tool_use", id: "c1", name: "demo__forecast", arguments: parisArgs },
    { type: "tool_use", id: "c2", name: "demo__forecast", arguments: osloArgs },
  ]),
  ev.callStarted("c1", "demo__forecast", "demo", "forecast", parisArgs, "ui://demo/forecast.html"),
  ev.callStarted("c2", "demo__forecast", "demo", "forecast", osloArgs, "ui://demo/forecast.html"),
  ev.approvalRequested("c1", "demo", "forecast", parisArgs),
  ev.approvalRequested("c2", "demo", "forecast", osloArgs),
  ev.approvalResolved("c1", "allow_once"),
  ev.running("c1"),
  ev.approvalResolved("c2", "allow_always"),
  ev.running("c2"),
  ev.progress("c1", 1, 4, "fetching"),
  ev.progress("c2", 50, null),
  ev.finished("c2", "ok", osloModel, osloView, 640),
  ev.finished("c1", "ok", parisModel, parisView, 1250),
  ev.toolResults([
    { type: "tool_result", tool_use_id: "c1", content: parisModel.content, is_error: false },
    { type: "tool_result", tool_use_id: "c2", content: osloModel.content, is_error: false },
  ]),
  ev.step(2),
  ev.text("Paris: 18°C and sunny.\n"),
  ev.text("Oslo: 9°C with rain."),
  ev.assistant([{ type: "text", text: "Paris: 18°C and sunny.\nOslo: 9°C with rain." }]),
  ev.done("end_turn", "Paris: 18°C and sunny.\nOslo: 9°C with rain."),
];

describe("Transcript: a full turn", () => {
  it("streams text and reasoning into the step's message", () => {
    const t = run(fullTurn.slice(0, 7));
    expect(t.busy).toBe(true);
    const [a] = assistants(t);
    expect(a).toMatchObject({ text: "Let me check.", reasoning: "Two cities: two forecasts.", status: "streaming" });
    expect(t.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "Weather in Paris and Oslo?"],
      ["assistant", "Let me check."],
    ]);
  });

  it("shows tool calls while their arguments stream, then pending once started", () => {
    const t = run(fullTurn.slice(0, 10));
    expect(call(t, "c1")).toMatchObject({ status: "streaming", name: "demo__forecast", argumentsText: '{"city":"Paris"}' });
    run(fullTurn.slice(10, 14), t);
    expect(assistants(t)[0].status).toBe("complete");
    expect(calls(t).map((c) => [c.callId, c.status, c.server, c.tool, c.uiResourceUri])).toEqual([
      ["c1", "pending", "demo", "forecast", "ui://demo/forecast.html"],
      ["c2", "pending", "demo", "forecast", "ui://demo/forecast.html"],
    ]);
    expect(call(t, "c1").arguments).toEqual(parisArgs);
  });

  it("follows two parallel calls through approval, running and progress", () => {
    const t = run(fullTurn.slice(0, 16));
    expect(calls(t).map((c) => c.status)).toEqual(["awaiting-approval", "awaiting-approval"]);
    run(fullTurn.slice(16, 18), t);
    expect(call(t, "c1")).toMatchObject({ status: "running", decision: "allow_once" });
    expect(call(t, "c2").status).toBe("awaiting-approval");
    run(fullTurn.slice(18, 22), t);
    expect(call(t, "c2")).toMatchObject({ status: "running", decision: "allow_always" });
    expect(call(t, "c1").progress).toEqual({ progress: 1, total: 4, message: "fetching" });
    expect(call(t, "c2").progress).toEqual({ progress: 50, total: null, message: null });
  });

  it("keeps both facings of each result, and ends the turn on done", () => {
    const t = run(fullTurn);
    expect(t.busy).toBe(false);
    const c1 = call(t, "c1");
    expect(c1).toMatchObject({ status: "ok", durationMs: 1250, error: null });
    expect(c1.modelResult).toEqual(parisModel);
    expect(c1.viewResult).toEqual(parisView);
    expect(call(t, "c2").viewResult).toEqual(osloView);
    // Items in order: the tool results message is not a bubble.
    expect(t.items.map((i) => i.kind)).toEqual(["user", "assistant", "tool-call", "tool-call", "assistant"]);
    expect(assistants(t)[1]).toMatchObject({ text: "Paris: 18°C and sunny.\nOslo: 9°C with rain.", status: "complete" });
  });

  it("gives a remote agent's call the server and whole result of the view it offers", () => {
    const text = { content: [{ type: "text", text: "12:00" }], isError: false };
    const whole = { content: text.content, structuredContent: { time: "12:00" } };
    const t = run([
      ev.turnStarted(),
      ev.user("time?"),
      ev.step(1),
      ev.callStreaming("c1", "get-time", "{}"),
      ev.assistant([{ type: "tool_use", id: "c1", name: "get-time", arguments: {} }]),
      ev.callStarted("c1", "get-time", null, "get-time", {}),
      ev.running("c1", "agent"),
      ev.finished("c1", "ok", text, null, 40),
      {
        type: "remote_view",
        callId: "c1",
        server: "clockwork/clock",
        tool: "get-time",
        view: { resourceUri: "ui://get-time/mcp-app.html", serverHash: "h", serverId: "clock", toolInput: {}, result: whole },
      },
    ]);
    expect(call(t, "c1")).toMatchObject({ server: "clockwork/clock", uiResourceUri: "ui://get-time/mcp-app.html", viewResult: whole, modelResult: text });
  });

  it("confirms the message shown at sending instead of adding it twice", () => {
    const t = new Transcript();
    expect(t.beginTurn("  Weather in Paris and Oslo?  ")).toBe(true);
    expect(t.busy).toBe(true);
    expect(t.items[0]).toMatchObject({ kind: "user", pending: true });
    run(fullTurn.slice(0, 2), t);
    expect(t.items).toHaveLength(1);
    expect(t.items[0]).toMatchObject({ kind: "user", text: "Weather in Paris and Oslo?", pending: false });
  });

  it("marks a denied call denied", () => {
    const t = run([
      ev.user("x"),
      ev.step(1),
      ev.assistant([{ type: "tool_use", id: "d1", name: "demo__wipe", arguments: {} }]),
      ev.callStarted("d1", "demo__wipe", "demo", "wipe", {}),
      ev.approvalRequested("d1", "demo", "wipe", {}),
      ev.approvalResolved("d1", "deny"),
    ]);
    expect(call(t, "d1").status).toBe("denied");
    run([ev.finished("d1", "denied", { content: [textBlock("The user denied this tool call.")], isError: true }, null, 3, "The user denied this tool call.")], t);
    expect(call(t, "d1")).toMatchObject({ status: "denied", viewResult: null, error: "The user denied this tool call." });
  });
});

describe("Transcript: interrupted and failed replies", () => {
  it("keeps an interrupted reply's text with its error", () => {
    const t = run([
      ev.user("Tell me a story"),
      ev.step(1),
      ev.text("Once upon a "),
      ev.assistant([{ type: "text", text: "Once upon a " }], true),
      ev.error("the connection was cut: unexpected EOF"),
      ev.done("error"),
    ]);
    const [a] = assistants(t);
    expect(a).toMatchObject({ text: "Once upon a ", status: "interrupted", error: "the connection was cut: unexpected EOF" });
    expect(hasBubble(a)).toBe(true);
    expect(t.busy).toBe(false);
  });

  it("fails a step whose request failed before anything arrived", () => {
    const t = run([
      ev.user("Hi"),
      ev.step(1),
      ev.retrying(2, 1000, "server_error", "server error (HTTP 503): overloaded"),
      ev.error("server error (HTTP 503): overloaded"),
      ev.done("error"),
    ]);
    const [a] = assistants(t);
    expect(a).toMatchObject({ text: "", status: "failed", error: "server error (HTTP 503): overloaded", retry: null });
    expect(hasBubble(a)).toBe(false);
  });

  it("attaches the step-limit error to the last complete message", () => {
    const t = run([
      ev.user("Loop"),
      ev.step(1),
      ev.assistant([{ type: "tool_use", id: "l1", name: "demo__echo", arguments: {} }]),
      ev.callStarted("l1", "demo__echo", "demo", "echo", {}),
      ev.running("l1"),
      ev.finished("l1", "ok", { content: [textBlock("echo")], isError: false }, { content: [textBlock("echo")] }, 5),
      ev.error("stopped after 1 model requests: the model kept calling tools (the step limit)"),
      ev.done("step_limit"),
    ]);
    const [a] = assistants(t);
    expect(a.status).toBe("complete");
    expect(a.error).toContain("step limit");
    expect(hasBubble(a)).toBe(false);
  });

  it("marks a reply stopped mid-way interrupted, and calls that never ran interrupted", () => {
    const t = run([
      ev.user("Go"),
      ev.step(1),
      ev.text("Starting"),
      ev.callStreaming("s1", "demo__slow", '{"n":'),
      ev.assistant([{ type: "text", text: "Starting" }, { type: "tool_use", id: "s1", name: "demo__slow", arguments: '{"n":' }], true),
      ev.done("cancelled"),
    ]);
    expect(assistants(t)[0].status).toBe("interrupted");
    expect(call(t, "s1").status).toBe("interrupted");
    expect(t.busy).toBe(false);
  });

  it("marks a step stopped before anything arrived interrupted, without a bubble", () => {
    const t = run([ev.user("Go"), ev.step(1), ev.done("cancelled")]);
    const [a] = assistants(t);
    expect(a.status).toBe("interrupted");
    expect(hasBubble(a)).toBe(false);
  });

  it("shows an error with no message of the turn as an error item", () => {
    const t = run([ev.user("Go"), ev.error("something broke"), ev.done("error")]);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "error"]);
  });

  it("says why a message could not be sent", () => {
    const t = new Transcript();
    t.beginTurn("hello");
    t.failTurn("The message could not be sent: the store is gone");
    expect(t.busy).toBe(false);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "error"]);
  });
});

describe("Transcript: retrying", () => {
  it("shows a transient notice on the streaming message until text arrives", () => {
    const t = run([ev.user("Hi"), ev.step(1), ev.retrying(2, 2500, "rate_limited", "rate limited (HTTP 429): Rate limit reached")]);
    const [a] = assistants(t);
    expect(a.retry).toEqual({ attempt: 2, waitMs: 2500, kind: "rate_limited", reason: "rate limited (HTTP 429): Rate limit reached" });
    expect(retryText(a.retry!)).toBe("Rate limited; retrying in 3 s (attempt 2)");
    run([ev.text("Hello")], t);
    expect(assistants(t)[0].retry).toBeNull();
  });
});

describe("Transcript: the no-model path", () => {
  const events = [
    ev.user("Hello?"),
    ev.step(1),
    ev.error("No model can answer: no API key for openai (set OPENAI_API_KEY)"),
    ev.done("error"),
  ];
  it("shows the reason where the reply would be, without inventing a reply", () => {
    const t = new Transcript();
    t.beginTurn("Hello?");
    run(events, t);
    expect(t.busy).toBe(false);
    expect(t.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "Hello?"],
      ["assistant", ""],
    ]);
    const [a] = assistants(t);
    expect(a).toMatchObject({ status: "failed", error: "No model can answer: no API key for openai (set OPENAI_API_KEY)" });
    expect(hasBubble(a)).toBe(false);
  });
  it("loads the same from the store", () => {
    const loaded = new Transcript();
    loaded.load(record(events));
    expect(shown(loaded.items)).toEqual(shown(run(events).items));
  });
});

describe("Transcript: loading a stored conversation", () => {
  it("shows a message's attachments, live and reopened", () => {
    const attached: TurnEvent[] = [
      ev.turnStarted("c1"),
      {
        type: "user_message",
        message: {
          role: "user",
          parts: [
            { type: "text", text: "Compare" },
            { type: "attachment", server: "docs", content: { type: "resource", resource: { uri: "file:///a/plan.md", mimeType: "text/markdown", text: "# Plan" } } },
            { type: "attachment", server: "everything", content: { type: "image", mimeType: "image/png", data: "iVBOR" } },
          ],
        },
      },
      ev.step(1),
      ev.text("Done"),
      ev.assistant([{ type: "text", text: "Done" }]),
      ev.done("end_turn", "Done"),
    ];
    const chips = (t: Transcript) => t.items.flatMap((i) => (i.kind === "user" ? i.attachments.map((a) => [a.label, a.server, a.image ?? null]) : []));
    const expected = [
      ["plan.md", "docs", null],
      ["image", "everything", "data:image/png;base64,iVBOR"],
    ];
    expect(chips(run(attached))).toEqual(expected);
    const loaded = new Transcript();
    loaded.load(record(attached));
    expect(chips(loaded)).toEqual(expected);
  });

  it("rebuilds the same items as the live turn", () => {
    const live = run(fullTurn);
    const loaded = new Transcript();
    loaded.load(record(fullTurn));
    expect(shown(loaded.items)).toEqual(shown(live.items));
    expect(loaded.busy).toBe(false);
  });

  it("rebuilds interrupted, failed and denied turns the same", () => {
    const turns: TurnEvent[] = [
      ...[ev.user("A"), ev.step(1), ev.text("Half"), ev.assistant([{ type: "text", text: "Half" }], true), ev.error("cut"), ev.done("error")],
      ...[ev.user("B"), ev.step(1), ev.error("HTTP 500"), ev.done("error")],
      ...[
        ev.user("C"),
        ev.step(1),
        ev.assistant([{ type: "tool_use", id: "d1", name: "nope", arguments: {} }, { type: "tool_use", id: "d2", name: "demo__wipe", arguments: {} }]),
        ev.callStarted("d1", "nope", null, null, {}),
        ev.finished("d1", "failed", { content: [textBlock('There is no tool named "nope".')], isError: true }, null, 0, 'There is no tool named "nope".'),
        ev.callStarted("d2", "demo__wipe", "demo", "wipe", {}),
        ev.approvalRequested("d2", "demo", "wipe", {}),
        ev.approvalResolved("d2", "deny"),
        ev.finished("d2", "denied", { content: [textBlock("The user denied this tool call.")], isError: true }, null, 2, "The user denied this tool call."),
        ev.toolResults([]),
        ev.step(2),
        ev.text("OK."),
        ev.assistant([{ type: "text", text: "OK." }]),
        ev.done("end_turn"),
      ],
      ...[ev.user("D"), ev.step(1), ev.done("cancelled")],
    ];
    const loaded = new Transcript();
    loaded.load(record(turns));
    expect(shown(loaded.items)).toEqual(shown(run(turns).items));
  });

  it("shows an interrupted tool call on its card and no bubble for the tool message", () => {
    const stored: StoredConversation = {
      viewUris: {},
      earlier: false,
      scroll: null,
      conversation: { id: "c9", title: "Crash", createdAt: 1, updatedAt: 2 },
      running: false,
      messages: [
        { id: 1, conversationId: "c9", role: "user", parts: [{ type: "text", text: "Two forecasts" }], status: "complete", error: null, createdAt: 1, updatedAt: 1 },
        {
          id: 2,
          conversationId: "c9",
          role: "assistant",
          parts: [
            { type: "text", text: "Checking both." },
            { type: "tool_use", id: "k1", name: "demo__forecast", arguments: parisArgs },
            { type: "tool_use", id: "k2", name: "demo__forecast", arguments: osloArgs },
          ],
          status: "complete",
          error: null,
          createdAt: 1,
          updatedAt: 1,
        },
        {
          id: 3,
          conversationId: "c9",
          role: "tool",
          parts: [{ type: "tool_result", tool_use_id: "k1", content: parisModel.content, is_error: false }],
          status: "complete",
          error: null,
          createdAt: 1,
          updatedAt: 1,
        },
        { id: 4, conversationId: "c9", role: "assistant", parts: [{ type: "text", text: "Paris is sun" }], status: "interrupted", error: null, createdAt: 1, updatedAt: 1 },
      ],
      toolCalls: [
        {
          id: 11, conversationId: "c9", messageId: 2, callId: "k2", server: "demo", tool: "forecast", arguments: osloArgs,
          status: "interrupted", modelFacing: null, viewFacing: null, error: null, durationMs: null, createdAt: 1, updatedAt: 1, finishedAt: null, allowedBy: null,
        },
        {
          id: 10, conversationId: "c9", messageId: 2, callId: "k1", server: "demo", tool: "forecast", arguments: parisArgs,
          status: "ok", modelFacing: parisModel, viewFacing: parisView, error: null, durationMs: 900, createdAt: 1, updatedAt: 1, finishedAt: 2, allowedBy: "once",
        },
      ],
    };
    const t = new Transcript();
    t.load(stored);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "assistant", "tool-call", "tool-call", "assistant"]);
    expect(t.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "Two forecasts"],
      ["assistant", "Checking both."],
      ["assistant", "Paris is sun"],
    ]);
    // Cards follow the order the model asked for them.
    expect(calls(t).map((c) => [c.callId, c.name, c.server, c.tool, c.status])).toEqual([
      ["k1", "demo__forecast", "demo", "forecast", "ok"],
      ["k2", "demo__forecast", "demo", "forecast", "interrupted"],
    ]);
    expect(call(t, "k1")).toMatchObject({ modelResult: parisModel, viewResult: parisView, durationMs: 900 });
    expect(assistants(t)[1].status).toBe("interrupted");
    expect(t.busy).toBe(false);
  });

  it("treats unfinished work of a conversation that is not running as interrupted", () => {
    const partial = fullTurn.slice(0, 18); // c1 running, c2 awaiting approval, no done
    const loaded = new Transcript();
    loaded.load(record(partial));
    expect(calls(loaded).map((c) => c.status)).toEqual(["interrupted", "interrupted"]);
  });

  it("continues a running turn from where the store left it", () => {
    const partial = fullTurn.slice(0, 18);
    const t = new Transcript();
    t.load(record(partial, { running: true }), ["c2"]);
    expect(t.busy).toBe(true);
    expect(calls(t).map((c) => c.status)).toEqual(["running", "awaiting-approval"]);
    run(fullTurn.slice(18), t);
    expect(shown(t.items)).toEqual(shown(run(fullTurn).items));
    expect(t.busy).toBe(false);
  });

  it("keeps streaming into the message a running turn is writing", () => {
    const t = new Transcript();
    t.load(record([ev.user("Hi"), ev.step(1), ev.text("Hel")], { running: true }));
    expect(assistants(t)[0]).toMatchObject({ text: "Hel", status: "streaming" });
    run([ev.text("lo"), ev.assistant([{ type: "text", text: "Hello" }]), ev.done("end_turn")], t);
    expect(assistants(t)).toHaveLength(1);
    expect(assistants(t)[0]).toMatchObject({ text: "Hello", status: "complete" });
  });
});

describe("Transcript: user messages and notices", () => {
  it("keeps trimmed user messages and refuses blank ones", () => {
    const t = new Transcript();
    expect(t.addUserMessage("  hello \n")).toBe(true);
    expect(t.addUserMessage("   \n ")).toBe(false);
    expect(t.beginTurn("  ")).toBe(false);
    expect(t.messages.map((m) => [m.role, m.text])).toEqual([["user", "hello"]]);
  });
  it("clears everything for a new chat", () => {
    const t = new Transcript();
    t.addUserMessage("a");
    t.addNotice("info", "n");
    expect(t.notices.map((n) => [n.kind, n.text])).toEqual([["info", "n"]]);
    run([ev.step(1)], t);
    t.clear();
    expect(t.messages).toEqual([]);
    expect(t.notices).toEqual([]);
    expect(t.items).toEqual([]);
    expect(t.busy).toBe(false);
  });
});

describe("isSendKey", () => {
  const key = (over: Partial<KeyboardEvent>) =>
    ({ key: "Enter", shiftKey: false, isComposing: false, altKey: false, ctrlKey: false, metaKey: false, ...over }) as KeyboardEvent;
  it("sends on Enter only", () => {
    expect(isSendKey(key({}))).toBe(true);
    expect(isSendKey(key({ shiftKey: true }))).toBe(false);
    expect(isSendKey(key({ isComposing: true }))).toBe(false);
    expect(isSendKey(key({ key: "a" }))).toBe(false);
  });
});

describe("Transcript: running the last turn again", () => {
  const answered: TurnEvent[] = [
    ev.user("one"),
    ev.step(1),
    ev.text("first"),
    ev.assistant([{ type: "text", text: "first" }]),
    ev.done("end_turn", "first"),
    ev.user("two"),
    ev.step(1),
    ev.assistant([{ type: "tool_use", id: "t1", name: "demo__chart", arguments: {} }]),
    ev.callStarted("t1", "demo__chart", "demo", "chart", {}),
    ev.finished("t1", "ok", parisModel, parisView, 3),
    ev.step(2),
    ev.text("second"),
    ev.assistant([{ type: "text", text: "second" }]),
    ev.done("end_turn", "second"),
  ];
  const kinds = (t: Transcript) => t.items.map((i) => i.kind);

  it("finds the last user message and where Retry goes: the last reply of the last turn", () => {
    const t = run(answered);
    expect(lastUserIndex(t.items)).toBe(2);
    expect(retrySpot(t.items)).toEqual({ index: 5, on: "reply" });
    expect(lastUserIndex([])).toBe(-1);
    expect(retrySpot([])).toBeNull();
  });

  it("offers no rewind over a tools-panel run made after the last message", () => {
    const t = run(answered);
    const user = lastUserIndex(t.rows);
    expect(panelRunAfter(t.rows, user)).toBe(false); // the model's own call t1 is part of the turn
    const ran = run([...answered, ev.callStarted("run-0123456789abcdef", "demo__chart", "demo", "chart", {})]);
    expect(panelRunAfter(ran.rows, lastUserIndex(ran.rows))).toBe(true);
  });

  it("puts Retry on the last turn's error when it has one (a reply's, or an error item)", () => {
    const failed = run([...answered, ev.user("three"), ev.step(1), ev.text("Hal"), ev.error("the connection was cut"), ev.done("error")]);
    expect(retrySpot(failed.items)).toEqual({ index: 7, on: "error" });
    const cut = run([...answered, ev.user("three"), ev.error("no model"), ev.done("error")]);
    expect(kinds(cut).slice(6)).toEqual(["user", "error"]);
    expect(retrySpot(cut.items)).toEqual({ index: 7, on: "error" });
  });

  it("offers no Retry for a turn with no reply at all (stopped before the model said anything)", () => {
    const t = run([...answered, ev.user("three"), ev.done("cancelled")]);
    expect(retrySpot(t.items)).toBeNull();
  });

  it("holds the old turn while the back end drops it, then shows the message being sent", () => {
    const t = run(answered);
    t.holdForRewind();
    expect(t.busy).toBe(true);
    expect(t.items).toHaveLength(6);
    t.rewind(" two, again ");
    expect(kinds(t)).toEqual(["user", "assistant", "user"]);
    expect(t.items[2]).toMatchObject({ text: "two, again", pending: true, unsent: false });
    // The new turn's events confirm it and stream after it.
    for (const e of [ev.user("two, again"), ev.step(1), ev.text("third")]) t.apply(e);
    expect(t.messages.map((m) => m.text)).toEqual(["one", "first", "two, again", "third"]);
    expect(t.items[2]).toMatchObject({ pending: false });
    expect(t.busy).toBe(true);
  });

  it("keeps everything and says why when running the turn again failed", () => {
    const t = run(answered);
    t.holdForRewind();
    t.cancelRewind("Could not send the message again: busy");
    expect(t.busy).toBe(false);
    expect(kinds(t)).toEqual(["user", "assistant", "user", "assistant", "tool-call", "assistant", "notice"]);
  });

  it("marks a message that could not be sent as unsent; dropping the last turn removes it and its error", () => {
    const t = run(answered);
    t.beginTurn("three");
    t.failTurn("The message could not be sent: locked");
    expect(t.items.at(-2)).toMatchObject({ kind: "user", text: "three", unsent: true, pending: false });
    expect(t.items.filter((i) => i.kind === "user" && i.unsent)).toHaveLength(1);
    expect(t.dropLastTurn()).toBe("three");
    expect(t.items).toHaveLength(6);
    expect(new Transcript().dropLastTurn()).toBeNull();
  });

  it("estimates taller items for longer text, and a card with a view taller than one without", () => {
    const t = run([...answered, ev.callStarted("t2", "demo__chart", "demo", "chart", {}, "ui://demo/chart.html")]);
    const [user, , , , plainCard, , viewCard] = t.items;
    const long = { ...user, text: "word ".repeat(200) } as typeof user;
    expect(estimatedHeight(long)).toBeGreaterThan(estimatedHeight(user));
    expect(estimatedHeight(viewCard)).toBeGreaterThan(estimatedHeight(plainCard));
    expect(estimatedHeight({ ...user, text: "a\nb\nc" } as typeof user)).toBeGreaterThan(estimatedHeight(user));
  });

  it("estimates a tool call's row from its view, known only once the call starts", () => {
    const view = "ui://demo/chart.html";
    const rowOf = (t: Transcript, callId: string) => t.rows.find((r) => r.callId === callId)!;
    const withView = estimatedHeight({ ...call(run([ev.callStarted("x", "demo__chart", "demo", "chart", {}, view)]), "x") });
    const without = estimatedHeight({ ...call(run([ev.callStarted("x", "demo__chart", "demo", "chart", {}, null)]), "x") });
    expect(withView).toBeGreaterThan(without);

    // Streamed first (no view known yet), then started with one: the row is estimated again.
    const t = run([ev.turnStarted(), ev.user("Chart it"), ev.step(1), ev.callStreaming("c1", "demo__chart", "{}"), ev.callStreaming("c2", "demo__sum", "{}")]);
    expect(rowOf(t, "c1").estimate).toBe(without);
    const revision = t.listRevision;
    t.apply(ev.callStarted("c1", "demo__chart", "demo", "chart", {}, view));
    expect(rowOf(t, "c1").estimate).toBe(withView);
    expect(t.listRevision).toBeGreaterThan(revision);
    t.apply(ev.callStarted("c2", "demo__sum", "demo", "sum", {}, null));
    expect(rowOf(t, "c2").estimate).toBe(without);

    // Started without streaming first: the same.
    const direct = run([ev.turnStarted(), ev.user("Chart it"), ev.step(1), ev.callStarted("c3", "demo__chart", "demo", "chart", {}, view)]);
    expect(rowOf(direct, "c3").estimate).toBe(withView);
  });
});

describe("Transcript: a long conversation a page at a time", () => {
  /** Turn `i`: a question, a tool call (`t{i}`), its result, the answer. */
  const turn = (i: number, finished = true): TurnEvent[] => {
    const args = { n: i };
    const model = { content: [textBlock(`result ${i}`)], isError: false };
    const start = [
      ev.turnStarted(),
      ev.user(`question ${i}`),
      ev.step(1),
      ev.text(`Looking ${i}.`),
      ev.assistant([
        { type: "text", text: `Looking ${i}.` },
        { type: "tool_use", id: `t${i}`, name: "demo__count", arguments: args },
      ]),
      ev.callStarted(`t${i}`, "demo__count", "demo", "count", args),
      ev.running(`t${i}`),
    ];
    if (!finished) return start;
    return [
      ...start,
      ev.finished(`t${i}`, "ok", model, model, 5),
      ev.toolResults([{ type: "tool_result", tool_use_id: `t${i}`, content: model.content, is_error: false }]),
      ev.step(2),
      ev.text(`Answer ${i}.`),
      ev.assistant([{ type: "text", text: `Answer ${i}.` }]),
      ev.done("end_turn", `Answer ${i}.`),
    ];
  };

  /** The turns before the `n`-th user message, and those from it on, as the store pages them. */
  function split(stored: StoredConversation, n: number): [StoredConversation, StoredConversation] {
    const cut = stored.messages.filter((m) => m.role === "user")[n].id;
    const part = (keep: (id: number) => boolean, earlier: boolean): StoredConversation => ({
      ...stored,
      messages: stored.messages.filter((m) => keep(m.id)),
      toolCalls: stored.toolCalls.filter((c) => keep(c.messageId)),
      earlier,
    });
    return [part((id) => id < cut, false), part((id) => id >= cut, true)];
  }

  /** Rows 100 px tall each, as the windowing lays them out. */
  const tops = (t: Transcript) => layout(t.rows.map(() => 100));

  it("keeps the reader's place by stored message and count from the end, and finds it after a restart", () => {
    const all = record([0, 1, 2, 3, 4].flatMap((i) => turn(i)));
    const t = new Transcript();
    t.load(all);
    // Rows per turn: question, "Looking", the call, the answer. The top 30 px into turn 2's call.
    const callRow = t.items.findIndex((i) => i.kind === "tool-call" && i.callId === "t2");
    const place = scrollPositionAt(t.rows, tops(t), callRow * 100 + 30)!;
    expect(place).toEqual({ messageId: t.rows[callRow].messageId, fromEnd: t.rows.length - 1 - callRow, within: 30 });
    expect(place.messageId).not.toBeNull();
    // Reopened with only the last turns loaded: the place is in an earlier page.
    const [before, end] = split(all, 3);
    const reopened = new Transcript();
    reopened.load(end);
    expect(rowOfScrollPosition(reopened.rows, place)).toBe("earlier");
    reopened.prepend(before);
    expect(rowOfScrollPosition(reopened.rows, place)).toBe(callRow);
    // The call's row, not the "Looking" text of the same stored message.
    expect(reopened.rows[callRow - 1].messageId).toBe(place.messageId);
  });

  it("keeps the place of a turn run in this window by its count from the end", () => {
    const live = run([0, 1, 2].flatMap((i) => turn(i)));
    expect(live.rows.every((r) => r.messageId === null)).toBe(true);
    live.addNotice("info", "a note of the window, not of the conversation");
    const place = scrollPositionAt(live.rows, tops(live), 4 * 100 + 10)!;
    expect(place).toEqual({ messageId: null, fromEnd: 7, within: 10 });
    const loaded = new Transcript();
    loaded.load(record([0, 1, 2].flatMap((i) => turn(i))));
    expect(loaded.items[rowOfScrollPosition(loaded.rows, place) as number]).toMatchObject({ kind: "user", text: "question 1" });
    // On a window note the place is the next item of the conversation.
    const onNote = scrollPositionAt(live.rows, tops(live), (live.rows.length - 1) * 100 + 50)!;
    expect(onNote).toMatchObject({ fromEnd: 0, within: 50 + 100 });
  });

  it("opens with the last turns and puts the earlier ones in front as they load", () => {
    const turns = [0, 1, 2, 3, 4].flatMap((i) => turn(i));
    const all = record(turns);
    const [before, end] = split(all, 3);
    const t = new Transcript();
    t.load(end);
    expect(t.earlier).toBe(true);
    expect(t.firstMessageId).toBe(end.messages[0].id);
    expect(t.items[0]).toMatchObject({ kind: "user", text: "question 3" });
    const added = t.prepend(before);
    expect(added).toBe(t.items.length - 8);
    expect(t.earlier).toBe(false);
    expect(t.firstMessageId).toBe(all.messages[0].id);
    expect(t.rows.map((r) => r.id)).toEqual(t.items.map((i) => i.id));
    const whole = new Transcript();
    whole.load(all);
    expect(shown(t.items)).toEqual(shown(whole.items));
  });

  it("keeps following a turn under way at the end when earlier turns come in front", () => {
    const turns = [...[0, 1, 2].flatMap((i) => turn(i)), ...turn(3, false)];
    const [before, end] = split(record(turns, { running: true }), 2);
    const t = new Transcript();
    t.load({ ...end, running: true });
    expect(call(t, "t3").status).toBe("running");
    t.prepend(before);
    expect(call(t, "t0").status).toBe("ok");
    const model = { content: [textBlock("result 3")], isError: false };
    run(
      [
        ev.finished("t3", "ok", model, model, 5),
        ev.toolResults([{ type: "tool_result", tool_use_id: "t3", content: model.content, is_error: false }]),
        ev.step(2),
        ev.text("Answer 3."),
      ],
      t,
    );
    expect(call(t, "t3").status).toBe("ok");
    expect(call(t, "t3").modelResult).toEqual(model);
    expect(assistants(t).at(-1)?.text).toBe("Answer 3.");
    expect(assistants(t).filter((a) => a.text === "Answer 3.")).toHaveLength(1);
    expect(t.items.filter((i) => i.kind === "user").map((i) => (i.kind === "user" ? i.text : ""))).toEqual([
      "question 0",
      "question 1",
      "question 2",
      "question 3",
    ]);
  });

  it("adds nothing for an empty page, and says nothing is earlier", () => {
    const [, end] = split(record([0, 1].flatMap((i) => turn(i))), 1);
    const t = new Transcript();
    t.load(end);
    const count = t.items.length;
    expect(t.prepend({ ...end, messages: [], toolCalls: [], earlier: false })).toBe(0);
    expect(t.items.length).toBe(count);
    expect(t.earlier).toBe(false);
  });
});

describe("Transcript: waiting for servers still starting", () => {
  const waiting = (servers: string[]): TurnEvent => ({ type: "waiting_for_servers", servers });
  const waited = (missing: { name: string; reason: string }[]): TurnEvent => ({ type: "servers_waited", missing });

  it("shows the wait after the message, and takes it away when every server started", () => {
    const t = run([ev.turnStarted(), ev.user("hi"), waiting(["jira", "github"])]);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "waiting"]);
    expect(t.items[1]).toMatchObject({ servers: ["jira", "github"] });
    run([waited([]), ev.step(1), ev.text("Hello.")], t);
    expect(t.items.map((i) => i.kind)).toEqual(["user", "assistant"]);
    expect(t.rows.map((r) => r.kind)).toEqual(["user", "assistant"]);
  });

  it("names the servers the turn went on without, and why", () => {
    const t = run([ev.user("hi"), waiting(["jira", "github"]), waited([{ name: "jira", reason: "exited with status 1" }, { name: "github", reason: "still starting" }])]);
    expect(t.notices).toEqual([
      { id: t.items[1].id, kind: "error", text: "Sent without jira (exited with status 1), github (still starting)." },
    ]);
    expect(t.rows[1].kind).toBe("notice");
    const skipped = run([ev.user("hi"), waiting(["slow"]), waited([{ name: "slow", reason: "still starting" }])]);
    expect(skipped.notices.map((n) => [n.kind, n.text])).toEqual([["info", "Sent without slow (still starting)."]]);
  });
});
