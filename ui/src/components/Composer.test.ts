import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";

afterEach(cleanup);
import Composer from "./Composer.svelte";

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
    expect(onSend).toHaveBeenCalledWith("line one");
    expect(box.value).toBe("");
  });

  it("does not send blank text", async () => {
    const onSend = vi.fn();
    const { getByTestId } = render(Composer, { onSend, onReady: () => {} });
    const box = getByTestId("composer");
    await fireEvent.input(box, { target: { value: "   " } });
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).not.toHaveBeenCalled();
  });
});
