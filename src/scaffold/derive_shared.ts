/**
 * What the derivation of a grant (`./derive.ts`, `./derive_headers.ts`) shares:
 * a parameter's schema, scalar types, bounds and value rules copied where the
 * grammar takes them, notes of what is lost, free names. Pure.
 *
 * @module
 */
import type { ScalarType } from "../guardfile/model.ts";
import { RESERVED_INPUTS } from "../guardfile/grant.ts";
import { patternProblem, shownPattern } from "../guardfile/pattern.ts";
import { isObject, type Json } from "./document.ts";
import { type ReadSchema, readSchema } from "./schema.ts";
import { writtenExactly } from "./kdl_text.ts";

/** An operation the grammar cannot express, with why. */
export class Inexpressible extends Error {}

export function paramSchema(p: Json): ReadSchema {
  if (isObject(p.schema)) return readSchema(p.schema);
  // `content` instead of `schema`: the value is serialized text (e.g. JSON).
  if (isObject(p.content)) return { type: "string", lost: [] };
  return { type: "string", lost: [] };
}

export function scalarOf(type: ReadSchema["type"]): ScalarType {
  return type === "integer" || type === "number" || type === "boolean" ? type : "string";
}

export function copyBounds(
  to: { type: string; minimum?: number; maximum?: number },
  s: ReadSchema,
): void {
  if (to.type !== "integer" && to.type !== "number") return;
  if (s.minimum !== undefined) to.minimum = s.minimum;
  if (s.maximum !== undefined) to.maximum = s.maximum;
}

/** Copy pattern, lengths and enum where the grammar takes them, dropping a pattern that does not compile. */
export function copyRules(
  to: {
    type?: string;
    items?: string;
    pattern?: string;
    minLength?: number;
    maxLength?: number;
    enum?: (string | number)[];
  },
  s: ReadSchema,
): void {
  const type = to.type === "array" ? to.items : to.type;
  if (type === "string") {
    // What the guardfile loader would say of it (src/guardfile/pattern.ts): it must compile
    // with the "u" flag, at most 4096 characters, and run once.
    const problem = s.pattern === undefined ? undefined : patternProblem(s.pattern);
    if (s.pattern !== undefined && !problem && writtenExactly(s.pattern)) {
      to.pattern = s.pattern;
    } else if (s.pattern !== undefined) {
      s.lost.push(
        `pattern ${shownPattern(s.pattern)} (${
          problem ? problem.replace(/: [^:]*$/, "") : "it holds characters a guardfile cannot hold"
        })`,
      );
    }
    if (s.minLength !== undefined && s.minLength > 0) to.minLength = s.minLength;
    if (s.maxLength !== undefined) to.maxLength = s.maxLength;
    if (to.minLength !== undefined && to.maxLength !== undefined && to.minLength > to.maxLength) {
      delete to.minLength;
      delete to.maxLength;
    }
  }
  if (s.enum && (type === "string" || type === "integer" || type === "number")) {
    const ok = s.enum.filter((v) =>
      type === "string"
        ? typeof v === "string" && passes(v, to) && writtenExactly(v)
        : typeof v === "number" && (type === "number" || Number.isInteger(v))
    );
    if (ok.length > 0) to.enum = ok;
    else s.lost.push(`enum ${JSON.stringify(s.enum)} (no value a guardfile can hold and check)`);
  }
}

function passes(
  v: string,
  rules: { pattern?: string; minLength?: number; maxLength?: number },
): boolean {
  const len = [...v].length;
  if (rules.minLength !== undefined && len < rules.minLength) return false;
  if (rules.maxLength !== undefined && len > rules.maxLength) return false;
  return rules.pattern === undefined || new RegExp(rules.pattern, "u").test(v);
}

export function lostNotes(notes: string[], what: string, s: ReadSchema): void {
  for (const l of s.lost) notes.push(`${what}: ${l}`);
  s.lost.length = 0;
}

export function freeName(base: string, used: Set<string>): string {
  let name = base;
  for (let n = 2; used.has(name) || RESERVED_INPUTS.includes(name); n++) name = `${base}_${n}`;
  return name;
}

export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : chars.slice(0, max - 1).join("") + "…";
}
