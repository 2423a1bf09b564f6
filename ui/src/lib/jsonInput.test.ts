import { describe, expect, it } from "vitest";
import { parseJsonInput } from "./jsonInput";

describe("parseJsonInput", () => {
  it("gives the value, or says which field is not JSON", () => {
    expect(parseJsonInput('{"a": [1]}', "tool input")).toEqual({ a: [1] });
    expect(() => parseJsonInput("{a:", "tool result")).toThrow(/^The tool result is not JSON: /);
  });
});
