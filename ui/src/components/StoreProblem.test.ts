import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/svelte";
import StoreProblem from "./StoreProblem.svelte";
import { refused } from "../lib/testing/errors";

const damaged = {
  code: "store_damaged" as const,
  message: "the conversation store cannot be opened: the conversation store /p/porthole.db is damaged",
};

describe("StoreProblem", () => {
  afterEach(cleanup);

  it("offers to move a damaged store aside and says where it went", async () => {
    const onRecover = vi.fn(async () => "The damaged store was kept as /p/porthole.db.damaged-x; Porthole restarts with a fresh one.");
    render(StoreProblem, { problem: damaged, onRecover });
    expect(screen.getByTestId("store-problem").textContent).toContain("/p/porthole.db is damaged");
    await fireEvent.click(screen.getByTestId("store-recover"));
    expect(onRecover).toHaveBeenCalledTimes(1);
    expect((await screen.findByTestId("store-recovered")).textContent).toContain("porthole.db.damaged-x");
    expect(screen.queryByTestId("store-recover")).toBeNull();
  });

  it("shows why moving it aside failed and lets the person try again", async () => {
    const onRecover = vi.fn(async () => {
      throw refused("io", "cannot move it to /p/porthole.db.damaged-x: permission denied");
    });
    render(StoreProblem, { problem: damaged, onRecover });
    await fireEvent.click(screen.getByTestId("store-recover"));
    expect((await screen.findByTestId("store-recover-error")).textContent).toContain("permission denied");
    expect(screen.getByTestId("store-recover")).not.toBeNull();
  });

  it("offers nothing for a store that is not damaged", () => {
    render(StoreProblem, { problem: { code: "store", message: "the conversation store cannot be opened: permission denied" }, onRecover: vi.fn() });
    expect(screen.getByTestId("store-problem").textContent).toContain("permission denied");
    expect(screen.queryByTestId("store-recover")).toBeNull();
  });
});
