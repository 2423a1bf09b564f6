// Turns an elicitation's requested schema (an object of primitive properties, per the MCP spec)
// into form fields, and the form's values back into the answer, checked.
export type FieldKind = "text" | "number" | "integer" | "boolean" | "choice";

export interface Field {
  name: string;
  label: string;
  description: string | null;
  kind: FieldKind;
  required: boolean;
  options: string[];
  initial: string | boolean;
}

type Prop = Record<string, unknown>;

/** `schema`: the question's requested schema as sent (anything but an object gives no fields). */
export function fieldsFromSchema(requested: unknown): Field[] {
  const schema = requested && typeof requested === "object" && !Array.isArray(requested) ? (requested as Record<string, unknown>) : null;
  const props = (schema?.properties ?? {}) as Record<string, Prop>;
  const required = new Set(Array.isArray(schema?.required) ? (schema!.required as string[]) : []);
  return Object.entries(props).map(([name, prop]) => {
    const options = Array.isArray(prop.enum) ? (prop.enum as unknown[]).map(String) : [];
    const kind: FieldKind = options.length
      ? "choice"
      : prop.type === "boolean"
        ? "boolean"
        : prop.type === "integer"
          ? "integer"
          : prop.type === "number"
            ? "number"
            : "text";
    const fallback = kind === "boolean" ? false : kind === "choice" ? options[0] ?? "" : "";
    const initial = prop.default === undefined ? fallback : kind === "boolean" ? Boolean(prop.default) : String(prop.default);
    return {
      name,
      label: typeof prop.title === "string" ? prop.title : name,
      description: typeof prop.description === "string" ? prop.description : null,
      kind,
      required: required.has(name),
      options,
      initial,
    };
  });
}

/** The answer's content, or the first problem to show the user. Empty optional fields are left out. */
export function collectAnswer(
  fields: Field[],
  values: Record<string, string | boolean>,
): { content: Record<string, string | number | boolean> } | { error: string } {
  const content: Record<string, string | number | boolean> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === "boolean") {
      content[f.name] = Boolean(v);
      continue;
    }
    const text = String(v ?? "").trim();
    if (!text) {
      if (f.required) return { error: `${f.label} is required.` };
      continue;
    }
    if (f.kind === "number" || f.kind === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.kind === "integer" && !Number.isInteger(n))) {
        return { error: `${f.label} must be ${f.kind === "integer" ? "a whole number" : "a number"}.` };
      }
      content[f.name] = n;
    } else if (f.kind === "choice" && !f.options.includes(text)) {
      return { error: `${f.label} must be one of ${f.options.join(", ")}.` };
    } else {
      content[f.name] = text;
    }
  }
  return { content };
}
