/**
 * A grant's body as `application/x-www-form-urlencoded` (a grant with `form`):
 * every value in a field of its own, named by the bracket convention form
 * parsers read (`qs` behind Express and many Node servers, Rack, PHP): an
 * object member `a[b]=c`, an array by the grant's `arrays=`: `a=x&a=y`
 * (`repeat`), `a[]=x&a[]=y` (`brackets`) or `a[0]=x&a[1]=y` (`indexed`).
 * Names and values are percent-encoded by the WHATWG URL "urlencoded
 * serializer" (space as `+`; what `URLSearchParams` writes and HTML forms
 * send).
 *
 * Exact or refused: a value is sent as the agent wrote it (a string as is, a
 * number as spelled, a boolean as `true`/`false`), and what a form cannot say
 * so that a parser reads it back the same is refused before anything is sent
 * (`policy_denied`, naming the field): `null`, an empty array or object, an
 * object or array inside an array unless `arrays="indexed"`, a key that is
 * empty, holds `[` or `]`, names a member of `Object.prototype` (parsers
 * drop those) or, inside an object, is an array index (`7`: `qs` reads
 * `a[7]=x` as an array), an unpaired surrogate, more than {@link MAX_FORM_DEPTH} levels
 * of brackets or more than {@link MAX_FORM_FIELDS} fields (the defaults of
 * `qs`, past which it reads the body otherwise).
 *
 * @module
 */
import type { ToolError } from "../mcp/server.ts";
import type { FormEncoding } from "../guardfile/model.ts";
import { WeirError } from "../errors/kinds.ts";
import { isRawJson } from "../mcp/text.ts";
import { formKeyProblem } from "../guardfile/form.ts";

/** Most bracket levels in one field name (`qs`'s default `depth`: deeper keys stay literal). */
export const MAX_FORM_DEPTH = 5;
/** Most fields in one body (`qs`'s and body-parser's default `parameterLimit`). */
export const MAX_FORM_FIELDS = 1000;
/** Most items of one array (`qs`'s default `arrayLimit` is 20: past it, indices become keys). */
export const MAX_FORM_ARRAY_ITEMS = 20;

function refused(message: string): ToolError {
  return new WeirError("policy_denied", message, { status: 403, rule: "schema" });
}

/**
 * The form fields of a body, in order: the body's own keys first to last,
 * each object's members in their order, each array's items in the caller's.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formFields } from "./form.ts";
 * const fields = formFields({ arrays: "brackets" }, {
 *   amount: 2000,
 *   metadata: { order: "6735" },
 *   expand: ["customer", "invoice"],
 * });
 * assert.equal(
 *   new URLSearchParams(fields).toString(),
 *   "amount=2000&metadata%5Border%5D=6735&expand%5B%5D=customer&expand%5B%5D=invoice",
 * );
 * ```
 * @throws {ToolError} policy_denied for a value a form cannot carry exactly
 */
export function formFields(
  encoding: FormEncoding,
  body: Record<string, unknown>,
): [string, string][] {
  const fields: [string, string][] = [];
  const add = (name: string, text: string, path: string) => {
    const what = `body field "${path}"`;
    if (!text.isWellFormed()) {
      throw refused(`${what} contains an unpaired UTF-16 surrogate (not valid Unicode text)`);
    }
    if (fields.length === MAX_FORM_FIELDS) {
      throw refused(
        `the form body would have more than ${MAX_FORM_FIELDS} fields, more than form parsers ` +
          `read; send fewer values`,
      );
    }
    fields.push([name, text]);
  };
  const walk = (name: string, value: unknown, depth: number, path: string) => {
    const what = `body field "${path}"`;
    if (depth > MAX_FORM_DEPTH) {
      throw refused(
        `${what} is nested deeper than ${MAX_FORM_DEPTH} levels, which form parsers do not ` +
          `read back as written; send a flatter value`,
      );
    }
    if (typeof value === "string") return add(name, value, path);
    if (typeof value === "boolean") return add(name, String(value), path);
    if (typeof value === "number") return add(name, JSON.stringify(value), path);
    if (isRawJson(value)) return add(name, value.rawJSON, path);
    if (value === null || value === undefined) {
      throw refused(`${what} is null, which a form body cannot say; leave it out`);
    }
    if (Array.isArray(value)) {
      if (value.length === 0) {
        throw refused(`${what} is an empty array, which a form body cannot say; leave it out`);
      }
      if (value.length > MAX_FORM_ARRAY_ITEMS) {
        throw refused(
          `${what} has ${value.length} items; a form body carries at most ` +
            `${MAX_FORM_ARRAY_ITEMS} per array as written (form parsers read more as an object)`,
        );
      }
      value.forEach((item, i) => {
        const at = `${path}[${i}]`;
        const nested = typeof item === "object" && item !== null && !isRawJson(item);
        if (encoding.arrays === "indexed") return walk(`${name}[${i}]`, item, depth + 1, at);
        if (nested) {
          throw refused(
            `body field "${at}" is an object or array inside an array, which this grant's form ` +
              `(arrays="${encoding.arrays}") cannot write unambiguously; send scalars`,
          );
        }
        if (encoding.arrays === "brackets") walk(`${name}[]`, item, depth + 1, at);
        else walk(name, item, depth, at);
      });
      return;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) {
      throw refused(`${what} is an empty object, which a form body cannot say; leave it out`);
    }
    for (const [key, inner] of entries) {
      const at = `${path}.${key}`;
      const problem = formKeyProblem(key, true);
      if (problem) throw refused(`body field "${at}": the key ${JSON.stringify(key)} ${problem}`);
      walk(`${name}[${key}]`, inner, depth + 1, at);
    }
  };
  for (const [key, value] of Object.entries(body)) walk(key, value, 0, key);
  return fields;
}

/**
 * The encoded body of a form grant (see {@link formFields}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formBody } from "./form.ts";
 * assert.equal(formBody({ arrays: "repeat" }, { q: "a b", tag: ["x", "y"] }), "q=a+b&tag=x&tag=y");
 * ```
 * @throws {ToolError} policy_denied for a value a form cannot carry exactly
 */
export function formBody(encoding: FormEncoding, body: Record<string, unknown>): string {
  return new URLSearchParams(formFields(encoding, body)).toString();
}
