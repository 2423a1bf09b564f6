import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import SearchField from "./SearchField.svelte";

afterEach(cleanup);

describe("SearchField", () => {
  it("is a labelled search box, a text field, with no clear button while empty", () => {
    const { getByRole, getByTestId, queryByTestId } = render(SearchField, { id: "f", label: "Search tools", testid: "box" });
    const box = getByTestId("box") as HTMLInputElement;
    expect(getByRole("searchbox", { name: "Search tools" })).toBe(box);
    expect(box.type).toBe("text");
    expect(queryByTestId("box-clear")).toBeNull();
  });

  it("clears with Esc, which then goes no further; an empty box passes Esc on", async () => {
    const outside = vi.fn();
    document.addEventListener("keydown", outside);
    try {
      const { getByTestId, queryByTestId } = render(SearchField, { id: "f", label: "Filter", testid: "box" });
      const box = getByTestId("box") as HTMLInputElement;
      await fireEvent.input(box, { target: { value: "tools/call" } });
      expect(getByTestId("box-clear")).toBeTruthy();
      await fireEvent.keyDown(box, { key: "Escape" });
      expect(box.value).toBe("");
      expect(queryByTestId("box-clear")).toBeNull();
      expect(outside).not.toHaveBeenCalled();
      // Empty: Esc is the window's again (stop the reply, close a panel).
      await fireEvent.keyDown(box, { key: "Escape" });
      expect(outside).toHaveBeenCalledOnce();
    } finally {
      document.removeEventListener("keydown", outside);
    }
  });

  it("names its clear button as asked, and the button empties the box and gives it the keyboard", async () => {
    const { getByTestId } = render(SearchField, { id: "f", label: "Filter", testid: "box", clearLabel: "Clear the filter" });
    const box = getByTestId("box") as HTMLInputElement;
    await fireEvent.input(box, { target: { value: "initialize" } });
    const clear = getByTestId("box-clear");
    expect(clear.getAttribute("aria-label")).toBe("Clear the filter");
    await fireEvent.click(clear);
    expect(box.value).toBe("");
    expect(document.activeElement).toBe(box);
  });
});
