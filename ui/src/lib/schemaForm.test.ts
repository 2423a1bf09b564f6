import { describe, expect, it } from "vitest";
import {
  argumentsFrom,
  draftArguments,
  fieldKey,
  formFor,
  initialValues,
  parseJsonArguments,
  valuesFrom,
  type Field,
  type Values,
} from "./schemaForm";

function form(schema: unknown): Field[] {
  const plan = formFor(schema);
  if (plan.fields === null) throw new Error(`no form: ${plan.unsupported}`);
  return plan.fields;
}

const key = (...path: string[]) => fieldKey(path);

describe("formFor", () => {
  it("reads each property into a field of the right kind, required marked", () => {
    const fields = form({
      type: "object",
      properties: {
        city: { type: "string", title: "City", description: "Where" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        days: { type: "integer", minimum: 1, maximum: 7 },
        ratio: { type: "number", exclusiveMinimum: 0 },
        detailed: { type: "boolean" },
        tags: { type: "array", items: { type: "string" } },
        where: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] },
      },
      required: ["city", "days"],
    });
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["city", "text", true],
      ["unit", "choice", false],
      ["days", "number", true],
      ["ratio", "number", false],
      ["detailed", "boolean", false],
      ["tags", "list", false],
      ["where", "object", false],
    ]);
    expect(fields[0]).toMatchObject({ label: "City", description: "Where" });
    expect(fields[2]).toMatchObject({ integer: true, minimum: 1, maximum: 7 });
    expect(fields[3]).toMatchObject({ integer: false, exclusiveMinimum: 0, minimum: null });
    const where = fields[6];
    expect(where.kind === "object" && where.fields.map((f) => [f.key, f.required])).toEqual([[key("where", "lat"), true]]);
  });

  it("takes what schema generators write for optional values", () => {
    // schemars: Option<u64>; Pydantic: Optional[str] with a default of null.
    const fields = form({
      type: "object",
      properties: {
        seconds: { type: ["integer", "null"], format: "uint64", minimum: 0 },
        note: { anyOf: [{ type: "string" }, { type: "null" }], default: null, title: "Note" },
      },
    });
    expect(fields.map((f) => [f.name, f.kind])).toEqual([
      ["seconds", "number"],
      ["note", "text"],
    ]);
    expect(fields[1].label).toBe("Note");
  });

  it("gives a tool without arguments an empty form", () => {
    expect(formFor({ type: "object" })).toEqual({ fields: [], unsupported: null });
    expect(formFor({ type: "object", properties: {} })).toEqual({ fields: [], unsupported: null });
  });

  it("leaves what it cannot express to the JSON editor, saying which property", () => {
    const cases: [unknown, string][] = [
      [{ type: "object", properties: { a: { $ref: "#/$defs/A" } } }, 'a uses "$ref"'],
      [{ type: "object", properties: { a: { anyOf: [{ type: "string" }, { type: "number" }] } } }, 'a uses "anyOf"'],
      [{ type: "object", properties: { a: { type: "array", items: { type: "object" } } } }, "a is a list of something other than text or numbers"],
      [{ type: "object", properties: { a: { type: "object", additionalProperties: { type: "string" } } } }, "a is an object with no listed properties"],
      [{ type: "object", properties: { a: {} } }, "a has no single type the form can show"],
      [{ type: "object", properties: { a: { type: ["string", "number"] } } }, "a has no single type the form can show"],
      [{ type: "array" }, "the tool's input schema is not an object schema"],
      ["nope", "the tool's input schema is not an object"],
    ];
    for (const [schema, reason] of cases) expect(formFor(schema)).toEqual({ fields: null, unsupported: reason });
  });
});

describe("values and arguments", () => {
  const schema = {
    type: "object",
    properties: {
      city: { type: "string" },
      unit: { type: "string", enum: ["celsius", "fahrenheit"], default: "celsius" },
      days: { type: "integer", default: 3, minimum: 1, maximum: 7 },
      detailed: { type: "boolean", default: true },
      verbose: { type: "boolean" },
      tags: { type: "array", items: { type: "string" }, default: ["a", "b"] },
      ids: { type: "array", items: { type: "integer" } },
    },
    required: ["city"],
  };

  it("pre-fills the defaults", () => {
    const fields = form(schema);
    expect(initialValues(fields)).toEqual({
      city: "",
      unit: '"celsius"',
      days: "3",
      detailed: true,
      verbose: false,
      tags: "a\nb",
      ids: "",
    });
  });

  it("makes typed arguments, leaving out what is empty and optional", () => {
    const fields = form(schema);
    const values = { ...initialValues(fields), city: "Bergen", days: " 5 ", ids: "1\n\n 22 \n" };
    expect(argumentsFrom(fields, values)).toEqual({
      arguments: { city: "Bergen", unit: "celsius", days: 5, detailed: true, tags: ["a", "b"], ids: [1, 22] },
      errors: [],
    });
    // An optional box with no default is sent only when ticked; one with a default always.
    expect(argumentsFrom(fields, { ...values, verbose: true, detailed: false }).arguments).toMatchObject({ verbose: true, detailed: false });
    expect(argumentsFrom(fields, { ...values, unit: "", days: "", tags: "", ids: "" }).arguments).toEqual({ city: "Bergen", detailed: true });
  });

  it("enforces required fields, whole numbers, bounds and item types", () => {
    const fields = form(schema);
    const values: Values = { ...initialValues(fields), city: "", days: "2.5", ids: "1\nx" };
    const built = argumentsFrom(fields, values);
    expect(built.arguments).toBeNull();
    expect(built.errors.map((e) => [e.key, e.message])).toEqual([
      ["city", "city is required"],
      ["days", 'days must be a whole number (not "2.5")'],
      ["ids", 'Each item of ids must be a number (not "x")'],
    ]);
    expect(argumentsFrom(fields, { ...values, city: "x", days: "8", ids: "" }).errors.map((e) => e.message)).toEqual(["days must be at most 7"]);
    expect(argumentsFrom(fields, { ...values, city: "x", days: "1e0", ids: "" }).arguments).toMatchObject({ days: 1 });
  });

  it("checks text length, patterns, exclusive bounds and list sizes", () => {
    const fields = form({
      type: "object",
      properties: {
        code: { type: "string", pattern: "^[A-Z]{3}$", maxLength: 3 },
        ratio: { type: "number", exclusiveMinimum: 0 },
        old: { type: "number", minimum: 0, exclusiveMinimum: true },
        pair: { type: "array", items: { type: "number" }, minItems: 2 },
      },
    });
    const built = argumentsFrom(fields, { code: "abcd", ratio: "0", old: "0", pair: "1" });
    expect(built.errors.map((e) => e.message)).toEqual([
      "code takes at most 3 characters",
      "ratio must be more than 0",
      "old must be more than 0",
      "pair needs at least 2 items",
    ]);
    expect(argumentsFrom(fields, { code: "ABC", ratio: "0.5", old: "1", pair: "1\n2.5" }).arguments).toEqual({
      code: "ABC",
      ratio: 0.5,
      old: 1,
      pair: [1, 2.5],
    });
  });

  it("keeps numeric enum values as numbers", () => {
    const fields = form({ type: "object", properties: { level: { enum: [1, 2, 3] } }, required: ["level"] });
    expect(fields[0].kind).toBe("choice");
    expect(argumentsFrom(fields, { level: "" }).errors.map((e) => e.message)).toEqual(["level is required"]);
    expect(argumentsFrom(fields, { level: "2" }).arguments).toEqual({ level: 2 });
  });

  it("sends a nested object only when it has something, and checks its required fields", () => {
    const nested = {
      type: "object",
      properties: { where: { type: "object", properties: { lat: { type: "number" }, lon: { type: "number" } }, required: ["lat"] } },
    };
    const fields = form(nested);
    const lat = key("where", "lat");
    const lon = key("where", "lon");
    // An optional object left empty is left out, even with required fields inside.
    expect(argumentsFrom(fields, { [lat]: "", [lon]: " " })).toEqual({ arguments: {}, errors: [] });
    expect(draftArguments(fields, { [lat]: "", [lon]: "" })).toEqual({});
    // Once something in it is filled, its required fields are.
    expect(argumentsFrom(fields, { [lat]: "", [lon]: "5" }).errors.map((e) => e.message)).toEqual(["lat is required"]);
    expect(argumentsFrom(fields, { [lat]: "60.4", [lon]: "" }).arguments).toEqual({ where: { lat: 60.4 } });
    const optional = form({ ...nested, properties: { where: { ...nested.properties.where, required: [] } } });
    expect(argumentsFrom(optional, { [lat]: "", [lon]: "" }).arguments).toEqual({});
    // A required object always is sent, and its required fields are required.
    const required = form({ ...nested, required: ["where"] });
    expect(argumentsFrom(required, { [lat]: "", [lon]: "" }).errors.map((e) => e.message)).toEqual(["lat is required"]);
    expect(argumentsFrom(required, { [lat]: "1", [lon]: "" }).arguments).toEqual({ where: { lat: 1 } });
  });

  it("an optional object counts as filled by anything in it, nested objects and ticked boxes too", () => {
    const fields = form({
      type: "object",
      properties: {
        outer: {
          type: "object",
          properties: {
            id: { type: "string" },
            flag: { type: "boolean" },
            inner: { type: "object", properties: { n: { type: "number" }, tags: { type: "array", items: { type: "string" } } } },
          },
          required: ["id"],
        },
      },
    });
    const values = { [key("outer", "id")]: "", [key("outer", "flag")]: false, [key("outer", "inner", "n")]: "", [key("outer", "inner", "tags")]: "\n" };
    expect(argumentsFrom(fields, values)).toEqual({ arguments: {}, errors: [] });
    expect(argumentsFrom(fields, { ...values, [key("outer", "flag")]: true }).errors.map((e) => e.message)).toEqual(["id is required"]);
    expect(argumentsFrom(fields, { ...values, [key("outer", "inner", "n")]: "2" }).errors.map((e) => e.message)).toEqual(["id is required"]);
    expect(argumentsFrom(fields, { ...values, [key("outer", "id")]: "x", [key("outer", "inner", "n")]: "2" }).arguments).toEqual({
      outer: { id: "x", inner: { n: 2 } },
    });
  });

  it("a number field holding text that is not a number says so, rather than passing for empty", () => {
    const fields = form({
      type: "object",
      properties: { count: { type: "integer" }, size: { type: "number" }, where: { type: "object", properties: { lat: { type: "number" } } } },
      required: ["size"],
    });
    const values = { count: "", size: "", [key("where", "lat")]: "" };
    const unreadable = new Set(["count", "size", key("where", "lat")]);
    expect(argumentsFrom(fields, values, unreadable).errors.map((e) => [e.key, e.message])).toEqual([
      ["count", "count must be a number"],
      ["size", "size must be a number"],
      [key("where", "lat"), "lat must be a number"],
    ]);
    expect(argumentsFrom(fields, { ...values, size: "2" }, new Set(["count"])).errors.map((e) => e.message)).toEqual(["count must be a number"]);
    expect(argumentsFrom(fields, { ...values, size: "2" }).arguments).toEqual({ size: 2 });
  });

  it("goes to the JSON editor with what was typed, and back when the form can show it", () => {
    const fields = form(schema);
    const values = { ...initialValues(fields), days: "two" };
    const draft = draftArguments(fields, values);
    expect(draft).toEqual({ unit: "celsius", days: "two", detailed: true, tags: ["a", "b"] });

    const back = valuesFrom(fields, { city: "Oslo", days: 4, ids: [7] });
    expect(back.values).toEqual({ ...initialValues(fields), city: "Oslo", days: "4", ids: "7" });
    expect(valuesFrom(fields, { city: "Oslo", extra: 1 })).toEqual({ values: null, problem: "extra is not one of the form's fields" });
    expect(valuesFrom(fields, { days: 2.5 })).toEqual({ values: null, problem: "days has a value the form cannot show" });
    expect(valuesFrom(fields, { unit: "kelvin" }).problem).toBe("unit has a value the form cannot show");
  });
});

describe("parseJsonArguments", () => {
  const schema = { type: "object", properties: { a: { type: "string" }, b: {} }, required: ["a", "b"] };

  it("takes a JSON object with the required properties", () => {
    expect(parseJsonArguments('{"a": "x", "b": [1, {"c": null}]}', schema)).toEqual({ arguments: { a: "x", b: [1, { c: null }] }, error: null });
    expect(parseJsonArguments("  ", { type: "object" })).toEqual({ arguments: {}, error: null });
  });

  it("says what is wrong otherwise", () => {
    expect(parseJsonArguments('{"a": ', schema).error).toMatch(/^Not valid JSON: /);
    expect(parseJsonArguments("[1]", schema).error).toBe("The arguments must be a JSON object: { … }");
    expect(parseJsonArguments('"a"', schema).error).toBe("The arguments must be a JSON object: { … }");
    expect(parseJsonArguments('{"b": 1}', schema).error).toBe("Missing required property: a");
    expect(parseJsonArguments("{}", schema).error).toBe("Missing required properties: a, b");
  });
});
