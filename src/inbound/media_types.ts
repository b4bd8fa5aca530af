/**
 * The media types of a JSON endpoint: a `Content-Type` that names JSON, and
 * content negotiation by RFC 9110 section 12.5.1 (an `Accept` that refuses
 * `application/json`, `q=0` included, is 406).
 *
 * @module
 */
import type { Logger } from "../mcp/server.ts";
import type { Refusal } from "./refusal.ts";
import { refuseBeforeBody } from "./body.ts";

/**
 * The media types of a JSON endpoint: `Content-Type` must name JSON (415),
 * and `Accept` must admit `application/json` (406, RFC 9110 section 12.5.1).
 * @returns a refusal (its audit line written), or `null`
 */
export function checkMediaTypes(request: Request, log: Logger | undefined): Refusal | null {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    return refuseBeforeBody(
      request,
      log,
      415,
      "media_type",
      "Unsupported Media Type: send Content-Type: application/json",
    );
  }
  return checkAccept(request, log);
}

/**
 * `Accept` must admit `application/json` (RFC 9110 section 12.5.1): else 406.
 * @returns a refusal (its audit line written), or `null`
 */
export function checkAccept(request: Request, log: Logger | undefined): Refusal | null {
  if (acceptsJson(request.headers.get("accept"))) return null;
  return refuseBeforeBody(
    request,
    log,
    406,
    "not_acceptable",
    "Not Acceptable: this endpoint answers application/json, which the Accept header " +
      "refuses; accept it (e.g. Accept: application/json)",
  );
}

/** Whether a `Content-Type` value names JSON (`application/json`, parameters allowed). */
export function isJsonContentType(value: string | null): boolean {
  if (value === "application/json") return true; // the common spelling, decided without copies
  return value !== null && value.split(";")[0].trim().toLowerCase() === "application/json";
}

/**
 * Whether an `Accept` value admits `application/json`, by RFC 9110 section
 * 12.5.1: of the media ranges that match it, the most specific one decides
 * (`application/json` over `application/*` over `*\/*`; among equally
 * specific ones, the highest weight), and it is acceptable when that weight
 * is above 0 (`q=0` means "not acceptable"). An absent or empty `Accept`
 * admits anything; one where no range matches admits nothing. Media type
 * parameters of a range (`;charset=utf-8`) do not narrow it here: JSON has
 * none (RFC 8259 section 11). A range whose weight is not a valid `qvalue`
 * (`q=2`, `q=abc`, `q=0.0001`) is ignored, as one the grammar does not allow.
 */
export function acceptsJson(value: string | null): boolean {
  if (value === null) return true;
  // A client sends the same Accept on every request: the last answer is kept
  // (the function depends on the value alone, so the memo cannot differ).
  if (value === lastAccept.value) return lastAccept.ok;
  const ok = acceptsJsonUncached(value);
  lastAccept = { value, ok };
  return ok;
}

let lastAccept: { value: string; ok: boolean } = { value: "", ok: true };

/** How specific a media range is for `application/json` (0: it does not match). */
const SPECIFICITY: Readonly<Record<string, number>> = {
  "application/json": 3,
  "application/*": 2,
  "*/*": 1,
};

/** RFC 9110 section 12.4.2 `qvalue`. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

function acceptsJsonUncached(value: string): boolean {
  let best = 0; // the specificity of the ranges that decide so far
  let weight = 0; // the highest weight among them
  let listed = false;
  for (const element of value.split(",")) {
    const [range, ...params] = element.split(";");
    const type = range.trim().toLowerCase();
    if (type === "") continue; // an empty list element (RFC 9110 section 5.6.1)
    listed = true;
    const specificity = SPECIFICITY[type] ?? 0;
    if (specificity === 0 || specificity < best) continue;
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf("=");
      if (param.slice(0, eq).trim().toLowerCase() !== "q") continue;
      const text = param.slice(eq + 1).trim();
      q = QVALUE.test(text) ? Number(text) : NaN;
      break; // the first q= is the weight; what follows are extension parameters
    }
    if (Number.isNaN(q)) continue;
    if (specificity > best) {
      best = specificity;
      weight = q;
    } else weight = Math.max(weight, q);
  }
  return listed ? weight > 0 : true;
}
