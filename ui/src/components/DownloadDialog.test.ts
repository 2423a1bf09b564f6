import { describe, expect, it, vi, beforeEach } from "vitest";
import { render, fireEvent, waitFor } from "@testing-library/svelte";
import type { ViewEvent } from "../lib/api";

let handler: ((event: ViewEvent) => void) | null = null;
const answerDownload = vi.fn(async (_id: string, _accept: boolean) => 1);

vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: {
    onViewEvent: async (h: (event: ViewEvent) => void) => {
      handler = h;
      return () => {};
    },
    answerDownload: (id: string, accept: boolean) => answerDownload(id, accept),
  },
}));

import DownloadDialog from "./DownloadDialog.svelte";
import { formatBytes } from "../lib/downloads";

const offer: ViewEvent = {
  type: "download_request",
  viewId: "v1",
  requestId: "r1",
  tool: "export_chart",
  files: [
    { name: "chart.png", mime: "image/png", size: 2048 },
    { name: "data.csv", mime: null, size: 10 },
  ],
};

beforeEach(() => {
  handler = null;
  answerDownload.mockClear();
});

describe("DownloadDialog", () => {
  it("asks before saving what a view offers, and saves only when the person agrees", async () => {
    const { findByTestId, queryByTestId, getByText } = render(DownloadDialog);
    await waitFor(() => expect(handler).not.toBeNull());
    expect(queryByTestId("download-confirm")).toBeNull();
    handler!(offer);
    const dialog = await findByTestId("download-confirm");
    expect(dialog.textContent).toContain("export_chart");
    getByText("chart.png");
    getByText("data.csv");
    await fireEvent.click(await findByTestId("download-save"));
    expect(answerDownload).toHaveBeenCalledWith("r1", true);
    await waitFor(() => expect(queryByTestId("download-confirm")).toBeNull());
  });

  it("declines without saving, and shows what happened to an offer", async () => {
    const { findByTestId } = render(DownloadDialog);
    await waitFor(() => expect(handler).not.toBeNull());
    handler!(offer);
    await fireEvent.click(await findByTestId("download-cancel"));
    expect(answerDownload).toHaveBeenCalledWith("r1", false);
    handler!({ type: "download_result", viewId: "v1", message: "The view's download was refused: nothing to download" });
    expect((await findByTestId("download-note")).textContent).toContain("refused");
  });

  it("writes sizes a person reads", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(3.2 * 1024 * 1024)).toBe("3.2 MiB");
  });
});
