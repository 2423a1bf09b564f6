import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import { flushSync } from "svelte";
import type { TurnEvent } from "../lib/api";
import { ev, textBlock } from "../lib/testing/turns";
import { Transcript } from "../lib/transcript.svelte";
import TranscriptView from "./TranscriptView.svelte";

const answerApproval = vi.fn(async (_callId: string, _decision: string) => {});
vi.mock("../lib/api", () => ({ api: { answerApproval: (callId: string, decision: string) => answerApproval(callId, decision) } }));

afterEach(cleanup);
beforeEach(() => answerApproval.mockReset());

function show(events: TurnEvent[], transcript = new Transcript()) {
  for (const e of events) transcript.apply(e);
  const view = render(TranscriptView, { transcript, servers: [] });
  return { ...view, transcript };
}

const args = { city: "Paris" };
const model = { content: [textBlock("Paris: 18°C")], isError: false };
const view = { content: [textBlock("Paris: 18°C")], structuredContent: { hourly: [17, 18] } };
const awaiting: TurnEvent[] = [
  ev.user("Weather?"),
  ev.step(1),
  ev.text("Checking.\nOne moment."),
  ev.assistant([{ type: "text", text: "Checking.\nOne moment." }, { type: "tool_use", id: "c1", name: "demo__forecast", arguments: args }]),
  ev.callStarted("c1", "demo__forecast", "demo", "forecast", args, "ui://demo/forecast.html"),
  ev.approvalRequested("c1", "demo", "forecast", args),
];

describe("TranscriptView", () => {
  it("shows the welcome screen when there is nothing yet", () => {
    const { container, queryAllByTestId } = render(TranscriptView, { transcript: new Transcript(), servers: [] });
    expect(container.querySelector(".welcome h1")?.textContent).toBe("Porthole");
    expect(queryAllByTestId("message")).toHaveLength(0);
  });

  it("says it is busy while the conversation is being left (its views torn down) and while one is read", () => {
    const transcript = new Transcript();
    transcript.apply(ev.user("Hi"));
    const { getByTestId, rerender } = render(TranscriptView, { transcript, servers: [] });
    const log = getByTestId("transcript");
    expect(log.getAttribute("aria-busy")).toBe("false");
    rerender({ transcript, servers: [], leaving: true });
    flushSync();
    expect(log.getAttribute("aria-busy")).toBe("true");
    // The conversation stays on screen meanwhile.
    expect(getByTestId("message").textContent).toBe("Hi");
    rerender({ transcript, servers: [], leaving: false, loading: true });
    flushSync();
    expect(log.getAttribute("aria-busy")).toBe("true");
  });

  it("renders messages as plain text with their roles", () => {
    const { getAllByTestId, container } = show([...awaiting.slice(0, 2), ev.text("<b>not bold</b>\nline two")]);
    const messages = getAllByTestId("message");
    expect(messages.map((m) => [m.dataset.role, m.textContent])).toEqual([
      ["user", "Weather?"],
      ["assistant", "<b>not bold</b>\nline two"],
    ]);
    expect(container.querySelector("b")).toBeNull();
    expect(messages[1].getAttribute("aria-busy")).toBe("true");
  });

  it("renders a tool call awaiting approval with its three answers, which reach the back end", async () => {
    const { getByTestId } = show(awaiting);
    const card = getByTestId("tool-call");
    expect(card.dataset.toolName).toBe("forecast");
    expect(card.dataset.status).toBe("awaiting-approval");
    expect(card.textContent).toContain("demo");
    expect(getByTestId("tool-arguments").textContent).toBe(JSON.stringify(args, null, 2));
    expect(getByTestId("approve-once").textContent?.trim()).toBe("Allow once");
    expect(getByTestId("approve-always").textContent?.trim()).toBe("Always allow this tool");
    expect(getByTestId("deny").textContent?.trim()).toBe("Deny");

    await fireEvent.click(getByTestId("approve-always"));
    expect(answerApproval).toHaveBeenCalledWith("c1", "allow_always");
    await fireEvent.click(getByTestId("deny"));
    expect(answerApproval).toHaveBeenLastCalledWith("c1", "deny");
    await fireEvent.click(getByTestId("approve-once"));
    expect(answerApproval).toHaveBeenLastCalledWith("c1", "allow_once");
  });

  it("says so when an answer is refused", async () => {
    answerApproval.mockRejectedValueOnce("that tool call is no longer waiting for a decision");
    const { getByTestId, findByRole } = show(awaiting);
    await fireEvent.click(getByTestId("approve-once"));
    const alert = await findByRole("alert");
    expect(alert.textContent).toContain("no longer waiting");
  });

  it("follows the call through progress to both facings of its result", () => {
    const { getByTestId, queryByTestId, transcript, container } = show(awaiting);
    transcript.apply(ev.approvalResolved("c1", "allow_once"));
    transcript.apply(ev.running("c1"));
    transcript.apply(ev.progress("c1", 1, 4, "fetching"));
    flushSync();
    expect(getByTestId("tool-call").dataset.status).toBe("running");
    expect(queryByTestId("approve-once")).toBeNull();
    const bar = container.querySelector("progress")!;
    expect(bar.value).toBe(1);
    expect(bar.max).toBe(4);
    expect(getByTestId("tool-call").textContent).toContain("fetching (25%)");

    transcript.apply(ev.finished("c1", "ok", model, view, 1250));
    flushSync();
    expect(getByTestId("tool-call").dataset.status).toBe("ok");
    expect(container.querySelector("progress")).toBeNull();
    expect(getByTestId("tool-duration").textContent).toBe("1.3 s");
    const result = getByTestId("tool-result");
    expect(result.tagName).toBe("DETAILS");
    expect(result.querySelector("summary")?.textContent).toBe("What the model got / What the view got");
    expect(JSON.parse(getByTestId("model-facing").textContent!)).toEqual(model);
    expect(JSON.parse(getByTestId("view-facing").textContent!)).toEqual(view);
  });

  it("shows errors inline as alerts, and an interrupted reply as interrupted", () => {
    const { getAllByTestId, getByTestId } = show([
      ev.user("a"),
      ev.step(1),
      ev.text("Half"),
      ev.assistant([{ type: "text", text: "Half" }], true),
      ev.error("the connection was cut"),
      ev.done("error"),
      ev.user("b"),
      ev.step(1),
      ev.error("No model can answer: no API key"),
      ev.done("error"),
    ]);
    const errors = getAllByTestId("message-error");
    expect(errors.map((e) => [e.getAttribute("role"), e.textContent])).toEqual([
      ["alert", "the connection was cut"],
      ["alert", "No model can answer: no API key"],
    ]);
    expect(getByTestId("message-status").textContent).toBe("Interrupted");
    // The failed reply has no bubble of its own.
    expect(getAllByTestId("message").map((m) => m.dataset.role)).toEqual(["user", "assistant", "user"]);
  });

  it("shows the retry notice and collapsed reasoning", () => {
    const { getByTestId } = show([ev.user("a"), ev.step(1), ev.reasoning("hmm"), ev.retrying(2, 3000, "rate limited (HTTP 429): slow down")]);
    expect(getByTestId("retrying").textContent).toBe("Rate limited; retrying in 3 s (attempt 2)");
    const reasoning = getByTestId("reasoning") as HTMLDetailsElement;
    expect(reasoning.open).toBe(false);
    expect(reasoning.textContent).toContain("hmm");
  });

  it("keeps notices", () => {
    const transcript = new Transcript();
    transcript.addNotice("error", "Could not stop the reply");
    const { getByTestId } = render(TranscriptView, { transcript, servers: [] });
    expect(getByTestId("notice").getAttribute("role")).toBe("alert");
  });
});

describe("TranscriptView following the end", () => {
  it("keeps following the end when a card grows (a view's frame), but not once the reader scrolled up", () => {
    const callbacks: ResizeObserverCallback[] = [];
    class FakeResizeObserver {
      constructor(cb: ResizeObserverCallback) {
        callbacks.push(cb);
      }
      observe() {}
      disconnect() {}
      unobserve() {}
    }
    vi.stubGlobal("ResizeObserver", FakeResizeObserver);
    try {
      const { getByTestId } = show([ev.user("Show me the chart")]);
      const log = getByTestId("transcript");
      let height = 1000;
      Object.defineProperty(log, "scrollHeight", { get: () => height, configurable: true });
      Object.defineProperty(log, "clientHeight", { get: () => 400, configurable: true });
      log.scrollTop = 600;
      fireEvent.scroll(log);
      // A view grows by 300 px: the log follows.
      height = 1300;
      callbacks.at(-1)!([], {} as ResizeObserver);
      expect(log.scrollTop).toBe(1300);
      // The reader scrolls up; growth no longer moves them.
      log.scrollTop = 100;
      fireEvent.scroll(log);
      height = 1600;
      callbacks.at(-1)!([], {} as ResizeObserver);
      expect(log.scrollTop).toBe(100);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
