/**
 * **weir.** A grant's `form [arrays="repeat"|"brackets"|"indexed"]`: its body
 * goes as `application/x-www-form-urlencoded` (src/guard/form.ts writes it),
 * and the keys a form body may hold. Grammar: `docs/guardfile.md`, "`form`".
 *
 * @module
 */
import type { FormEncoding, Grant } from "./model.ts";
import type { NodeReader } from "./nodes.ts";

const PROTOTYPE_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), "prototype"]);

/**
 * Why a key cannot name a field of a form body as written, or undefined: empty,
 * holding `[` or `]` (weir writes the brackets of nested objects and arrays),
 * a member of `Object.prototype`, which form parsers such as `qs` drop, or,
 * for a member of a nested object (`nested`), an array index (`0`, `7`):
 * `a[0]=x` is an array item to `qs` (Express's `urlencoded({extended: true})`),
 * so `{"a": {"7": "x"}}` would arrive as `{"a": ["x"]}`.
 */
export function formKeyProblem(key: string, nested = false): string | undefined {
  if (key === "") return "is empty; name the field";
  if (nested && /^(?:0|[1-9][0-9]*)$/.test(key)) {
    return `is a number, which form parsers (qs, behind Express) read as an array index, ` +
      `turning the object into an array; use a key that is not a number, or send an array`;
  }
  if (/[[\]]/.test(key)) {
    return `holds "[" or "]"; weir writes the brackets of nested objects and arrays itself ` +
      `(declare an object instead)`;
  }
  if (PROTOTYPE_KEYS.has(key)) {
    return "is a name form parsers drop (a member of Object.prototype); rename it";
  }
  return undefined;
}

/**
 * Every key a grant's body may send, at any depth (set, fields, map targets),
 * each with whether it names a member of a nested object (see {@link formKeyProblem}).
 */
export function formKeys(grant: Grant): [key: string, nested: boolean][] {
  const keys: [string, boolean][] = grant.bodyMap.map((m) => [m.target, false]);
  const fields = (list: Grant["body"], nested: boolean) => {
    for (const f of list) {
      keys.push([f.name, nested]);
      if (f.fields) fields(f.fields, true);
    }
  };
  fields(grant.body, false);
  const set = (value: unknown, nested: boolean) => {
    if (typeof value !== "object" || value === null) return;
    for (const [k, v] of Object.entries(value)) {
      if (!Array.isArray(value)) keys.push([k, nested]);
      set(v, true);
    }
  };
  set(grant.set, false);
  return keys;
}

/** The `arrays=` conventions of a form body. */
const FORM_ARRAYS: readonly FormEncoding["arrays"][] = ["repeat", "brackets", "indexed"];

/** `form [arrays="repeat"|"brackets"|"indexed"]`: the body goes form-encoded. */
export function readForm(node: NodeReader): FormEncoding | undefined {
  node.onlyProperties(["arrays"]);
  node.noChildren();
  if (node.node.values.length > 0) {
    node.error(`"form" takes no arguments; write form, or form arrays="brackets"`);
  }
  const arrays = node.node.properties.arrays ?? "repeat";
  if (!FORM_ARRAYS.includes(arrays as FormEncoding["arrays"])) {
    node.error(
      `arrays=${JSON.stringify(arrays)} is not a convention weir writes; use "repeat" ` +
        `(a=x&a=y), "brackets" (a[]=x&a[]=y) or "indexed" (a[0]=x&a[1]=y), as the API documents`,
    );
    return undefined;
  }
  return { arrays: arrays as FormEncoding["arrays"] };
}
