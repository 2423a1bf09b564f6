// The tools panel's form, read from a tool's `inputSchema` (JSON Schema): the fields it can
// show, their starting values (the schema's defaults), and the arguments they make, checked.
// Pure. A schema the form cannot express in full (references, unions, arrays of objects, free
// maps…) gets no form at all: the raw JSON editor takes over, so nothing is silently dropped.

/** A field's value as the form holds it: text as typed (numbers and lists too), booleans as
 * checked, a choice as its option's JSON ("" for none). */
export type FieldValue = string | boolean;
/** Field values by `Field.key`. */
export type Values = Record<string, FieldValue>;

interface FieldBase {
  /** The property's name in its object. */
  name: string;
  /** Unique in the form: the property path, each name URI-encoded, joined with "/". */
  key: string;
  path: string[];
  label: string;
  description: string | null;
  required: boolean;
  /** The schema's default (undefined: none). */
  default: unknown;
}

export interface TextField extends FieldBase {
  kind: "text";
  /** The schema's `format` (a hint: `email`, `uri`, `date`, `date-time`…). */
  format: string | null;
  minLength: number | null;
  maxLength: number | null;
  pattern: string | null;
}

/** A value from the schema's `enum`. */
export interface ChoiceField extends FieldBase {
  kind: "choice";
  options: unknown[];
}

export interface NumberField extends FieldBase {
  kind: "number";
  integer: boolean;
  /** Inclusive bounds (`minimum` / `maximum`). */
  minimum: number | null;
  maximum: number | null;
  /** Exclusive bounds (draft 6+ numbers, or draft 4's booleans turned into numbers). */
  exclusiveMinimum: number | null;
  exclusiveMaximum: number | null;
}

export interface BooleanField extends FieldBase {
  kind: "boolean";
}

/** An array of strings or numbers, one item per line. */
export interface ListField extends FieldBase {
  kind: "list";
  item: "string" | "number" | "integer";
  minItems: number | null;
  maxItems: number | null;
}

/** A nested object, shown as a fieldset of its own fields. */
export interface ObjectField extends FieldBase {
  kind: "object";
  fields: Field[];
}

export type Field = TextField | ChoiceField | NumberField | BooleanField | ListField | ObjectField;

/** The form for a schema, or why the JSON editor has to be used instead. */
export type FormPlan = { fields: Field[]; unsupported: null } | { fields: null; unsupported: string };

export interface FieldError {
  key: string;
  label: string;
  message: string;
}

export type Built = { arguments: Record<string, unknown>; errors: [] } | { arguments: null; errors: FieldError[] };

type Schema = Record<string, unknown>;

class Unsupported extends Error {}

function isObject(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function numberOr(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function isPrimitive(value: unknown): boolean {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

/** `{anyOf: [X, {type: "null"}]}` (Pydantic's optional fields) is X, keeping the outer title,
 * description and default. */
function withoutNullUnion(schema: Schema): Schema {
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const options = schema[keyword];
    if (!Array.isArray(options)) continue;
    const rest = options.filter((o) => !(isObject(o) && o.type === "null" && Object.keys(o).length === 1));
    if (options.length === 2 && rest.length === 1 && isObject(rest[0])) {
      const { [keyword]: _union, ...outer } = schema;
      return { ...rest[0], ...outer };
    }
  }
  return schema;
}

/** The one JSON type a schema stands for (`["string", "null"]` is a string), or null. */
function typeOf(schema: Schema): string | null {
  const type = schema.type;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) {
    const concrete = type.filter((t) => t !== "null");
    return concrete.length === 1 && typeof concrete[0] === "string" ? concrete[0] : null;
  }
  if (Array.isArray(schema.enum)) return "enum";
  if (isObject(schema.properties)) return "object";
  return null;
}

export function fieldKey(path: string[]): string {
  return path.map(encodeURIComponent).join("/");
}

function field(name: string, path: string[], raw: unknown, required: boolean): Field {
  if (!isObject(raw)) throw new Unsupported(`${name}: its schema is not an object`);
  const schema = withoutNullUnion(raw);
  for (const keyword of ["$ref", "anyOf", "oneOf", "allOf", "not", "if", "const"]) {
    if (keyword in schema) throw new Unsupported(`${name} uses "${keyword}"`);
  }
  const base: FieldBase = {
    name,
    key: fieldKey(path),
    path,
    label: typeof schema.title === "string" && schema.title.trim() ? schema.title : name,
    description: typeof schema.description === "string" ? schema.description : null,
    required,
    default: schema.default,
  };
  const type = typeOf(schema);
  if (Array.isArray(schema.enum)) {
    if (!schema.enum.every(isPrimitive) || schema.enum.length === 0) throw new Unsupported(`${name}: its enum is not a list of plain values`);
    return { ...base, kind: "choice", options: schema.enum };
  }
  switch (type) {
    case "string":
      return {
        ...base,
        kind: "text",
        format: typeof schema.format === "string" ? schema.format : null,
        minLength: numberOr(schema.minLength),
        maxLength: numberOr(schema.maxLength),
        pattern: typeof schema.pattern === "string" ? schema.pattern : null,
      };
    case "number":
    case "integer": {
      const minimum = numberOr(schema.minimum);
      const maximum = numberOr(schema.maximum);
      const exclusive = (value: unknown, bound: number | null) => (value === true ? bound : numberOr(value));
      return {
        ...base,
        kind: "number",
        integer: type === "integer",
        minimum: schema.exclusiveMinimum === true ? null : minimum,
        maximum: schema.exclusiveMaximum === true ? null : maximum,
        exclusiveMinimum: exclusive(schema.exclusiveMinimum, minimum),
        exclusiveMaximum: exclusive(schema.exclusiveMaximum, maximum),
      };
    }
    case "boolean":
      return { ...base, kind: "boolean" };
    case "array": {
      const items = isObject(schema.items) ? withoutNullUnion(schema.items) : null;
      const item = items && !("enum" in items) && !("$ref" in items) ? typeOf(items) : null;
      if (item !== "string" && item !== "number" && item !== "integer") {
        throw new Unsupported(`${name} is a list of something other than text or numbers`);
      }
      return { ...base, kind: "list", item, minItems: numberOr(schema.minItems), maxItems: numberOr(schema.maxItems) };
    }
    case "object": {
      if (!isObject(schema.properties) || Object.keys(schema.properties).length === 0) {
        throw new Unsupported(`${name} is an object with no listed properties`);
      }
      return { ...base, kind: "object", fields: fields(schema, path) };
    }
    default:
      throw new Unsupported(`${name} has no single type the form can show`);
  }
}

function fields(schema: Schema, path: string[]): Field[] {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : []);
  return Object.entries(properties).map(([name, property]) => field(name, [...path, name], property, required.has(name)));
}

/** The form for a tool's `inputSchema`: its fields, or why it needs the JSON editor. A schema
 * with no properties is a form with no fields (the tool takes no arguments). */
export function formFor(inputSchema: unknown): FormPlan {
  if (!isObject(inputSchema)) return { fields: null, unsupported: "the tool's input schema is not an object" };
  const type = typeOf(inputSchema);
  if (type !== "object" && !(type === null && !("properties" in inputSchema))) {
    return { fields: null, unsupported: "the tool's input schema is not an object schema" };
  }
  try {
    return { fields: fields(inputSchema, []), unsupported: null };
  } catch (e) {
    if (e instanceof Unsupported) return { fields: null, unsupported: e.message };
    throw e;
  }
}

function each(list: Field[], visit: (f: Field) => void) {
  for (const f of list) {
    visit(f);
    if (f.kind === "object") each(f.fields, visit);
  }
}

/** What a field shows for a JSON value, or undefined when the value does not fit it. */
function shown(f: Field, value: unknown): FieldValue | undefined {
  switch (f.kind) {
    case "text":
      return typeof value === "string" ? value : undefined;
    case "choice":
      return f.options.some((o) => o === value) ? JSON.stringify(value) : undefined;
    case "number":
      return typeof value === "number" && Number.isFinite(value) && (!f.integer || Number.isInteger(value)) ? String(value) : undefined;
    case "boolean":
      return typeof value === "boolean" ? value : undefined;
    case "list":
      return Array.isArray(value) && value.every((v) => (f.item === "string" ? typeof v === "string" && !v.includes("\n") : typeof v === "number"))
        ? value.join("\n")
        : undefined;
    case "object":
      return undefined;
  }
}

function empty(f: Field): FieldValue {
  return f.kind === "boolean" ? false : "";
}

function startingValue(f: Field): FieldValue {
  return (f.default !== undefined ? shown(f, f.default) : undefined) ?? empty(f);
}

/** The form's starting values: each field's default where the schema gives one that fits. */
export function initialValues(list: Field[]): Values {
  const values: Values = {};
  each(list, (f) => {
    if (f.kind !== "object") values[f.key] = startingValue(f);
  });
  return values;
}

/** The form's values for arguments (from the JSON editor), or why the form cannot show them. */
export function valuesFrom(list: Field[], args: Record<string, unknown>): { values: Values; problem: null } | { values: null; problem: string } {
  const values: Values = {};
  const fill = (fieldsOf: Field[], object: Record<string, unknown>, where: string): string | null => {
    const known = new Set(fieldsOf.map((f) => f.name));
    const extra = Object.keys(object).find((k) => !known.has(k));
    if (extra !== undefined) return `${where}${extra} is not one of the form's fields`;
    for (const f of fieldsOf) {
      const value = object[f.name];
      if (f.kind === "object") {
        if (value !== undefined && !isObject(value)) return `${f.label} is not an object`;
        const problem = fill(f.fields, isObject(value) ? value : {}, `${where}${f.name}.`);
        if (problem) return problem;
        continue;
      }
      if (value === undefined) {
        // Left out: the server applies its default, which is what the form then shows.
        values[f.key] = startingValue(f);
        continue;
      }
      const v = shown(f, value);
      if (v === undefined) return `${f.label} has a value the form cannot show`;
      values[f.key] = v;
    }
    return null;
  };
  const problem = fill(list, args, "");
  return problem ? { values: null, problem } : { values, problem: null };
}

function parseNumber(f: NumberField | ListField, text: string, label: string): { value: number } | { error: string } {
  const n = Number(text);
  if (text === "" || !Number.isFinite(n)) return { error: `${label} must be a number (not "${text}")` };
  const integer = f.kind === "number" ? f.integer : f.item === "integer";
  if (integer && !Number.isInteger(n)) return { error: `${label} must be a whole number (not "${text}")` };
  return { value: n };
}

function boundsError(f: NumberField, n: number): string | null {
  if (f.minimum !== null && n < f.minimum) return `${f.label} must be at least ${f.minimum}`;
  if (f.maximum !== null && n > f.maximum) return `${f.label} must be at most ${f.maximum}`;
  if (f.exclusiveMinimum !== null && n <= f.exclusiveMinimum) return `${f.label} must be more than ${f.exclusiveMinimum}`;
  if (f.exclusiveMaximum !== null && n >= f.exclusiveMaximum) return `${f.label} must be less than ${f.exclusiveMaximum}`;
  return null;
}

function textError(f: TextField, text: string): string | null {
  const length = [...text].length;
  if (f.minLength !== null && length < f.minLength) return `${f.label} needs at least ${f.minLength} characters`;
  if (f.maxLength !== null && length > f.maxLength) return `${f.label} takes at most ${f.maxLength} characters`;
  if (f.pattern !== null) {
    let pattern: RegExp | null = null;
    try {
      pattern = new RegExp(f.pattern, "u");
    } catch {
      // A pattern JavaScript cannot read is left for the server to check.
    }
    if (pattern && !pattern.test(text)) return `${f.label} must match ${f.pattern}`;
  }
  return null;
}

/** Keys of number fields whose text the browser could not read as a number: an
 * `<input type=number>` then reports "" as its value (and `validity.badInput`). */
export type Unreadable = ReadonlySet<string>;

/** Whether every field (nested ones too) is left empty: no text, no line, nothing chosen, unticked. */
function blank(list: Field[], values: Values, unreadable: Unreadable): boolean {
  return list.every((f) => {
    if (f.kind === "object") return blank(f.fields, values, unreadable);
    if (unreadable.has(f.key)) return false;
    const value = values[f.key] ?? empty(f);
    if (f.kind === "boolean") return value !== true;
    const text = typeof value === "string" ? value : "";
    return f.kind === "number" || f.kind === "list" ? text.trim() === "" : text === "";
  });
}

/** Reads the values into arguments. `strict`: every check applies and any failure means no
 * arguments; otherwise (for the JSON editor's starting text) what cannot be read is kept as
 * typed and missing fields are left out. */
function collect(list: Field[], values: Values, strict: boolean, errors: FieldError[], unreadable: Unreadable): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of list) {
    const fail = (message: string) => errors.push({ key: f.key, label: f.label, message });
    if (f.kind === "object") {
      // An optional object left wholly empty is left out, its own required fields with it
      // (JSON Schema lets it be omitted); once anything in it is filled, its rules apply.
      if (!f.required && blank(f.fields, values, unreadable)) continue;
      const inner = collect(f.fields, values, strict, errors, unreadable);
      if (f.required || Object.keys(inner).length > 0) out[f.name] = inner;
      continue;
    }
    const value = values[f.key] ?? empty(f);
    if (f.kind === "boolean") {
      // An optional box with no default, left unticked, is left out: the server's own default.
      if (value === true || f.required || f.default !== undefined) out[f.name] = value === true;
      continue;
    }
    const text = typeof value === "string" ? value : "";
    if (f.kind === "list") {
      const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
      if (lines.length === 0 && !f.required) continue;
      const items: unknown[] = [];
      for (const line of lines) {
        if (f.item === "string") {
          items.push(line);
          continue;
        }
        const parsed = parseNumber(f, line.trim(), `Each item of ${f.label}`);
        if ("error" in parsed) {
          fail(parsed.error);
          items.push(line.trim());
        } else items.push(parsed.value);
      }
      if (f.minItems !== null && items.length < f.minItems) fail(`${f.label} needs at least ${f.minItems} item${f.minItems === 1 ? "" : "s"}`);
      if (f.maxItems !== null && items.length > f.maxItems) fail(`${f.label} takes at most ${f.maxItems} items`);
      out[f.name] = items;
      continue;
    }
    if (f.kind === "number" && unreadable.has(f.key)) {
      // Typed, but not a number ("1e", "--2"): not the same as left empty.
      fail(`${f.label} must be a number`);
      continue;
    }
    if (text === "" || (f.kind === "number" && text.trim() === "")) {
      if (f.required) fail(`${f.label} is required`);
      continue;
    }
    if (f.kind === "choice") {
      out[f.name] = JSON.parse(text);
    } else if (f.kind === "number") {
      const parsed = parseNumber(f, text.trim(), f.label);
      if ("error" in parsed) {
        fail(parsed.error);
        out[f.name] = text;
      } else {
        const bounds = boundsError(f, parsed.value);
        if (bounds) fail(bounds);
        out[f.name] = parsed.value;
      }
    } else {
      const problem = textError(f, text);
      if (problem) fail(problem);
      out[f.name] = text;
    }
  }
  if (!strict) errors.length = 0;
  return out;
}

/** The arguments the form's values make, or every field's problem. `unreadable`: the number
 * fields holding text that is not a number. */
export function argumentsFrom(list: Field[], values: Values, unreadable: Unreadable = new Set()): Built {
  const errors: FieldError[] = [];
  const args = collect(list, values, true, errors, unreadable);
  return errors.length ? { arguments: null, errors } : { arguments: args, errors: [] };
}

/** The arguments as far as the values go, unchecked: the JSON editor's text when the person
 * switches to it from the form. */
export function draftArguments(list: Field[], values: Values): Record<string, unknown> {
  return collect(list, values, false, [], new Set());
}

/** The JSON editor's text as arguments: a JSON object with the schema's required properties,
 * or what is wrong with it. */
export function parseJsonArguments(text: string, inputSchema: unknown): { arguments: Record<string, unknown>; error: null } | { arguments: null; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === "" ? "{}" : text);
  } catch (e) {
    return { arguments: null, error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!isObject(value)) return { arguments: null, error: "The arguments must be a JSON object: { … }" };
  const required = isObject(inputSchema) && Array.isArray(inputSchema.required) ? inputSchema.required : [];
  const missing = required.filter((r): r is string => typeof r === "string" && !(r in value));
  if (missing.length) return { arguments: null, error: `Missing required ${missing.length === 1 ? "property" : "properties"}: ${missing.join(", ")}` };
  return { arguments: value, error: null };
}

/** The `<input type>` a text field's `format` suggests. */
export function inputType(f: TextField): "text" | "email" | "url" | "date" {
  switch (f.format) {
    case "email":
      return "email";
    case "uri":
    case "url":
      return "url";
    case "date":
      return "date";
    default:
      return "text";
  }
}

/** An example for formats a plain text box takes (shown as its placeholder). */
export function formatHint(f: TextField): string {
  switch (f.format) {
    case "date-time":
      return "2025-01-31T14:30:00Z";
    case "time":
      return "14:30:00";
    case "uuid":
      return "123e4567-e89b-12d3-a456-426614174000";
    case "email":
      return "name@example.com";
    case "uri":
    case "url":
      return "https://…";
    default:
      return "";
  }
}
