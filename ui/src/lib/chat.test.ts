import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentSummary, AttachmentRef, ChatEvent, Conversation, ConversationList, ModelInfo, StoredConversation } from "./api";
import { CONVERSATION_PAGE, ChatSession, MODEL_LINE_WAIT_MS, TEARDOWN_WAIT_MS, type ChatApi } from "./chat.svelte";
import { chatEvents, ev, record } from "./testing/turns";
import { refused } from "./testing/errors";

/** A promise with its resolve/reject, for answering commands at a chosen moment. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

const flush = () => new Promise((r) => setTimeout(r, 0));
const page = (conversations: Conversation[], more = false): ConversationList => ({ conversations, more });

function fakeApi(over: Partial<ChatApi> = {}) {
  let emit: (e: ChatEvent) => void = () => {};
  const conversations: Conversation[] = [{ id: "c1", title: "Hello", createdAt: 1, updatedAt: 1 }];
  const model: ModelInfo = { provider: "openai", baseUrl: "https://api.openai.com/v1", model: "gpt-test", keySource: "env", error: null };
  const defaults = {
    sendMessage: vi.fn(async (_id: string | null, _text: string, _attachments?: AttachmentRef[]) => "c1"),
    sendPrompt: vi.fn(async (_id: string | null, _server: string, _name: string, _args: Record<string, string>) => "c1"),
    stopTurn: vi.fn(async (_id: string) => true),
    sendWithoutWaiting: vi.fn(async (_id: string) => true),
    openConversation: vi.fn(async (_id: string): Promise<StoredConversation> => record([])),
    earlierMessages: vi.fn(async (_id: string, _before: number): Promise<StoredConversation> => record([])),
    listConversationPage: vi.fn(async (_limit: number, _after: string | null) => page(conversations)),
    teardownViews: vi.fn(async (_id: string) => {}),
    renameConversation: vi.fn(async (_id: string, _title: string) => {}),
    deleteConversation: vi.fn(async (_id: string) => {}),
    retryTurn: vi.fn(async (_id: string) => {}),
    editAndResend: vi.fn(async (_id: string, _text: string) => {}),
    modelInfo: vi.fn(async () => model),
    listAgents: vi.fn(async (): Promise<AgentSummary[]> => []),
    onChatEvent: vi.fn(async (handler: (e: ChatEvent) => void) => {
      emit = handler;
      return () => {};
    }),
  };
  // Overrides are vi.fn mocks too.
  const fake = { ...defaults, ...over } as typeof defaults;
  return { fake, emit: (events: ChatEvent[]) => events.forEach((e) => emit(e)) };
}

describe("ChatSession", () => {
  it("loads the model line and the conversation list on start", async () => {
    const { fake } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    expect(fake.onChatEvent).toHaveBeenCalledOnce();
    expect(chat.model?.provider).toBe("openai");
    expect(chat.conversations.map((c) => c.id)).toEqual(["c1"]);
  });

  it("shows the conversation list once the model's line above it is there, so the list does not move under a click", async () => {
    const modelAnswer = deferred<ModelInfo>();
    const { fake } = fakeApi({ modelInfo: vi.fn(() => modelAnswer.promise) });
    const chat = new ChatSession(fake);
    let started = false;
    void chat.start().then(() => (started = true));
    await flush();
    // The store has answered; the keyring (the model's line) not yet.
    expect(fake.listConversationPage).toHaveBeenCalledOnce();
    expect(chat.conversations).toEqual([]);
    expect(chat.listed).toBe(false);
    modelAnswer.resolve({ provider: null, baseUrl: null, model: null, keySource: null, error: "no API key" });
    await flush();
    expect(chat.model?.error).toBe("no API key");
    expect(chat.conversations.map((c) => c.id)).toEqual(["c1"]);
    expect(chat.listed).toBe(true);
    expect(started).toBe(true);
  });

  it("counts a list that could not be read as read: the sidebar then says there are none", async () => {
    const { fake } = fakeApi({ listConversationPage: vi.fn(async () => Promise.reject(new Error("disk I/O error"))) });
    const chat = new ChatSession(fake);
    await chat.start();
    expect(chat.conversations).toEqual([]);
    expect(chat.listed).toBe(true);
  });

  it("shows the conversation list anyway when the model's line is held up (a keyring asking to be unlocked)", async () => {
    vi.useFakeTimers();
    try {
      const { fake } = fakeApi({ modelInfo: vi.fn(() => new Promise<ModelInfo>(() => {})) });
      const chat = new ChatSession(fake);
      void chat.start();
      await vi.advanceTimersByTimeAsync(MODEL_LINE_WAIT_MS - 1);
      expect(chat.conversations).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(chat.conversations.map((c) => c.id)).toEqual(["c1"]);
      expect(chat.model).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it("starts a new chat with the remote agent chosen for it, and says who an open chat is with", async () => {
    const { fake } = fakeApi({
      listAgents: vi.fn(async () => [{ name: "planner", url: "https://agents.example/planner" }]),
      sendMessage: vi.fn(async () => "new2"),
      openConversation: vi.fn(async (id: string) => ({ ...record([]), conversation: { id, title: "T", createdAt: 1, updatedAt: 1, agent: "planner" } })),
    });
    const chat = new ChatSession(fake);
    await chat.start();
    expect(chat.agents.map((a) => a.name)).toEqual(["planner"]);
    expect(chat.agent).toBeNull();
    chat.newChatAgent = "planner";
    expect(chat.agent).toBe("planner");
    chat.send("Plan my week");
    expect(fake.sendMessage).toHaveBeenCalledWith(null, "Plan my week", [], "planner");
    await flush();
    expect(chat.conversationId).toBe("new2");
    expect(chat.agent).toBe("planner");
    // A stored conversation is with the agent it was started with; a new chat keeps the choice.
    await chat.open("c1");
    expect(chat.agent).toBe("planner");
    await chat.newChat();
    expect(chat.agent).toBe("planner");
    chat.newChatAgent = null;
    expect(chat.agent).toBeNull();
  });

  it("says why the model cannot be asked about", async () => {
    const { fake } = fakeApi({ modelInfo: vi.fn(async () => Promise.reject("no back end")) });
    const chat = new ChatSession(fake);
    await chat.start();
    expect(chat.model?.error).toContain("no back end");
  });

  it("sends a first message, holds its events until the new id is known, then remembers the id", async () => {
    const sent = deferred<string>();
    const { fake, emit } = fakeApi({ sendMessage: vi.fn(() => sent.promise) });
    const chat = new ChatSession(fake);
    await chat.start();

    expect(chat.send("  Hi there ")).toBe(true);
    expect(fake.sendMessage).toHaveBeenCalledWith(null, "Hi there", [], null);
    expect(chat.busy).toBe(true);
    // Events can arrive before the command answers.
    emit(chatEvents("new1", [ev.turnStarted("new1"), ev.user("Hi there"), ev.step(1), ev.text("Hel")]));
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["Hi there"]);

    sent.resolve("new1");
    await flush();
    expect(chat.conversationId).toBe("new1");
    expect(chat.transcript.messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "Hi there"],
      ["assistant", "Hel"],
    ]);

    fake.listConversationPage.mockClear();
    emit(chatEvents("new1", [ev.text("lo"), ev.assistant([{ type: "text", text: "Hello" }]), ev.done("end_turn", "Hello")]));
    expect(chat.busy).toBe(false);
    expect(chat.transcript.messages.at(-1)?.text).toBe("Hello");
    expect(fake.listConversationPage).toHaveBeenCalled();

    // The next message goes to the same conversation.
    fake.sendMessage.mockImplementation(async () => "new1");
    chat.send("And again");
    expect(fake.sendMessage).toHaveBeenLastCalledWith("new1", "And again", [], null);
  });

  it("sends attachments with a message and shows them on it until the turn confirms them", async () => {
    const { fake, emit } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    const docs = [{ server: "docs", uri: "file:///notes/plan.md" }];
    expect(chat.send("  ", docs)).toBe(true);
    expect(fake.sendMessage).toHaveBeenCalledWith(null, "", docs, null);
    const pending = chat.transcript.items[0];
    expect(pending.kind === "user" && pending.attachments.map((a) => a.label)).toEqual(["plan.md"]);
    await flush();
    const content = { type: "resource", resource: { uri: "file:///notes/plan.md", mimeType: "text/markdown", text: "# Plan" } };
    emit(chatEvents("c1", [{ type: "user_message", message: { role: "user", parts: [{ type: "attachment", server: "docs", content }] } }]));
    const confirmed = chat.transcript.items[0];
    expect(confirmed.kind === "user" && confirmed.attachments).toEqual([
      { server: "docs", uri: "file:///notes/plan.md", label: "plan.md", mimeType: "text/markdown" },
    ]);
  });

  it("sends a prompt as the person's turn, or says why it could not", async () => {
    const { fake, emit } = fakeApi({
      sendPrompt: vi.fn(async () => Promise.reject(refused("server", "everything could not give prompt args-prompt: city is required"))),
    });
    const chat = new ChatSession(fake);
    await chat.start();
    expect(await chat.sendPrompt("everything", "args-prompt", {})).toBe("everything could not give prompt args-prompt: city is required");
    expect(chat.busy).toBe(false);
    expect(chat.transcript.items).toEqual([]);

    fake.sendPrompt.mockImplementation(async () => "p1");
    expect(await chat.sendPrompt("everything", "args-prompt", { city: "Oslo" })).toBeNull();
    expect(fake.sendPrompt).toHaveBeenLastCalledWith(null, "everything", "args-prompt", { city: "Oslo" });
    expect(chat.conversationId).toBe("p1");
    emit(chatEvents("p1", [ev.turnStarted("p1"), ev.user("What's weather in Oslo?")]));
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["What's weather in Oslo?"]);
    expect(await chat.sendPrompt("everything", "args-prompt", { city: "Rome" })).toContain("A reply is being written");
  });

  it("does not send while a reply is being written", async () => {
    const { fake } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    chat.send("one");
    expect(chat.send("two")).toBe(false);
    expect(fake.sendMessage).toHaveBeenCalledOnce();
  });

  it("ignores other conversations' events but refreshes the list when their turn is done", async () => {
    const { fake, emit } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    chat.send("mine");
    await flush();
    fake.listConversationPage.mockClear();
    emit(chatEvents("other", [ev.user("theirs"), ev.step(1), ev.text("not here"), ev.done("end_turn")]));
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["mine"]);
    expect(chat.busy).toBe(true);
    expect(fake.listConversationPage).toHaveBeenCalledOnce();
  });

  it("shows why a message could not be sent and frees the composer", async () => {
    const { fake } = fakeApi({ sendMessage: vi.fn(async () => Promise.reject(refused("busy", "a reply is still being written"))) });
    const chat = new ChatSession(fake);
    await chat.start();
    chat.send("hello");
    await flush();
    expect(chat.busy).toBe(false);
    expect(chat.transcript.items.at(-1)).toMatchObject({ kind: "error", text: "The message could not be sent: a reply is still being written" });
  });

  it("stops the open conversation's reply", async () => {
    const { fake, emit } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    chat.send("long task");
    await flush();
    await chat.stop();
    expect(fake.stopTurn).toHaveBeenCalledWith("c1");
    expect(chat.stopping).toBe(true);
    emit(chatEvents("c1", [ev.user("long task"), ev.step(1), ev.done("cancelled")]));
    expect(chat.stopping).toBe(false);
    expect(chat.busy).toBe(false);
  });

  it("stops a first message's reply as soon as its conversation is known", async () => {
    const sent = deferred<string>();
    const { fake } = fakeApi({ sendMessage: vi.fn(() => sent.promise) });
    const chat = new ChatSession(fake);
    await chat.start();
    chat.send("long task");
    await chat.stop();
    expect(fake.stopTurn).not.toHaveBeenCalled();
    sent.resolve("c7");
    await flush();
    expect(fake.stopTurn).toHaveBeenCalledWith("c7");
  });

  it("frees the composer when the back end says nothing is running", async () => {
    const { fake } = fakeApi({ stopTurn: vi.fn(async () => false) });
    const chat = new ChatSession(fake);
    await chat.start();
    chat.send("x");
    await flush();
    await chat.stop();
    expect(chat.busy).toBe(false);
  });

  it("starts a new chat: clears the transcript and forgets the conversation", async () => {
    const { fake, emit } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    chat.send("x");
    await flush();
    await chat.newChat();
    expect(fake.teardownViews).toHaveBeenCalledExactlyOnceWith("c1");
    expect(chat.conversationId).toBeNull();
    expect(chat.transcript.items).toEqual([]);
    expect(chat.busy).toBe(false);
    emit(chatEvents("c1", [ev.text("late")]));
    expect(chat.transcript.items).toEqual([]);
    chat.send("fresh");
    expect(fake.sendMessage).toHaveBeenLastCalledWith(null, "fresh", [], null);
  });

  it("opens a stored conversation, and shows the approval prompt of a call still waiting", async () => {
    const events = [
      ev.user("wipe it"),
      ev.step(1),
      ev.assistant([{ type: "tool_use", id: "w1", name: "demo__wipe", arguments: {} }]),
      ev.callStarted("w1", "demo__wipe", "demo", "wipe", {}),
      ev.approvalRequested("w1", "demo", "wipe", {}),
    ];
    const stored = record(events, { id: "c2", running: true });
    const opened = deferred<StoredConversation>();
    const { fake, emit } = fakeApi({ openConversation: vi.fn(() => opened.promise) });
    const chat = new ChatSession(fake);
    await chat.start();
    // The window saw the approval being asked while another conversation was open.
    emit(chatEvents("c2", events));

    const opening = chat.open("c2");
    expect(chat.loading).toBe(true);
    expect(chat.conversationId).toBe("c2");
    // A tool event that arrives while the store is read is applied after loading.
    emit(chatEvents("c2", [ev.approvalResolved("w1", "allow_once"), ev.running("w1")]));
    opened.resolve(stored);
    await opening;
    expect(chat.loading).toBe(false);
    expect(fake.openConversation).toHaveBeenCalledWith("c2");
    expect(chat.busy).toBe(true);
    const call = chat.transcript.items.find((i) => i.kind === "tool-call");
    expect(call).toMatchObject({ callId: "w1", status: "running" });
  });

  it("shows a still-waiting approval when reopening", async () => {
    const events = [
      ev.user("wipe it"),
      ev.step(1),
      ev.assistant([{ type: "tool_use", id: "w1", name: "demo__wipe", arguments: {} }]),
      ev.callStarted("w1", "demo__wipe", "demo", "wipe", {}),
      ev.approvalRequested("w1", "demo", "wipe", {}),
    ];
    const { fake, emit } = fakeApi({ openConversation: vi.fn(async () => record(events, { id: "c2", running: true })) });
    const chat = new ChatSession(fake);
    await chat.start();
    emit(chatEvents("c2", events));
    await chat.open("c2");
    expect(chat.transcript.items.find((i) => i.kind === "tool-call")).toMatchObject({ status: "awaiting-approval" });
  });


  it("loads the earlier turns of a long conversation before the first one shown, once", async () => {
    const first = [ev.user("first"), ev.step(1), ev.assistant([{ type: "text", text: "one" }]), ev.done("end_turn")];
    const second = [ev.user("second"), ev.step(1), ev.assistant([{ type: "text", text: "two" }]), ev.done("end_turn")];
    const all = record([...first, ...second], { id: "c2" });
    const end = { ...all, messages: all.messages.slice(2), earlier: true };
    const before = { ...all, messages: all.messages.slice(0, 2), earlier: false };
    const { fake } = fakeApi({
      openConversation: vi.fn(async () => end),
      earlierMessages: vi.fn(async () => before),
    });
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.open("c2");
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["second", "two"]);
    expect(await chat.loadEarlier()).toBe(2);
    expect(fake.earlierMessages).toHaveBeenCalledExactlyOnceWith("c2", end.messages[0].id);
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["first", "one", "second", "two"]);
    // Nothing is earlier now: no second request.
    expect(await chat.loadEarlier()).toBe(0);
    expect(fake.earlierMessages).toHaveBeenCalledOnce();
  });

  it("says when the earlier turns cannot be loaded, and stops asking", async () => {
    const all = record([ev.user("only"), ev.step(1), ev.assistant([{ type: "text", text: "reply" }]), ev.done("end_turn")], { id: "c2" });
    const { fake } = fakeApi({
      openConversation: vi.fn(async () => ({ ...all, earlier: true })),
      earlierMessages: vi.fn(async () => Promise.reject(refused("store", "disk I/O error"))),
    });
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.open("c2");
    expect(await chat.loadEarlier()).toBe(0);
    expect(chat.transcript.earlier).toBe(false);
    expect(chat.transcript.notices.map((n) => n.text)).toEqual(["Could not load the earlier messages: disk I/O error"]);
  });

  it("asks the open conversation's turn to go on without the servers still starting", async () => {
    const { fake } = fakeApi({ openConversation: vi.fn(async () => record([], { id: "c2", running: true })) });
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.sendWithoutWaiting();
    expect(fake.sendWithoutWaiting).not.toHaveBeenCalled();
    await chat.open("c2");
    await chat.sendWithoutWaiting();
    expect(fake.sendWithoutWaiting).toHaveBeenCalledExactlyOnceWith("c2");
  });

  it("says when a conversation cannot be opened", async () => {
    const { fake } = fakeApi({ openConversation: vi.fn(async () => Promise.reject(refused("not_found", "no conversation c404"))) });
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.open("c404");
    expect(chat.loading).toBe(false);
    expect(chat.transcript.notices.map((n) => n.text)).toEqual(["Could not open the conversation: no conversation c404"]);
  });
});

describe("ChatSession: leaving a conversation tears its views down first", () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  /** A session showing stored conversation c1 (one user message), with a log of what happened. */
  async function showingC1(over: Partial<ChatApi> = {}) {
    const log: string[] = [];
    const teardown = deferred<void>();
    const { fake, emit } = fakeApi({
      openConversation: vi.fn(async (id: string) => {
        log.push(`open ${id}`);
        return record([ev.user(`in ${id}`)], { id });
      }),
      teardownViews: vi.fn((id: string) => {
        log.push(`teardown ${id}`);
        return teardown.promise.then(() => void log.push(`torn down ${id}`));
      }),
      ...over,
    });
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.open("c1");
    expect(fake.teardownViews).not.toHaveBeenCalled();
    const clear = chat.transcript.clear.bind(chat.transcript);
    // (Loading what the store read clears the transcript again: only clears before the read count.)
    vi.spyOn(chat.transcript, "clear").mockImplementation(() => {
      if (!log.some((l) => l.startsWith("open "))) log.push("clear");
      clear();
    });
    log.length = 0;
    return { chat, fake, emit, log, teardown };
  }

  it("New chat: awaits teardownViews of the conversation on screen before clearing its transcript", async () => {
    const { chat, fake, log, teardown } = await showingC1();
    const leaving = chat.newChat();
    expect(fake.teardownViews).toHaveBeenCalledExactlyOnceWith("c1");
    // Meanwhile the conversation, and its views' frames, stay on screen.
    expect(chat.switching).toBe(true);
    expect(chat.conversationId).toBe("c1");
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["in c1"]);
    expect(chat.send("not now")).toBe(false);
    await flush();
    expect(log).toEqual(["teardown c1"]);

    teardown.resolve();
    await leaving;
    expect(log).toEqual(["teardown c1", "torn down c1", "clear"]);
    expect(chat.switching).toBe(false);
    expect(chat.conversationId).toBeNull();
    expect(chat.transcript.items).toEqual([]);
  });

  it("open: awaits teardownViews of the conversation on screen before replacing its transcript", async () => {
    const { chat, fake, log, teardown } = await showingC1();
    const opening = chat.open("c2");
    await flush();
    expect(log).toEqual(["teardown c1"]);
    expect(chat.conversationId).toBe("c1");
    expect(fake.openConversation).toHaveBeenCalledTimes(1);

    teardown.resolve();
    await opening;
    expect(log).toEqual(["teardown c1", "torn down c1", "clear", "open c2"]);
    expect(chat.conversationId).toBe("c2");
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["in c2"]);
  });

  it("switches anyway when teardownViews fails", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { chat, log } = await showingC1({ teardownViews: vi.fn(async () => Promise.reject(refused("forbidden", "no such window"))) });
    await chat.open("c2");
    expect(log).toEqual(["clear", "open c2"]);
    expect(chat.switching).toBe(false);
    expect(chat.conversationId).toBe("c2");
    expect(chat.transcript.notices).toEqual([]);
    expect(warn).toHaveBeenCalled();

    await chat.newChat();
    expect(chat.conversationId).toBeNull();
    expect(chat.transcript.items).toEqual([]);
  });

  it("switches anyway when teardownViews never answers", async () => {
    vi.useFakeTimers();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { chat, log } = await showingC1({ teardownViews: vi.fn(() => new Promise<void>(() => {})) });
    let done = false;
    void chat.newChat().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(TEARDOWN_WAIT_MS - 1);
    expect(done).toBe(false);
    expect(chat.conversationId).toBe("c1");
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
    expect(log).toEqual(["clear"]);
    expect(chat.conversationId).toBeNull();
    expect(warn).toHaveBeenCalled();
  });

  it("lets the latest New chat or open win while a teardown is under way, tearing down once", async () => {
    const { chat, fake, log, teardown } = await showingC1();
    const first = chat.open("c2");
    const second = chat.newChat();
    const third = chat.open("c3");
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(fake.teardownViews).toHaveBeenCalledExactlyOnceWith("c1");

    teardown.resolve();
    await Promise.all([first, second, third]);
    expect(log).toEqual(["teardown c1", "torn down c1", "clear", "open c3"]);
    expect(chat.conversationId).toBe("c3");
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["in c3"]);
  });

  it("drops the answer of a conversation still being read when it is left", async () => {
    const read = deferred<StoredConversation>();
    const { fake } = fakeApi({ openConversation: vi.fn(() => read.promise) });
    const chat = new ChatSession(fake);
    await chat.start();
    const opening = chat.open("c1");
    const leaving = chat.open("c2");
    read.resolve(record([ev.user("late c1")], { id: "c1" }));
    await opening;
    fake.openConversation.mockImplementation(async () => record([ev.user("in c2")], { id: "c2" }));
    await leaving;
    expect(fake.teardownViews).toHaveBeenCalledExactlyOnceWith("c1");
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["in c2"]);
  });

  it("has nothing to tear down in a new chat whose conversation is not known yet", async () => {
    const { fake } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.newChat();
    await chat.open("c1");
    expect(fake.teardownViews).not.toHaveBeenCalled();
    expect(chat.conversationId).toBe("c1");
  });

  it("keeps showing the conversation's turn events while its views are torn down", async () => {
    const { chat, emit, teardown } = await showingC1();
    chat.send("more");
    await flush();
    const leaving = chat.newChat();
    emit(chatEvents("c1", [ev.step(1), ev.text("still here")]));
    expect(chat.transcript.messages.at(-1)?.text).toBe("still here");
    teardown.resolve();
    await leaving;
    expect(chat.transcript.items).toEqual([]);
    expect(chat.busy).toBe(false);
  });
});

describe("ChatSession: renaming and deleting conversations", () => {
  const two: Conversation[] = [
    { id: "c1", title: "Hello", createdAt: 1, updatedAt: 2 },
    { id: "c2", title: "Other", createdAt: 1, updatedAt: 1 },
  ];

  it("renames with the trimmed title and shows it in the list", async () => {
    const { fake } = fakeApi({ listConversationPage: vi.fn(async () => page(structuredClone(two))) });
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.renameConversation("c2", "  Trip plans ");
    expect(fake.renameConversation).toHaveBeenCalledExactlyOnceWith("c2", "Trip plans");
    expect(chat.conversations.map((c) => c.title)).toEqual(["Hello", "Trip plans"]);
  });

  it("keeps the old title when the back end refuses, and passes its reason on", async () => {
    const { fake } = fakeApi({ renameConversation: vi.fn(async () => Promise.reject(refused("invalid", "a conversation needs a title"))) });
    const chat = new ChatSession(fake);
    await chat.start();
    await expect(chat.renameConversation("c1", " ")).rejects.toEqual(refused("invalid", "a conversation needs a title"));
    expect(chat.conversations.map((c) => c.title)).toEqual(["Hello"]);
  });

  it("deletes a conversation that is not on screen without leaving the open one", async () => {
    const { fake } = fakeApi({
      listConversationPage: vi.fn(async () => page(structuredClone(two))),
      openConversation: vi.fn(async (id: string) => record([ev.user(`in ${id}`)], { id })),
    });
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.open("c1");
    await chat.deleteConversation("c2");
    expect(fake.deleteConversation).toHaveBeenCalledExactlyOnceWith("c2");
    expect(fake.teardownViews).not.toHaveBeenCalled();
    expect(chat.conversationId).toBe("c1");
    expect(chat.transcript.messages.map((m) => m.text)).toEqual(["in c1"]);
    expect(chat.conversations.map((c) => c.id)).toEqual(["c1"]);
  });

  it("goes to a new chat, views torn down, before deleting the conversation on screen", async () => {
    const log: string[] = [];
    const { fake } = fakeApi({
      listConversationPage: vi.fn(async () => page(structuredClone(two))),
      openConversation: vi.fn(async (id: string) => record([ev.user(`in ${id}`)], { id })),
      teardownViews: vi.fn(async (id: string) => void log.push(`teardown ${id}`)),
      deleteConversation: vi.fn(async (id: string) => void log.push(`delete ${id}`)),
    });
    const chat = new ChatSession(fake);
    await chat.start();
    await chat.open("c1");
    await chat.deleteConversation("c1");
    expect(log).toEqual(["teardown c1", "delete c1"]);
    expect(chat.conversationId).toBeNull();
    expect(chat.transcript.items).toEqual([]);
    expect(chat.conversations.map((c) => c.id)).toEqual(["c2"]);
  });

  it("keeps only the latest list request's answer", async () => {
    const answers = [deferred<ConversationList>(), deferred<ConversationList>()];
    const { fake } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    fake.listConversationPage.mockImplementationOnce(() => answers[0].promise).mockImplementationOnce(() => answers[1].promise);
    const first = chat.refreshConversations();
    const second = chat.refreshConversations();
    answers[1].resolve(page(structuredClone(two)));
    await second;
    expect(chat.conversations.map((c) => c.id)).toEqual(["c1", "c2"]);
    // The older answer comes last: it is out of date.
    answers[0].resolve(page([two[1]]));
    await first;
    expect(chat.conversations.map((c) => c.id)).toEqual(["c1", "c2"]);
  });

  it("a list asked for before a rename does not bring the old title back, and is asked for again", async () => {
    const stale = deferred<ConversationList>();
    const fresh = deferred<ConversationList>();
    const { fake } = fakeApi({ listConversationPage: vi.fn(async () => page(structuredClone(two))) });
    const chat = new ChatSession(fake);
    await chat.start();
    fake.listConversationPage.mockClear();
    fake.listConversationPage.mockImplementationOnce(() => stale.promise).mockImplementationOnce(() => fresh.promise);
    const refresh = chat.refreshConversations();
    await chat.renameConversation("c2", "Trip plans");
    expect(chat.conversations.map((c) => c.title)).toEqual(["Hello", "Trip plans"]);
    stale.resolve(page(structuredClone(two)));
    await refresh;
    expect(chat.conversations.map((c) => c.title)).toEqual(["Hello", "Trip plans"]);
    // The stale answer's own news comes with the list asked for after the rename.
    expect(fake.listConversationPage).toHaveBeenCalledTimes(2);
    fresh.resolve(page([{ ...two[0], title: "Hello again" }, { ...two[1], title: "Trip plans" }]));
    await flush();
    expect(chat.conversations.map((c) => c.title)).toEqual(["Hello again", "Trip plans"]);
  });

  it("a list asked for before a delete does not bring the deleted conversation back", async () => {
    const stale = deferred<ConversationList>();
    const { fake } = fakeApi({ listConversationPage: vi.fn(async () => page(structuredClone(two))) });
    const chat = new ChatSession(fake);
    await chat.start();
    fake.listConversationPage.mockImplementationOnce(() => stale.promise).mockImplementationOnce(async () => page([two[0]]));
    const refresh = chat.refreshConversations();
    await chat.deleteConversation("c2");
    expect(chat.conversations.map((c) => c.id)).toEqual(["c1"]);
    stale.resolve(page(structuredClone(two)));
    await refresh;
    await flush();
    expect(chat.conversations.map((c) => c.id)).toEqual(["c1"]);
  });

  it("a rename or delete with no list request on its way asks for no list", async () => {
    const { fake } = fakeApi({ listConversationPage: vi.fn(async () => page(structuredClone(two))) });
    const chat = new ChatSession(fake);
    await chat.start();
    fake.listConversationPage.mockClear();
    await chat.renameConversation("c1", "Hi");
    await chat.deleteConversation("c2");
    expect(fake.listConversationPage).not.toHaveBeenCalled();
    expect(chat.conversations.map((c) => [c.id, c.title])).toEqual([["c1", "Hi"]]);
  });

  it("keeps the conversation listed when the back end cannot delete it", async () => {
    const { fake } = fakeApi({ deleteConversation: vi.fn(async () => Promise.reject(refused("store", "disk I/O error"))) });
    const chat = new ChatSession(fake);
    await chat.start();
    await expect(chat.deleteConversation("c1")).rejects.toEqual(refused("store", "disk I/O error"));
    expect(chat.conversations.map((c) => c.id)).toEqual(["c1"]);
  });
});

describe("ChatSession: retry and edit-and-resend", () => {
  /** A session showing conversation c1: "Weather?" answered "Sunny", with a tool call between. */
  async function answered(over: Partial<ChatApi> = {}) {
    const api = fakeApi({
      openConversation: vi.fn(async (id: string) =>
        record(
          [
            ev.user("Weather?"),
            ev.step(1),
            ev.assistant([{ type: "tool_use", id: "t1", name: "demo__forecast", arguments: {} }]),
            ev.callStarted("t1", "demo__forecast", "demo", "forecast", {}),
            ev.finished("t1", "ok", { content: [], isError: false }, null, 5),
            ev.step(2),
            ev.assistant([{ type: "text", text: "Sunny" }]),
            ev.done("end_turn", "Sunny"),
          ],
          { id },
        ),
      ),
      ...over,
    });
    const chat = new ChatSession(api.fake);
    await chat.start();
    await chat.open("c1");
    return { ...api, chat };
  }

  const kinds = (chat: ChatSession) => chat.transcript.items.map((i) => (i.kind === "user" || i.kind === "assistant" ? `${i.kind}:${i.text}` : i.kind));

  it("retries: the old turn stays until the back end agrees, then the message is shown being sent and the new turn follows", async () => {
    const answer = deferred<void>();
    const { fake, emit, chat } = await answered({ retryTurn: vi.fn(() => answer.promise) });
    expect(chat.canRewind).toBe(true);

    expect(chat.retry()).toBe(true);
    expect(fake.retryTurn).toHaveBeenCalledExactlyOnceWith("c1");
    expect(chat.busy).toBe(true);
    expect(chat.canRewind).toBe(false);
    expect(chat.retry()).toBe(false);
    expect(chat.send("meanwhile")).toBe(false);
    // The old turn is still shown (its views are torn down while their frames are there).
    expect(kinds(chat)).toEqual(["user:Weather?", "assistant:", "tool-call", "assistant:Sunny"]);
    // The new turn's first events may come before the answer: held, not mixed into the old turn.
    emit(chatEvents("c1", [ev.turnStarted(), ev.user("Weather?"), ev.step(1)]));
    expect(kinds(chat)).toEqual(["user:Weather?", "assistant:", "tool-call", "assistant:Sunny"]);

    answer.resolve();
    await flush();
    expect(kinds(chat)).toEqual(["user:Weather?", "assistant:"]);
    expect(chat.transcript.items[0]).toMatchObject({ pending: false });
    emit(chatEvents("c1", [ev.text("Rainy"), ev.assistant([{ type: "text", text: "Rainy" }]), ev.done("end_turn", "Rainy")]));
    expect(kinds(chat)).toEqual(["user:Weather?", "assistant:Rainy"]);
    expect(chat.busy).toBe(false);
    expect(chat.canRewind).toBe(true);
  });

  it("edits the last message and sends it in its place", async () => {
    const { fake, emit, chat } = await answered();
    expect(chat.editAndResend("   ")).toBe(false);
    expect(chat.editAndResend("  Weather in Oslo? ")).toBe(true);
    expect(fake.editAndResend).toHaveBeenCalledExactlyOnceWith("c1", "Weather in Oslo?");
    await flush();
    expect(kinds(chat)).toEqual(["user:Weather in Oslo?"]);
    expect(chat.transcript.items[0]).toMatchObject({ pending: true });
    emit(chatEvents("c1", [ev.turnStarted(), ev.user("Weather in Oslo?"), ev.step(1), ev.text("Cold")]));
    expect(kinds(chat)).toEqual(["user:Weather in Oslo?", "assistant:Cold"]);
    expect(chat.transcript.items[0]).toMatchObject({ pending: false });
  });

  it("keeps the conversation as it was and says why when the back end refuses", async () => {
    const { chat } = await answered({ retryTurn: vi.fn(async () => Promise.reject(refused("busy", "a reply is still being written in this conversation; stop it first"))) });
    chat.retry();
    await flush();
    expect(chat.busy).toBe(false);
    expect(kinds(chat)).toEqual(["user:Weather?", "assistant:", "tool-call", "assistant:Sunny", "notice"]);
    expect(chat.transcript.notices.at(-1)).toMatchObject({
      kind: "error",
      text: "Could not send the message again: a reply is still being written in this conversation; stop it first",
    });
    expect(chat.canRewind).toBe(true);
  });

  it("is not offered while a reply is being written, a conversation is opened, or with nothing sent", async () => {
    const { fake } = fakeApi();
    const chat = new ChatSession(fake);
    await chat.start();
    expect(chat.canRewind).toBe(false);
    expect(chat.retry()).toBe(false);
    chat.send("Hi");
    await flush();
    expect(chat.canRewind).toBe(false);
    expect(chat.retry()).toBe(false);
    expect(chat.editAndResend("Hello")).toBe(false);
    expect(fake.retryTurn).not.toHaveBeenCalled();
    expect(fake.editAndResend).not.toHaveBeenCalled();
  });

  it("stops the new turn as soon as it can when Stop is pressed while the back end prepares it", async () => {
    const answer = deferred<void>();
    const { fake, chat } = await answered({ retryTurn: vi.fn(() => answer.promise) });
    chat.retry();
    await chat.stop();
    expect(chat.stopping).toBe(true);
    expect(fake.stopTurn).not.toHaveBeenCalled();
    answer.resolve();
    await flush();
    expect(fake.stopTurn).toHaveBeenCalledExactlyOnceWith("c1");
  });

  it("drops an answer that comes after the window left the conversation", async () => {
    const answer = deferred<void>();
    const { chat } = await answered({ retryTurn: vi.fn(() => answer.promise) });
    chat.retry();
    await chat.newChat();
    answer.resolve();
    await flush();
    expect(chat.conversationId).toBeNull();
    expect(chat.transcript.items).toEqual([]);
    expect(chat.busy).toBe(false);
  });

  it("sends a message that never reached the back end again, in place of the failed one", async () => {
    const { fake } = fakeApi({ sendMessage: vi.fn(async () => Promise.reject(refused("store", "the store is locked"))) });
    const chat = new ChatSession(fake);
    await chat.start();
    chat.send("Hello");
    await flush();
    expect(kinds(chat)).toEqual(["user:Hello", "error"]);
    expect(chat.conversationId).toBeNull();
    expect(chat.canRewind).toBe(true);

    fake.sendMessage.mockImplementation(async () => "c9");
    expect(chat.retry()).toBe(true);
    expect(fake.sendMessage).toHaveBeenLastCalledWith(null, "Hello", [], null);
    expect(fake.retryTurn).not.toHaveBeenCalled();
    expect(kinds(chat)).toEqual(["user:Hello"]);
    await flush();
    expect(chat.conversationId).toBe("c9");

    // Edited, a failed message is sent with the new text.
    fake.sendMessage.mockImplementation(async () => Promise.reject(refused("store", "still locked")));
    chat.transcript.settle();
    chat.send("Second");
    await flush();
    expect(chat.editAndResend("Second, edited")).toBe(true);
    expect(fake.sendMessage).toHaveBeenLastCalledWith("c9", "Second, edited", [], null);
    expect(fake.editAndResend).not.toHaveBeenCalled();
  });
});

describe("ChatSession: a long conversation list", () => {
  const all: Conversation[] = Array.from({ length: 250 }, (_, i) => ({ id: `c${i}`, title: `T${i}`, createdAt: 1, updatedAt: 1000 - i }));
  const backEnd = () =>
    vi.fn(async (limit: number, after: string | null) => {
      const start = after === null ? 0 : all.findIndex((c) => c.id === after) + 1;
      return page(all.slice(start, start + limit), start + limit < all.length);
    });

  it("comes a page at a time as it is scrolled, and a refresh keeps as many as are shown", async () => {
    const list = backEnd();
    const chat = new ChatSession(fakeApi({ listConversationPage: list }).fake);
    await chat.start();
    expect(chat.conversations).toHaveLength(CONVERSATION_PAGE);
    expect(chat.moreConversations).toBe(true);
    await chat.loadMoreConversations();
    expect(chat.conversations.map((c) => c.id)).toEqual(all.slice(0, 2 * CONVERSATION_PAGE).map((c) => c.id));
    await chat.loadMoreConversations();
    expect(chat.conversations).toHaveLength(250);
    expect(chat.moreConversations).toBe(false);
    await chat.loadMoreConversations();
    expect(list).toHaveBeenCalledTimes(3);
    await chat.refreshConversations();
    expect(list).toHaveBeenLastCalledWith(250, null);
    expect(chat.conversations).toHaveLength(250);
  });

  it("drops a page asked for before the list changed", async () => {
    const list = backEnd();
    const { fake } = fakeApi({ listConversationPage: list });
    const chat = new ChatSession(fake);
    await chat.start();
    const later = deferred<ConversationList>();
    list.mockImplementationOnce(() => later.promise);
    const more = chat.loadMoreConversations();
    await chat.deleteConversation("c5");
    later.resolve(page(all.slice(100, 200), true));
    await more;
    expect(chat.conversations).toHaveLength(CONVERSATION_PAGE - 1);
    expect(chat.conversations.some((c) => c.id === "c5")).toBe(false);
  });
});
