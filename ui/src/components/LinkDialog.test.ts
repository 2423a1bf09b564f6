import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import type { ViewEvent } from "../lib/api";

let handler: ((event: ViewEvent) => void) | null = null;
const answerLink = vi.fn(async (_id: number, _open: boolean) => {});

vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    onViewEvent: async (h: (event: ViewEvent) => void) => {
      handler = h;
      return () => {};
    },
    answerLink: (id: number, open: boolean) => answerLink(id, open),
  },
}));

import LinkDialog from "./LinkDialog.svelte";

const request = (requestId: number, url: string): ViewEvent => ({ type: "link_request", viewId: "v1", requestId, server: "demo", tool: "weather", url });

afterEach(cleanup);
beforeEach(() => {
  handler = null;
  answerLink.mockReset().mockImplementation(async () => {});
});

describe("LinkDialog", () => {
  it("shows the whole address and opens it only when the person says so; Esc does not open it", async () => {
    const view = render(LinkDialog);
    await waitFor(() => expect(handler).not.toBeNull());
    handler!(request(3, "https://open-meteo.com/en/docs?latitude=52.52&longitude=13.41"));
    handler!(request(4, "https://example.com/"));
    const dialog = await view.findByTestId("link-dialog");
    expect(dialog.textContent).toContain("The weather view of demo wants to open a link");
    expect(view.getByTestId("link-url").textContent).toBe("https://open-meteo.com/en/docs?latitude=52.52&longitude=13.41");
    expect(dialog.textContent).toContain("https://open-meteo.com");
    await fireEvent.click(view.getByTestId("link-open"));
    expect(answerLink).toHaveBeenCalledWith(3, true);
    await waitFor(() => expect(view.getByTestId("link-url").textContent).toBe("https://example.com/"));
    await fireEvent.keyDown(window, { key: "Escape" });
    expect(answerLink).toHaveBeenLastCalledWith(4, false);
    await waitFor(() => expect(view.queryByTestId("link-dialog")).toBeNull());
  });

  it("stops asking once the request is settled (the view went, or it waited too long)", async () => {
    const view = render(LinkDialog);
    await waitFor(() => expect(handler).not.toBeNull());
    handler!(request(5, "https://example.com/"));
    await view.findByTestId("link-dialog");
    handler!({ type: "link_settled", viewId: "v1", requestId: 5 });
    await waitFor(() => expect(view.queryByTestId("link-dialog")).toBeNull());
  });
});
