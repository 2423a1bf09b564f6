import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";

afterEach(cleanup);
import Composer from "./Composer.svelte";
import { ViewRegistry } from "../lib/views.svelte";

describe("Composer", () => {
  it("sends on Enter, keeps Shift+Enter as a new line, and empties itself", async () => {
    const onSend = vi.fn();
    const onReady = vi.fn();
    const { getByTestId } = render(Composer, { onSend, onReady });
    expect(onReady).toHaveBeenCalledOnce();
    const box = getByTestId("composer") as HTMLTextAreaElement;
    const send = getByTestId("send") as HTMLButtonElement;
    expect(send.disabled).toBe(true);

    await fireEvent.input(box, { target: { value: "line one" } });
    await fireEvent.keyDown(box, { key: "Enter", shiftKey: true });
    expect(onSend).not.toHaveBeenCalled();

    await fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).toHaveBeenCalledWith("line one", []);
    expect(box.value).toBe("");
  });

  it("says when the person writes (what the window fetches the Markdown renderer on), not when the box is only shown or clicked", async () => {
    const onWriting = vi.fn();
    const { getByTestId } = render(Composer, { onSend: () => {}, onReady: () => {}, onWriting });
    const box = getByTestId("composer");
    await fireEvent.click(box);
    expect(onWriting).not.toHaveBeenCalled();
    await fireEvent.input(box, { target: { value: "h" } });
    expect(onWriting).toHaveBeenCalledOnce();
  });

  it("does not send blank text", async () => {
    const onSend = vi.fn();
    const { getByTestId } = render(Composer, { onSend, onReady: () => {} });
    const box = getByTestId("composer");
    await fireEvent.input(box, { target: { value: "   " } });
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).not.toHaveBeenCalled();
  });

  it("offers Stop while a reply is being written, and keeps the text until it can be sent", async () => {
    const onSend = vi.fn();
    const onStop = vi.fn();
    const { getByTestId, queryByTestId, rerender } = render(Composer, { onSend, onReady: () => {}, busy: true, onStop });
    const stop = getByTestId("stop");
    expect(stop.getAttribute("aria-label")).toBe("Stop the reply");
    await fireEvent.click(stop);
    expect(onStop).toHaveBeenCalledOnce();

    const box = getByTestId("composer") as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: "next question" } });
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).not.toHaveBeenCalled();
    expect(box.value).toBe("next question");
    expect((getByTestId("send") as HTMLButtonElement).disabled).toBe(true);

    await rerender({ busy: false });
    expect(queryByTestId("stop")).toBeNull();
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).toHaveBeenCalledWith("next question", []);
  });

  it("keeps the text when the message is not taken", async () => {
    const { getByTestId } = render(Composer, { onSend: () => false, onReady: () => {} });
    const box = getByTestId("composer") as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: "kept" } });
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("kept");
  });

  it("puts a view's proposed message in the box without sending it, and sends it on Enter", async () => {
    const registry = new ViewRegistry();
    registry.handle({ type: "opened", conversationId: "c1", callId: "call-1", viewId: "v1", url: "mcpview://localhost/t", allow: "", prefersBorder: null, displayModes: ["inline"], cspDropped: [], reaches: [], devices: [], devicesAsked: [], emulating: null });
    registry.handle({ type: "proposed_message", viewId: "v1", text: "Show me Paris tomorrow" });

    const onSend = vi.fn();
    const { getByTestId, queryByTestId, rerender } = render(Composer, { onSend, onReady: () => {} });
    expect(queryByTestId("composer-suggestion")).toBeNull();
    await rerender({ suggestion: registry.proposal });
    const box = getByTestId("composer") as HTMLTextAreaElement;
    expect(box.value).toBe("Show me Paris tomorrow");
    expect(getByTestId("composer-suggestion").textContent).toBe("A view suggested this message; press Enter to send it");
    expect(onSend).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(box);

    await fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).toHaveBeenCalledExactlyOnceWith("Show me Paris tomorrow", []);
    expect(box.value).toBe("");
    expect(queryByTestId("composer-suggestion")).toBeNull();
    // The same proposal is not put back.
    await rerender({ suggestion: registry.proposal });
    expect(box.value).toBe("");
  });

  it("keeps what the person typed when a view proposes a message, and replaces an untouched proposal", async () => {
    const onSend = vi.fn();
    const { getByTestId, queryByTestId, rerender } = render(Composer, { onSend, onReady: () => {} });
    const box = getByTestId("composer") as HTMLTextAreaElement;
    await rerender({ suggestion: { id: 1, text: "first idea" } });
    await rerender({ suggestion: { id: 2, text: "second idea" } });
    expect(box.value).toBe("second idea");

    await fireEvent.input(box, { target: { value: "my own words" } });
    await rerender({ suggestion: { id: 3, text: "third idea" } });
    expect(box.value).toBe("my own words\n\nthird idea");
    expect(onSend).not.toHaveBeenCalled();

    await fireEvent.input(box, { target: { value: "" } });
    expect(queryByTestId("composer-suggestion")).toBeNull();
  });
});
