/**
 * What a failed `fetch` means, in words a person can act on. Deno's `fetch`
 * rejects with `TypeError: fetch failed` whatever went wrong; the reason is in
 * its `cause` ("tcp connect error: Connection refused (os error 111)", "dns
 * error: ...", a TLS error). Callers add the URL and the next step.
 *
 * @module
 */

/**
 * Why a connection could not be made, or `undefined` when the error is not a
 * connection failure (an abort, a body error).
 * @param error what `fetch` threw
 * @returns e.g. "connection refused: nothing is listening there"
 */
export function connectFailure(error: unknown): string | undefined {
  const known = connectFailureWords(error);
  if (known !== undefined) return known;
  const first = error instanceof Error ? error.message : "";
  return /blocked/i.test(messagesOf(error)) ? first : undefined;
}

/**
 * {@link connectFailure} in fixed words only: never a message of the error
 * itself, so the result names no host, address or URL and may reach a caller.
 * @param error what `fetch` or `Deno.connect` threw (Deno throws a failed name
 *   lookup of `Deno.connect` as a plain `Error` "failed to lookup address
 *   information: ...")
 * @returns e.g. "the host name does not resolve (DNS)", or `undefined`
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectFailureWords } from "./connect_failure.ts";
 * const lookup = new Error("failed to lookup address information: Name or service not known");
 * assert.equal(connectFailureWords(lookup), "the host name does not resolve (DNS)");
 * assert.equal(connectFailureWords(new Error("https://x.test/?key=1 blocked")), undefined);
 * ```
 */
export function connectFailureWords(error: unknown): string | undefined {
  const text = messagesOf(error);
  if (/connection refused|os error 111\b|ECONNREFUSED/i.test(text)) {
    return "connection refused: nothing is listening there";
  }
  if (/dns error|failed to lookup address|name or service not known|ENOTFOUND/i.test(text)) {
    return "the host name does not resolve (DNS)";
  }
  if (/connection reset|os error 104\b/i.test(text)) {
    return "the connection was reset before an answer";
  }
  if (/network is unreachable|no route to host|os error (101|113)\b/i.test(text)) {
    return "no route to that address (network unreachable)";
  }
  if (/certificate|tls|ssl|handshake/i.test(text)) {
    return "the TLS handshake failed (certificate or protocol)";
  }
  return undefined;
}

/** The messages of an error and its causes (four deep), joined by " | ". */
function messagesOf(error: unknown): string {
  const texts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; depth++) {
    texts.push(e.message);
    e = e.cause;
  }
  return texts.join(" | ");
}

/** Whether a failure from {@link connectFailureWords} is a host name that does not resolve. */
export function isNameFailure(words: string): boolean {
  return words.includes("(DNS)");
}
