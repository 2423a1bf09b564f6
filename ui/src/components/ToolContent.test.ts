import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import { refused } from "../lib/testing/errors";
import ToolContent from "./ToolContent.svelte";

const readResource = vi.fn(async (_server: string, _uri: string): Promise<unknown> => ({ contents: [] }));
vi.mock("../lib/api", async (original) => ({
  ...(await original<typeof import("../lib/api")>()),
  api: { readResource: (server: string, uri: string) => readResource(server, uri) },
}));

afterEach(() => {
  cleanup();
  readResource.mockReset();
});

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("ToolContent", () => {
  it("shows text as text, an image inline, audio with controls, and never a result's markup", () => {
    const { getByTestId, container } = render(ToolContent, {
      blocks: [
        { type: "text", text: "<b>not bold</b>" },
        { type: "image", mimeType: "image/png", data: PNG },
        { type: "audio", mimeType: "audio/wav", data: "UklGRg==" },
        { type: "image", mimeType: "text/html", data: PNG },
      ],
      server: "everything",
      label: "get-tiny-image",
    });
    expect(getByTestId("content-text").textContent).toBe("<b>not bold</b>");
    expect(container.querySelector("b")).toBeNull();
    const image = getByTestId("content-image") as HTMLImageElement;
    expect(image.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    expect(image.getAttribute("alt")).toBe("Image (image/png) from get-tiny-image");
    expect(getByTestId("content-audio").hasAttribute("controls")).toBe(true);
    expect(getByTestId("content-other").textContent).toBe("[an image Porthole does not show (text/html)]");
  });

  it("reads a linked resource from its server, and says why when it cannot", async () => {
    readResource.mockResolvedValueOnce({ contents: [{ uri: "demo://a", mimeType: "text/plain", text: "Hello from a" }] });
    readResource.mockResolvedValueOnce({ contents: [{ uri: "demo://b", mimeType: "application/octet-stream", blob: "AAAA" }] });
    readResource.mockRejectedValueOnce(refused("server", "everything could not read demo://c: not found"));
    const link = (n: string) => ({ type: "resource_link", uri: `demo://${n}`, name: n });
    const { getAllByTestId, findByTestId, findAllByTestId } = render(ToolContent, {
      blocks: [link("a"), link("b"), link("c")],
      server: "everything",
      label: "get-resource-links",
    });
    const buttons = getAllByTestId("content-link-read");
    await fireEvent.click(buttons[0]);
    expect(readResource).toHaveBeenCalledWith("everything", "demo://a");
    expect((await findByTestId("content-link-text")).textContent).toBe("Hello from a");
    await fireEvent.click(buttons[1]);
    expect((await findByTestId("content-link-note")).textContent).toBe("Binary contents (application/octet-stream, about 3 bytes).");
    await fireEvent.click(buttons[2]);
    await waitFor(async () =>
      expect((await findAllByTestId("content-link-error"))[0].textContent).toBe("Could not read it: everything could not read demo://c: not found"),
    );
  });
});
