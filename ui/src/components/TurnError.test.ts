import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import TurnError from "./TurnError.svelte";

afterEach(cleanup);

describe("TurnError", () => {
  it("offers Settings when no model could answer, and only then", async () => {
    const onOpenSettings = vi.fn();
    const none = render(TurnError, { text: "No model can answer: no API key for openai", onOpenSettings });
    await fireEvent.click(none.getByTestId("turn-error-settings"));
    expect(onOpenSettings).toHaveBeenCalledTimes(1);
    cleanup();
    const other = render(TurnError, { text: "The model's reply was cut off: connection reset", onOpenSettings });
    expect(other.queryByTestId("turn-error-settings")).toBeNull();
  });
});
