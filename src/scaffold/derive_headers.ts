/**
 * An operation's header parameters (OpenAPI 3.1 section 4.8.12, `in: header`)
 * as a grant's `header` inputs: typed, with the document's value rules, under
 * a snake-case argument name (`If-Match` -> `if_match`).
 *
 * The file's credential header is not an input (the `auth` block sends it). A
 * header weir sets or frames the request with (`Content-Type`, `Accept`,
 * `Authorization`, ...), or another credential (named like an API key or a
 * token), is never a caller input: an optional one is left out with a note,
 * a required one makes the operation inexpressible. So do cookie parameters.
 * Pure: no I/O.
 *
 * @module
 */
import type { HeaderInput } from "../guardfile/model.ts";
import { HEADER_NAME, headerInputName, reservedHeaderReason } from "../guardfile/header_inputs.ts";
import type { Json, Operation } from "./document.ts";
import type { AuthPlan } from "./upstream.ts";
import { writtenExactly } from "./kdl_text.ts";
import {
  copyBounds,
  copyRules,
  freeName,
  Inexpressible,
  lostNotes,
  paramSchema,
  scalarOf,
} from "./derive_shared.ts";

/** Whether a parameter is the credential the file's `auth` sends. */
export function isCredential(p: Json, auth: AuthPlan): boolean {
  const n = String(p.name).toLowerCase();
  if (p.in === "header") {
    return (auth.kind === "header" && auth.header.toLowerCase() === n) ||
      (auth.kind === "bearer" && n === "authorization");
  }
  return p.in === "query" && auth.kind === "query" && auth.param === p.name;
}

/**
 * The header inputs of an operation.
 * @param used input names taken so far (path, query, body); the headers' are added
 * @throws {Inexpressible} for a required header or cookie weir cannot let a caller send
 */
export function deriveHeaders(
  op: Operation,
  notes: string[],
  used: Set<string>,
  auth: AuthPlan,
): HeaderInput[] {
  const out: HeaderInput[] = [];
  for (const p of op.parameters) {
    if (p.in !== "header" && p.in !== "cookie") continue;
    const wire = String(p.name);
    if (isCredential(p, auth)) continue;
    const required = p.required === true;
    const skip = (why: string) => {
      if (required) throw new Inexpressible(`needs ${p.in} "${wire}" on every call: ${why}`);
      notes.push(`optional ${p.in} "${wire}" is left out: ${why}`);
    };
    if (p.in === "cookie") {
      skip(`weir sends no per-call cookies`);
      continue;
    }
    if (!HEADER_NAME.test(wire) || !writtenExactly(wire)) {
      skip(`its name is not an HTTP header name`);
      continue;
    }
    // OpenAPI ignores these three as parameters (section 4.8.12.1); weir sets them itself.
    if (["accept", "content-type", "authorization"].includes(wire.toLowerCase())) {
      if (!required) notes.push(`header "${wire}" is set by weir, not by the caller`);
      else skip(`weir sets it itself`);
      continue;
    }
    const reserved = reservedHeaderReason(wire);
    if (reserved) {
      skip(
        /credential/.test(reserved)
          ? `it is a credential, and this file sends ${credentialOf(auth)}`
          : reserved.replace(/; remove it$/, ""),
      );
      continue;
    }
    const s = paramSchema(p);
    if (s.type === "array" || s.type === "object") {
      skip(
        `it is ${s.type === "array" ? "an array" : "an object"}; weir sends one value per header`,
      );
      continue;
    }
    let name = headerInputName(wire) || "header";
    if (!/^[A-Za-z_]/.test(name)) name = `h_${name}`;
    if (used.has(name)) name = freeName(`${name}_header`, used);
    used.add(name);
    const input: HeaderInput = {
      name,
      wire,
      type: scalarOf(s.type),
      required,
      metacharacters: "refuse",
    };
    copyBounds(input, s);
    copyRules(input, s);
    if (input.type === "string" && input.maxLength !== undefined && input.maxLength > 1024) {
      notes.push(`header "${wire}": max-length ${input.maxLength} is lowered to 1024 (weir's cap)`);
      input.maxLength = 1024;
    }
    lostNotes(notes, `header "${wire}"`, s);
    out.push(input);
  }
  return out;
}

function credentialOf(auth: AuthPlan): string {
  switch (auth.kind) {
    case "none":
      return "none";
    case "bearer":
      return "a bearer token";
    case "header":
      return `the header ${auth.header}`;
    case "query":
      return `the query parameter ${auth.param}`;
  }
}
