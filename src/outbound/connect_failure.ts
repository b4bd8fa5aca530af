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
  const texts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; depth++) {
    texts.push(e.message);
    e = e.cause;
  }
  const text = texts.join(" | ");
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
  if (/blocked/i.test(text)) return texts[0];
  return undefined;
}
