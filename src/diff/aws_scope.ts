/**
 * `weir diff` of an AWS policy's scope (`serve-ssm`, `serve-s3`): what the
 * policy lets an agent reach, compared part by part so that a true narrowing
 * narrows. Another region, bucket or mode reaches other data (widens); a
 * longer key prefix under the old one, fewer parameters or content types, a
 * smaller `max-bytes` narrow; the reverse widens; the public base URL an
 * answer names only changes words. A part this table does not know widens.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compareWithin } from "./aws_scope.ts";
 * const at = { label: "", schemasKnown: true };
 * const found = compareWithin({ bucket: "b", prefix: "charts/" }, { bucket: "b", prefix: "charts/2026/" }, at);
 * assert.deepEqual(found.map((f) => f.effect), ["narrow"]);
 * ```
 *
 * @module
 */
import type { JsonObject, JsonValue } from "../mcp/jsonrpc.ts";
import type { AwsScope, AwsWithin } from "../surface/model.ts";
import { type Context, type Found, prefix, same } from "./declare.ts";

/** Words for a value. */
const show = (v: unknown) => v === undefined ? "none" : JSON.stringify(v);

/** A list compared as a set: added entries widen, removed ones narrow. */
function setChange(name: string, o: readonly JsonValue[], n: readonly JsonValue[]): Found[] {
  const key = (v: JsonValue) => JSON.stringify(v);
  const was = new Set(o.map(key));
  const now = new Set(n.map(key));
  const added = [...now].filter((v) => !was.has(v));
  const removed = [...was].filter((v) => !now.has(v));
  return [
    ...(added.length
      ? [{ effect: "widen" as const, what: `${name} added: ${added.join(", ")}` }]
      : []),
    ...(removed.length
      ? [{ effect: "narrow" as const, what: `${name} removed: ${removed.join(", ")}` }]
      : []),
  ];
}

/** A key prefix: one that starts with the old one narrows, anything else widens. */
function prefixChange(o: string, n: string): Found {
  return {
    effect: n.startsWith(o) ? "narrow" : "widen",
    what: `key prefix ${show(o)} -> ${show(n)}`,
  };
}

/** One part of a policy. */
function partChange(key: string, o: JsonValue | undefined, n: JsonValue | undefined): Found[] {
  if (same(o, n)) return [];
  if (key === "prefix" && typeof o === "string" && typeof n === "string") {
    return [prefixChange(o, n)];
  }
  if ((key === "parameters" || key === "contentTypes") && Array.isArray(o) && Array.isArray(n)) {
    return setChange(key === "parameters" ? "parameter" : "content-type", o, n);
  }
  if (key === "maxBytes" && typeof o === "number" && typeof n === "number") {
    return [{ effect: n > o ? "widen" : "narrow", what: `max-bytes ${o} -> ${n}` }];
  }
  if (key === "baseUrl") {
    return [{
      effect: "change",
      what: `base-url ${show(o)} -> ${
        show(n)
      } (the URL an answer names; weir fetches nothing there)`,
    }];
  }
  return [{ effect: "widen", what: `${key} ${show(o)} -> ${show(n)} (reaches other data)` }];
}

/**
 * The policy's scope: part by part when the mode is the same, else another
 * scope (widens).
 */
export function compareAwsScope(
  o: AwsScope | undefined,
  n: AwsScope | undefined,
  at: Context,
): Found[] {
  const tag = (f: Found): Found => ({ ...f, what: `${prefix(at)}aws policy ${f.what}` });
  if (!o || !n || o.mode !== n.mode) {
    return [tag({ effect: "widen", what: `${show(o)} -> ${show(n)}` })];
  }
  const keys = [...new Set([...Object.keys(o.policy), ...Object.keys(n.policy)])].sort();
  return keys.flatMap((k) => partChange(k, (o.policy as JsonObject)[k], n.policy[k])).map(tag);
}

/** What one AWS tool reaches: another bucket widens, a prefix or parameter set within the old narrows. */
export function compareWithin(o: AwsWithin, n: AwsWithin, at: Context): Found[] {
  const out: Found[] = [];
  if (o.bucket !== n.bucket) {
    out.push({ effect: "widen", what: `bucket ${show(o.bucket)} -> ${show(n.bucket)}` });
  }
  if (o.prefix !== n.prefix) {
    out.push(prefixChange(o.prefix ?? "", n.prefix ?? ""));
  }
  if (!same(o.parameters, n.parameters)) {
    out.push(...setChange("parameter", o.parameters ?? [], n.parameters ?? []));
  }
  return out.map((f) => ({ ...f, what: `${prefix(at)}${f.what}` }));
}
