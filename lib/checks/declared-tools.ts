/**
 * The tools a conversation's agents declare, with each parameter's types and whether it is required.
 * Parameters come as a flat map (`{city: "string"}`) or as a JSON Schema object (`{type: "object",
 * properties, required}`). In a flat map every parameter is required unless its type allows null,
 * ends in `?` or is an object saying `optional: true` / `required: false`.
 */
import { isRecord } from "./scope";

export type DeclaredParam = { types: string[]; required: boolean };
export type DeclaredTool = { name: string; params: Map<string, DeclaredParam> | null };

const aliases: Record<string, string> = {
  str: "string", text: "string", int: "integer", float: "number", double: "number", bool: "boolean",
  dict: "object", map: "object", list: "array",
};
const known = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

function typesOf(spec: unknown): { types: string[]; optionalMark: boolean } {
  const raw = isRecord(spec) ? spec.type : spec;
  let optionalMark = false;
  const names = typeof raw === "string" ? raw.split(/[|,]/) : Array.isArray(raw) ? raw.filter((t): t is string => typeof t === "string") : [];
  const types = names
    .map((t) => {
      let name = t.trim().toLowerCase();
      if (name.endsWith("?")) {
        optionalMark = true;
        name = name.slice(0, -1);
      }
      return aliases[name] ?? name;
    })
    .filter((t) => known.has(t));
  return { types, optionalMark };
}

function paramsOf(parameters: unknown): Map<string, DeclaredParam> | null {
  if (!isRecord(parameters)) return null;
  const schema = parameters.type === "object" && isRecord(parameters.properties);
  const props = schema ? (parameters.properties as Record<string, unknown>) : parameters;
  const required = schema && Array.isArray(parameters.required) ? new Set(parameters.required) : null;
  const out = new Map<string, DeclaredParam>();
  for (const [name, spec] of Object.entries(props)) {
    const { types, optionalMark } = typesOf(spec);
    const flagged = isRecord(spec) && (spec.optional === true || spec.required === false);
    const isRequired = required ? required.has(name) : !optionalMark && !flagged && !types.includes("null");
    out.set(name, { types, required: isRequired });
  }
  return out;
}

/** Every tool declared by the conversation's agents, by name. */
export function declaredTools(agents: unknown): Map<string, DeclaredTool> {
  const tools = new Map<string, DeclaredTool>();
  if (!Array.isArray(agents)) return tools;
  for (const agent of agents) {
    if (!isRecord(agent)) continue;
    const entries = isRecord(agent.tools) ? Object.entries(agent.tools) : Array.isArray(agent.tools) ? agent.tools.map((t) => ["", t] as const) : [];
    for (const [key, def] of entries) {
      const fn = isRecord(def) && isRecord(def.function) ? def.function : def;
      const name = isRecord(fn) && typeof fn.name === "string" ? fn.name : typeof fn === "string" ? fn : key;
      if (name) tools.set(name, { name, params: isRecord(fn) ? paramsOf(fn.parameters) : null });
    }
  }
  return tools;
}

/** JSON type of a value as declared types name them (`integer` for whole numbers). */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

export function typeMatches(value: unknown, type: string): boolean {
  const actual = jsonType(value);
  return actual === type || (type === "number" && actual === "integer");
}
