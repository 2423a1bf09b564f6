import { describe, expect, it } from "vitest";
import { collectAnswer, fieldsFromSchema } from "./elicitation";

const schema = {
  type: "object",
  properties: {
    name: { type: "string", title: "Name", default: "Ada" },
    age: { type: "integer", title: "Age" },
    score: { type: "number" },
    color: { type: "string", enum: ["red", "green"], default: "green" },
    subscribe: { type: "boolean", default: true },
  },
  required: ["name"],
};

describe("elicitation forms", () => {
  it("makes a field of each property with its default", () => {
    const fields = fieldsFromSchema(schema);
    expect(fields.map((f) => [f.name, f.kind, f.required, f.initial])).toEqual([
      ["name", "text", true, "Ada"],
      ["age", "integer", false, ""],
      ["score", "number", false, ""],
      ["color", "choice", false, "green"],
      ["subscribe", "boolean", false, true],
    ]);
  });

  it("collects typed values and leaves empty optional fields out", () => {
    const fields = fieldsFromSchema(schema);
    const answer = collectAnswer(fields, { name: " Grace ", age: "85", score: "", color: "red", subscribe: false });
    expect(answer).toEqual({ content: { name: "Grace", age: 85, color: "red", subscribe: false } });
  });

  it("refuses missing required values and bad numbers with a reason", () => {
    const fields = fieldsFromSchema(schema);
    expect(collectAnswer(fields, { name: "", color: "red" })).toEqual({ error: "Name is required." });
    expect(collectAnswer(fields, { name: "x", age: "1.5", color: "red" })).toEqual({ error: "Age must be a whole number." });
    expect(collectAnswer(fields, { name: "x", score: "abc", color: "red" })).toEqual({ error: "score must be a number." });
  });
});
