// A tools-panel run in the chat: it starts like a message (held events, a new conversation's
// id), shows the model's call's card, and comes back in its place when the conversation is
// reopened.
import { describe, expect, it, vi } from "vitest";
import type { ChatEvent, ModelInfo, StoredConversation, StoredMessage, ToolCallRecord } from "./api";
import { ChatSession, type ChatApi } from "./chat.svelte";
import { chatEvents, ev, record, textBlock } from "./testing/turns";
import { Transcript, type ToolCallItem } from "./transcript.svelte";
import { refused } from "./testing/errors";

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

function session() {
  let emit: (e: ChatEvent) => void = () => {};
  const fake = {
    sendMessage: vi.fn(async () => "c1"),
    sendPrompt: vi.fn(async () => "c1"),
    stopTurn: vi.fn(async () => true),
    sendWithoutWaiting: vi.fn(async () => true),
    openConversation: vi.fn(async (): Promise<StoredConversation> => record([])),
    earlierMessages: vi.fn(async (): Promise<StoredConversation> => record([])),
    listConversationPage: vi.fn(async () => ({ conversations: [], more: false })),
    teardownViews: vi.fn(async () => {}),
    modelInfo: vi.fn(async (): Promise<ModelInfo> => ({ provider: "openai", baseUrl: null, model: "m", keySource: null, error: null })),
    onChatEvent: vi.fn(async (handler: (e: ChatEvent) => void) => {
      emit = handler;
      return () => {};
    }),
    renameConversation: vi.fn(async () => {}),
    deleteConversation: vi.fn(async () => {}),
    retryTurn: vi.fn(async () => {}),
    editAndResend: vi.fn(async () => {}),
    listAgents: vi.fn(async () => []),
  } satisfies ChatApi;
  const chat = new ChatSession(fake);
  return { chat, fake, emit: (events: ChatEvent[]) => events.forEach((e) => emit(e)) };
}

const model = { content: [textBlock("42 files")], isError: false };
const runEvents = (callId: string) => [
  ev.callStarted(callId, "list_directory", "demo", "list_directory", { path: "/tmp" }, "ui://demo/dir.html"),
  ev.running(callId),
  ev.progress(callId, 1, 2),
  ev.finished(callId, "ok", model, { content: model.content, structuredContent: { count: 42 } }, 12),
  ev.done("end_turn"),
];

describe("ChatSession.runTool", () => {
  it("in a new chat: holds the run's events until the new conversation is known, then shows its card", async () => {
    const { chat, fake, emit } = session();
    await chat.start();
    const started = deferred<{ conversationId: string; callId: string }>();
    const start = vi.fn((_id: string | null) => started.promise);

    const result = chat.runTool(start);
    expect(start).toHaveBeenCalledWith(null);
    expect(chat.busy).toBe(true);
    emit(chatEvents("n1", runEvents("run-1").slice(0, 2)));
    expect(chat.transcript.items).toEqual([]);

    fake.listConversationPage.mockClear();
    started.resolve({ conversationId: "n1", callId: "run-1" });
    expect(await result).toBeNull();
    expect(chat.conversationId).toBe("n1");
    expect(fake.listConversationPage).toHaveBeenCalled();
    const card = chat.transcript.items[0] as ToolCallItem;
    expect([card.kind, card.callId, card.tool, card.status, card.uiResourceUri]).toEqual([
      "tool-call",
      "run-1",
      "list_directory",
      "running",
      "ui://demo/dir.html",
    ]);

    emit(chatEvents("n1", runEvents("run-1").slice(2, 3)));
    expect(card.progress).toEqual({ progress: 1, total: 2, message: null });
    emit(chatEvents("n1", runEvents("run-1").slice(3)));
    expect([card.status, card.modelResult, card.viewResult]).toEqual(["ok", model, { content: model.content, structuredContent: { count: 42 } }]);
    expect(chat.busy).toBe(false);
  });

  it("runs in the open conversation, and is stopped like a reply", async () => {
    const { chat, fake, emit } = session();
    await chat.start();
    await chat.open("c1");
    const start = vi.fn(async (id: string | null) => ({ conversationId: id ?? "?", callId: "run-2" }));
    expect(await chat.runTool(start)).toBeNull();
    expect(start).toHaveBeenCalledWith("c1");
    emit(chatEvents("c1", runEvents("run-2").slice(0, 2)));
    expect(chat.busy).toBe(true);
    expect(await chat.runTool(start)).toBe("A reply is being written in this conversation; stop it first.");
    expect(start).toHaveBeenCalledOnce();

    await chat.stop();
    expect(fake.stopTurn).toHaveBeenCalledWith("c1");
    emit(chatEvents("c1", [ev.finished("run-2", "cancelled", { content: [], isError: true }, null, 5, "cancelled"), ev.done("cancelled")]));
    expect(chat.busy).toBe(false);
    expect((chat.transcript.items[0] as ToolCallItem).status).toBe("cancelled");
  });

  it("says why a run could not start, and frees the conversation", async () => {
    const { chat } = session();
    await chat.start();
    const failure = await chat.runTool(async () => Promise.reject(refused("server", "server \"demo\" is not connected")));
    expect(failure).toBe('server "demo" is not connected');
    expect(chat.busy).toBe(false);
    expect(chat.conversationId).toBeNull();
    expect(chat.transcript.items).toEqual([]);
  });
});

describe("a reopened conversation with runs", () => {
  const message = (id: number, role: StoredMessage["role"], parts: StoredMessage["parts"]): StoredMessage => ({
    id,
    conversationId: "c1",
    role,
    parts,
    status: "complete",
    error: null,
    createdAt: 0,
    updatedAt: 0,
  });
  const call = (id: number, messageId: number, callId: string, tool: string): ToolCallRecord => ({
    id,
    conversationId: "c1",
    messageId,
    callId,
    server: "demo",
    tool,
    arguments: {},
    status: "ok",
    modelFacing: model,
    viewFacing: { content: model.content },
    error: null,
    durationMs: 3,
    createdAt: 0,
    updatedAt: 0,
    finishedAt: 0,
    allowedBy: "person",
  });

  it("shows each run's card where it was run, before and between the turns", () => {
    // What porthole_agent::record writes: a run's call belongs to an empty tool message.
    const stored: StoredConversation = {
      viewUris: {},
      earlier: false,
      scroll: null,
      conversation: { id: "c1", title: "Run system_monitor", createdAt: 0, updatedAt: 0 },
      messages: [
        message(1, "tool", []),
        message(2, "user", [{ type: "text", text: "what is using my CPU?" }]),
        message(3, "assistant", [
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "call_1", name: "sample_cpu", arguments: {} },
        ]),
        message(4, "tool", [{ type: "tool_result", tool_use_id: "call_1", content: model.content, is_error: false }]),
        message(5, "assistant", [{ type: "text", text: "Your browser." }]),
        message(6, "tool", []),
      ],
      toolCalls: [call(1, 1, "run-a", "system_monitor"), call(2, 3, "call_1", "sample_cpu"), call(3, 6, "run-b", "list_directory")],
      running: false,
    };
    const transcript = new Transcript();
    transcript.load(stored);
    expect(transcript.items.map((i) => (i.kind === "tool-call" ? `call ${i.callId} ${i.tool} ${i.status}` : `${i.kind} ${"text" in i ? i.text : ""}`))).toEqual([
      "call run-a system_monitor ok",
      "user what is using my CPU?",
      "assistant Let me look.",
      "call call_1 sample_cpu ok",
      "assistant Your browser.",
      "call run-b list_directory ok",
    ]);
  });
});
