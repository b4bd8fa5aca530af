/**
 * The words of a schema refusal: the validator's output turned into
 * sentences a model can act on, naming the argument by its path
 * (`labels[1]`, `meta.kind`): `unexpected argument "foo" (not declared)`,
 * `missing required argument "owner"`, `argument "board": must match the
 * pattern ^demo-[^/]*$`. Used by src/mcp/schema.ts `compileSchema`.
 *
 * @module
 */

/** The refusal of a value whose property names are not well-formed UTF-16. */
export const LONE_SURROGATE_NAME: string =
  "an argument name is not well-formed Unicode (it holds a lone surrogate): rename it";

/** One error of the validator's output (its `errors`). */
export interface OutputUnit {
  keyword: string;
  keywordLocation: string;
  instanceLocation: string;
  error: string;
}

/** Keywords whose error only says "a child failed": the child's own error says more. */
const CONTAINERS = new Set([
  "properties",
  "patternProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "false",
  "$ref",
  "allOf",
  "dependentSchemas",
  "unevaluatedItems",
]);

/**
 * Turn validator output into messages. A failed `not` says nothing useful on
 * its own ("matched a not schema"), so the subschema's own `description`, when
 * it has one, is the message: a schema author can word that rule.
 */
export function describeErrors(errors: OutputUnit[], schema: unknown): string[] {
  const out: string[] = [];
  for (const e of errors) {
    if (CONTAINERS.has(e.keyword)) continue;
    const where = argumentPath(e.instanceLocation);
    const described = e.keyword === "not" ? resolvePointer(schema, e.keywordLocation) : undefined;
    if (isObject(described) && typeof described.description === "string") {
      out.push(where ? `argument "${where}": ${described.description}` : described.description);
    } else if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") {
      const m = /^Property "(.*)" does not match/.exec(e.error);
      const name = m ? join(where, clip(m[1])) : where;
      out.push(`unexpected argument "${name}" (not declared)`);
    } else if (e.keyword === "pattern") {
      // The validator does not name the expression: the caller needs it to
      // send a value that matches.
      const pattern = resolvePointer(schema, e.keywordLocation);
      const said = typeof pattern === "string"
        ? `must match the pattern ${pattern.length > 200 ? `${pattern.slice(0, 197)}...` : pattern}`
        : e.error;
      out.push(where ? `argument "${where}": ${said}` : said);
    } else if (e.keyword === "required") {
      const m = /required property "(.*)"/.exec(e.error);
      const name = m ? join(where, clip(m[1])) : where;
      out.push(`missing required argument "${name}"`);
    } else {
      out.push(where ? `argument "${where}": ${e.error}` : e.error);
    }
  }
  if (out.length === 0 && errors.length > 0) out.push(errors[0].error);
  return [...new Set(out)];
}

/** The value at a `#/a/b` JSON Pointer (RFC 6901) inside `root`, if any. */
function resolvePointer(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.replace(/^#\/?/, "").split("/").filter((p) => p !== "")) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[decodePointerToken(raw)];
  }
  return node;
}

function argumentPath(instanceLocation: string): string {
  const parts = instanceLocation.replace(/^#\/?/, "").split("/").filter((p) => p !== "");
  let path = "";
  for (const raw of parts) {
    const part = clip(decodePointerToken(raw));
    path = /^\d+$/.test(part) ? `${path}[${part}]` : join(path, part);
  }
  return path;
}

function decodePointerToken(raw: string): string {
  let text = raw;
  try {
    text = decodeURIComponent(raw);
  } catch {
    // Not percent-encoded after all: keep the token as it came.
  }
  return text.replaceAll("~1", "/").replaceAll("~0", "~");
}

function join(base: string, name: string): string {
  return base ? `${base}.${name}` : name;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
