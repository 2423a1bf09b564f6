// The chat window's state: which conversation is open, the conversation list, the model line,
// and the routing of every turn's events into the open conversation's transcript.
import { api, errorMessage, type AgentSummary, type AttachmentRef, type ChatEvent, type Conversation, type ModelInfo, type TurnEvent } from "./api";
import { uriLabel } from "./composerMenu";
import { Transcript, lastUserIndex, type UserItem } from "./transcript.svelte";

export type ChatApi = Pick<
  typeof api,
  | "sendMessage"
  | "listAgents"
  | "sendPrompt"
  | "stopTurn"
  | "sendWithoutWaiting"
  | "openConversation"
  | "earlierMessages"
  | "listConversationPage"
  | "modelInfo"
  | "onChatEvent"
  | "teardownViews"
  | "renameConversation"
  | "deleteConversation"
  | "retryTurn"
  | "editAndResend"
>;

/** The sidebar's list is loaded this many conversations at a time (more as it is scrolled). */
export const CONVERSATION_PAGE = 100;

/** Longest wait for the views of a conversation being left to be torn down (ms). Rust answers
 * within about 2 s; this only keeps a back end that never answers from freezing the window. */
export const TEARDOWN_WAIT_MS = 4000;

/** Longest wait of the conversation list, at start, for the model's line shown above it (ms).
 * The line comes from the keyring (its service started on first use, a few ms; it may ask the
 * person to unlock it): the list is not kept hidden behind that question. */
export const MODEL_LINE_WAIT_MS = 500;

/** Events that can be applied again without harm (they set state by call id, or end the
 * turn). Used for the events that arrive while a conversation is being read from the store. */
const REPLAYABLE = new Set<TurnEvent["type"]>([
  "tool_call_started",
  "approval_requested",
  "approval_resolved",
  "tool_call_running",
  "tool_call_progress",
  "tool_call_finished",
  "done",
]);

export class ChatSession {
  readonly transcript = new Transcript();
  /** The open conversation; null for a new chat not sent yet. */
  conversationId = $state<string | null>(null);
  conversations = $state<Conversation[]>([]);
  /** The config's remote AG-UI agents, and the one a new chat will be with (null: the local
   * model). */
  agents = $state<AgentSummary[]>([]);
  newChatAgent = $state<string | null>(null);
  /** Older conversations than the list holds are stored (`loadMoreConversations` brings them). */
  moreConversations = $state(false);
  /** The list has been read once (or could not be): until then the sidebar does not say there
   * are none. */
  listed = $state(false);
  #loadingMore = false;
  model = $state<ModelInfo | null>(null);
  /** A conversation is being read from the store. */
  loading = $state(false);
  /** Stop was asked for; the turn has not ended yet. */
  stopping = $state(false);
  /** The conversation on screen is being left: its views are being torn down (its transcript
   * stays until they are). Nothing can be sent meanwhile. */
  switching = $state(false);

  #api: ChatApi;
  /** Bumped by New chat and by opening a conversation: answers to older requests are dropped. */
  #generation = 0;
  /** A first message was sent and its new conversation's id is not known yet. */
  #awaitingId = false;
  /** Stop was asked for before the turn could be stopped (its conversation id, or its rewind,
   * is not known yet): it is stopped as soon as it can be. */
  #stopWhenKnown = false;
  /** The back end is dropping the last turn to run it again (retry, edit); its events are held
   * until it answers. */
  #rewinding = $state(false);
  /** Events held back while the open conversation's id or stored state is not known yet. */
  #held: ChatEvent[] = [];
  /** Tool calls waiting for a decision, by conversation (so reopening one can show its prompt). */
  #approvals = new Map<string, Set<string>>();
  /** While switching: where the window goes once the views are torn down (null: a new chat).
   * The latest New chat or open wins; the conversation being left is torn down once. */
  #destination: string | null = null;
  #leaving: Promise<void> | null = null;
  /** Numbers the conversation list's requests: only the latest one's answer is kept. A rename
   * or delete bumps it too, so a list asked for before the change cannot bring it back. */
  #listRequest = 0;
  /** List requests not answered yet. */
  #listsInFlight = 0;
  /** The open conversation's agent, as it was opened or created (the list may not hold it). */
  #openAgent = $state<string | null>(null);

  constructor(chatApi: ChatApi = api) {
    this.#api = chatApi;
  }

  get busy(): boolean {
    return this.transcript.busy;
  }

  /** Whether the last turn can be run again now (retry, or edit-and-resend): no reply is being
   * written, and the conversation is neither being opened nor left. */
  get canRewind(): boolean {
    if (this.busy || this.loading || this.switching || this.#rewinding) return false;
    const index = lastUserIndex(this.transcript.items);
    if (index < 0) return false;
    const last = this.transcript.items[index] as UserItem;
    return last.unsent || this.conversationId !== null;
  }

  /** Runs the last user message again: its replies are dropped and a new turn starts. A
   * message that never reached the back end is simply sent again. Returns false when that
   * cannot be done now. */
  retry(): boolean {
    if (!this.canRewind) return false;
    const last = this.transcript.items[lastUserIndex(this.transcript.items)] as UserItem;
    if (last.unsent) return this.#resendUnsent(last.text, last.attachments);
    const id = this.conversationId!;
    void this.#rewind(last.text, () => this.#api.retryTurn(id));
    return true;
  }

  /** Replaces the last user message with `text`, drops everything after it, and sends it.
   * Returns false (nothing changes) when that cannot be done now or the text is blank. */
  editAndResend(text: string): boolean {
    const trimmed = text.trim();
    if (!trimmed || !this.canRewind) return false;
    const last = this.transcript.items[lastUserIndex(this.transcript.items)] as UserItem;
    if (last.unsent) return this.#resendUnsent(trimmed, last.attachments);
    const id = this.conversationId!;
    void this.#rewind(trimmed, () => this.#api.editAndResend(id, trimmed));
    return true;
  }

  /** The last message failed to be sent: it (and its error) go, and `text` is sent anew. */
  #resendUnsent(text: string, attachments: UserItem["attachments"]): boolean {
    this.transcript.dropLastTurn();
    const refs = attachments.flatMap((a) => (a.uri ? [{ server: a.server, uri: a.uri }] : []));
    return this.send(text, refs);
  }

  /** Asks the back end to drop the last turn and start it again with `text`. The transcript
   * keeps showing the old turn (its views' frames are there while they are torn down) until
   * the back end agrees; then it shows `text` being sent and the new turn's events. */
  async #rewind(text: string, request: () => Promise<void>) {
    const generation = this.#generation;
    this.#rewinding = true;
    this.transcript.holdForRewind();
    try {
      await request();
      if (generation !== this.#generation) return;
      this.#rewinding = false;
      this.transcript.rewind(text);
      const held = this.#held;
      this.#held = [];
      for (const e of held) this.handle(e);
      if (this.#stopWhenKnown) {
        this.#stopWhenKnown = false;
        if (this.busy) await this.stop();
      }
    } catch (e) {
      if (generation !== this.#generation) return;
      this.#rewinding = false;
      this.#stopWhenKnown = false;
      this.stopping = false;
      const held = this.#held;
      this.#held = [];
      this.transcript.cancelRewind(`Could not send the message again: ${errorMessage(e)}`);
      for (const e of held) this.handle(e);
    }
  }

  /** Listens for turn events and loads the model line and the conversation list. Returns the
   * function that stops listening. */
  async start(): Promise<() => void> {
    const unlisten = await this.#api.onChatEvent((e) => this.handle(e));
    // The model's line sits above the list: shown after it, the list does not move down under
    // a click as the line arrives (the store usually answers first).
    const model = this.refreshModel();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const lineShown = Promise.race([model, new Promise<void>((resolve) => (timer = setTimeout(resolve, MODEL_LINE_WAIT_MS)))]);
    try {
      await Promise.all([model, this.refreshConversations(lineShown), this.refreshAgents()]);
    } finally {
      clearTimeout(timer);
    }
    return unlisten;
  }

  async refreshAgents() {
    try {
      this.agents = await this.#api.listAgents();
    } catch {
      this.agents = [];
    }
    if (this.newChatAgent && !this.agents.some((a) => a.name === this.newChatAgent)) this.newChatAgent = null;
  }

  /** Who the open conversation is with: a remote agent's name, or null (the local model). A
   * new chat is with the one chosen for it. */
  get agent(): string | null {
    if (this.conversationId === null) return this.newChatAgent;
    return this.conversations.find((c) => c.id === this.conversationId)?.agent ?? this.#openAgent;
  }

  async refreshModel() {
    try {
      this.model = await this.#api.modelInfo();
    } catch (e) {
      this.model = { provider: null, baseUrl: null, model: null, keySource: null, error: `Could not ask which model to use: ${errorMessage(e)}` };
    }
  }

  /** Reads the conversation list again; `after`: the list is shown no sooner than it settles. */
  async refreshConversations(after?: Promise<unknown>) {
    const request = ++this.#listRequest;
    this.#listsInFlight++;
    try {
      // As many as are shown (at least a page), so a list scrolled further keeps its length.
      const page = await this.#api.listConversationPage(Math.max(CONVERSATION_PAGE, this.conversations.length), null);
      await after;
      // An answer overtaken by a later request (or by a rename or delete) is out of date.
      if (request === this.#listRequest) {
        this.conversations = page.conversations;
        this.moreConversations = page.more;
        this.listed = true;
      }
    } catch {
      // The list keeps what it had; the store's problem shows when sending.
      this.listed = true;
    } finally {
      this.#listsInFlight--;
    }
  }

  /** Adds the next page of older conversations to the list (the sidebar asks as it is scrolled
   * to the end). Dropped when the list changes meanwhile: the refresh answers instead. */
  async loadMoreConversations() {
    const last = this.conversations.at(-1);
    if (!this.moreConversations || this.#loadingMore || !last) return;
    this.#loadingMore = true;
    const request = this.#listRequest;
    try {
      const page = await this.#api.listConversationPage(CONVERSATION_PAGE, last.id);
      if (request !== this.#listRequest) return;
      const known = new Set(this.conversations.map((c) => c.id));
      this.conversations = [...this.conversations, ...page.conversations.filter((c) => !known.has(c.id))];
      this.moreConversations = page.more;
    } catch {
      // The list keeps what it had; scrolling to its end asks again.
    } finally {
      this.#loadingMore = false;
    }
  }

  /** The list was changed here (a rename, a delete): answers still on their way may predate
   * the change, so they are dropped, and the list is asked for again (they may also have
   * carried news of their own, such as a new conversation's title). */
  #listChanged() {
    this.#listRequest++;
    if (this.#listsInFlight > 0) void this.refreshConversations();
  }

  /** Renames a conversation. Rejects with the back end's reason (an empty title is refused). */
  async renameConversation(id: string, title: string) {
    const trimmed = title.trim();
    await this.#api.renameConversation(id, trimmed);
    this.#listChanged();
    this.conversations = this.conversations.map((c) => (c.id === id ? { ...c, title: trimmed } : c));
  }

  /** Deletes a conversation from the store. When it is the one on screen (or being opened), the
   * window first goes to a new chat, so its views are torn down while their frames are there. */
  async deleteConversation(id: string) {
    const onScreen = this.#leaving ? this.#destination === id : this.conversationId === id;
    if (onScreen) await this.newChat();
    await this.#api.deleteConversation(id);
    this.#approvals.delete(id);
    this.#listChanged();
    this.conversations = this.conversations.filter((c) => c.id !== id);
  }

  /** Sends a message in the open conversation (a new one when none is open). Returns false
   * when it cannot be sent now (a reply is being written, or the text is blank). */
  send(text: string, attachments: AttachmentRef[] = []): boolean {
    if (this.busy || this.loading || this.switching) return false;
    const trimmed = text.trim();
    if (!trimmed && attachments.length === 0) return false;
    const chips = attachments.map((a) => ({ server: a.server, uri: a.uri, label: uriLabel(a.uri), mimeType: null }));
    this.transcript.beginTurn(trimmed, chips);
    const agent = this.newChatAgent;
    void this.#dispatch(
      (known) => {
        // A new conversation is with the agent chosen for it, for good.
        if (known === null) this.#openAgent = agent;
        return this.#api.sendMessage(known, trimmed, attachments, known === null ? agent : null);
      },
      (error) => this.transcript.failTurn(`The message could not be sent: ${error}`),
    );
    return true;
  }

  /** Sends a server's prompt (its messages, made with `args`) as the person's turn in the open
   * conversation (a new one when none is open). Resolves to null once it started, or to why it
   * could not (the prompt's own error included); the message appears when the turn echoes it. */
  async sendPrompt(server: string, name: string, args: Record<string, string>): Promise<string | null> {
    if (this.loading || this.switching) return "The conversation is still being opened; try again in a moment.";
    if (this.busy || this.#rewinding) return "A reply is being written in this conversation; wait for it or stop it first.";
    this.transcript.busy = true;
    let failure: string | null = null;
    await this.#dispatch(
      (known) => this.#api.sendPrompt(known, server, name, args),
      (error) => {
        this.transcript.busy = false;
        failure = error;
      },
    );
    return failure;
  }

  /** Runs a tool the person chose in the tools panel in the open conversation (a new one when
   * none is open, which the window then shows), the way a message is sent: `start` asks the
   * back end (with the open conversation's id, null for a new one) and resolves once the run
   * started; its card and view arrive as the call's events. Resolves to null once started, or
   * to why it could not start. */
  async runTool(start: (conversationId: string | null) => Promise<{ conversationId: string }>): Promise<string | null> {
    if (this.loading || this.switching) return "The conversation is still being opened; try again in a moment.";
    if (this.busy || this.#rewinding) return "A reply is being written in this conversation; stop it first.";
    this.transcript.busy = true;
    let failure: string | null = null;
    await this.#dispatch(
      async (known) => (await start(known)).conversationId,
      (error) => {
        this.transcript.busy = false;
        failure = error;
      },
    );
    return failure;
  }

  /** Starts something in the open conversation (a new one when none is open): `start` asks the
   * back end and resolves to the conversation's id; events that arrive first are held until
   * it is known. `failed` gets the reason when it could not start. */
  async #dispatch(start: (known: string | null) => Promise<string>, failed: (error: string) => void) {
    const generation = this.#generation;
    const known = this.conversationId;
    if (!known) this.#awaitingId = true;
    try {
      const id = await start(known);
      if (generation !== this.#generation) return;
      this.conversationId = id;
      if (!known) {
        this.#awaitingId = false;
        const held = this.#held;
        this.#held = [];
        for (const e of held) if (e.conversationId === id) this.handle(e);
        void this.refreshConversations();
      }
      if (this.#stopWhenKnown) {
        this.#stopWhenKnown = false;
        if (this.busy) await this.stop();
      }
    } catch (e) {
      if (generation !== this.#generation) return;
      this.#awaitingId = false;
      this.#stopWhenKnown = false;
      this.#held = [];
      this.stopping = false;
      failed(errorMessage(e));
    }
  }

  /** Stops the reply being written in the open conversation. */
  async stop() {
    if (!this.busy) return;
    this.stopping = true;
    const id = this.conversationId;
    if (!id || this.#rewinding) {
      this.#stopWhenKnown = true;
      return;
    }
    try {
      const stopped = await this.#api.stopTurn(id);
      // Nothing was running: the turn ended and its `done` was missed.
      if (!stopped && id === this.conversationId) {
        this.transcript.settle();
        this.stopping = false;
      }
    } catch (e) {
      this.stopping = false;
      this.transcript.addNotice("error", `Could not stop the reply: ${errorMessage(e)}`);
    }
  }

  /** Starts a new chat, once the views of the conversation on screen are torn down. */
  newChat(): Promise<void> {
    return this.#leave(null);
  }

  /** Opens a stored conversation, once the views of the conversation on screen are torn down. */
  open(id: string): Promise<void> {
    return this.#leave(id);
  }

  /** Leaves the conversation on screen for `destination` (null: a new chat). The MCP Apps
   * host must send ui/resource-teardown before a view goes, so when a conversation is on
   * screen Rust first tears its views down while their frames still show it, and only then is
   * the transcript replaced. A New chat or open asked for while that is under way does not
   * start another teardown: the latest one wins, and the returned promise settles when the
   * window got there. A teardown that fails (or never answers) does not stop the switch. */
  #leave(destination: string | null): Promise<void> {
    this.#destination = destination;
    if (this.#leaving) return this.#leaving;
    const current = this.conversationId;
    if (current === null) return this.#arrive(destination);
    // Answers to what was asked for the conversation being left (a store read, a send) are
    // dropped from now on: its transcript is about to go.
    this.#generation++;
    this.switching = true;
    const leaving = (async () => {
      try {
        await this.#teardown(current);
      } finally {
        this.#leaving = null;
        this.switching = false;
      }
      await this.#arrive(this.#destination);
    })();
    this.#leaving = leaving;
    return leaving;
  }

  async #teardown(conversationId: string) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        console.warn(`the views of ${conversationId} were not torn down within ${TEARDOWN_WAIT_MS} ms; leaving anyway`);
        resolve();
      }, TEARDOWN_WAIT_MS);
    });
    try {
      await Promise.race([this.#api.teardownViews(conversationId), gaveUp]);
    } catch (e) {
      console.warn(`the views of ${conversationId} could not be torn down:`, e);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Shows a new chat (null) or a stored conversation, in place of what was on screen. */
  async #arrive(id: string | null) {
    this.#forget();
    this.#openAgent = null;
    if (id === null) {
      this.conversationId = null;
      this.transcript.clear();
      return;
    }
    const generation = this.#generation;
    this.conversationId = id;
    this.transcript.clear();
    this.loading = true;
    try {
      const stored = await this.#api.openConversation(id);
      if (generation !== this.#generation) return;
      this.#openAgent = stored.conversation.agent ?? null;
      this.transcript.load(stored, this.#approvals.get(id) ?? []);
      const held = this.#held;
      this.#held = [];
      for (const e of held) if (REPLAYABLE.has(e.event.type)) this.transcript.apply(e.event);
      // Its views come back as their cards come near sight (TranscriptView asks for each).
    } catch (e) {
      if (generation !== this.#generation) return;
      this.transcript.addNotice("error", `Could not open the conversation: ${errorMessage(e)}`);
    } finally {
      if (generation === this.#generation) this.loading = false;
    }
  }

  /** The open conversation's turn stops waiting for servers still starting. */
  async sendWithoutWaiting() {
    const id = this.conversationId;
    if (id === null) return;
    try {
      await this.#api.sendWithoutWaiting(id);
    } catch (e) {
      this.transcript.addNotice("error", `Could not send without the servers: ${errorMessage(e)}`);
    }
  }

  /** Puts the open conversation's earlier turns (a page of them) in front of what is shown;
   * resolves to how many items were added (0 when there is nothing earlier, or the window moved
   * on meanwhile). */
  async loadEarlier(): Promise<number> {
    const id = this.conversationId;
    const before = this.transcript.firstMessageId;
    if (id === null || before === null || !this.transcript.earlier || this.loading) return 0;
    const generation = this.#generation;
    try {
      const page = await this.#api.earlierMessages(id, before);
      if (generation !== this.#generation || this.transcript.firstMessageId !== before) return 0;
      return this.transcript.prepend(page);
    } catch (e) {
      if (generation !== this.#generation) return 0;
      this.transcript.earlier = false;
      this.transcript.addNotice("error", `Could not load the earlier messages: ${errorMessage(e)}`);
      return 0;
    }
  }

  /** One event of some conversation's turn. */
  handle(e: ChatEvent) {
    const { conversationId: id, event } = e;
    this.#track(id, event);
    if (id === this.conversationId && this.#rewinding) {
      this.#held.push(e);
    } else if (id === this.conversationId && !this.loading) {
      this.transcript.apply(event);
      if (event.type === "turn_started" && this.model && !this.model.error && !this.model.model) {
        this.model = { ...this.model, model: event.model };
      }
      if (event.type === "done") this.stopping = false;
    } else if ((id === this.conversationId && this.loading) || (this.#awaitingId && this.conversationId === null)) {
      this.#held.push(e);
    }
    if (event.type === "done") void this.refreshConversations();
  }

  #forget() {
    this.#generation++;
    this.#awaitingId = false;
    this.#stopWhenKnown = false;
    this.#rewinding = false;
    this.#held = [];
    this.loading = false;
    this.stopping = false;
  }

  #track(id: string, event: TurnEvent) {
    const waiting = this.#approvals.get(id) ?? new Set<string>();
    switch (event.type) {
      case "approval_requested":
        waiting.add(event.callId);
        this.#approvals.set(id, waiting);
        break;
      case "approval_resolved":
      case "tool_call_finished":
        waiting.delete(event.callId);
        break;
      case "done":
        this.#approvals.delete(id);
        break;
    }
  }
}
