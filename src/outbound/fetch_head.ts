/**
 * The answer head cap on the `fetch` route: `fetch` (Deno 2.9) takes answer
 * heads of several hundred KiB, where weir's own HTTP/1.1 client stops at
 * {@link MAX_HEAD_BYTES}. Every hop that reads an answer through `fetch`
 * (spec mode behind a proxy, the AWS modes, OAuth discovery, JWKS and
 * introspection) holds it to the same cap, measured on what `fetch` hands
 * back (RFC 9112 section 2.1: the status line, the field lines, the empty
 * line).
 *
 * @module
 */
import { MAX_HEAD_BYTES } from "./http1_head.ts";

export { MAX_HEAD_BYTES };

/**
 * The least the answer's head can have taken on the wire: the status line,
 * each field as `name: value` with its line end, and the empty line. `fetch`
 * hands back values trimmed and repeated fields joined, so the head sent was
 * at least this long (never less): refusing past the cap never refuses a
 * head within it.
 */
export function fetchHeadBytesAtLeast(response: Response): number {
  let bytes = `HTTP/1.1 ${response.status} ${response.statusText}\r\n\r\n`.length;
  for (const [name, value] of response.headers) {
    if (name === "set-cookie") continue;
    bytes += name.length + 4 + value.length;
  }
  for (const cookie of response.headers.getSetCookie()) bytes += 14 + cookie.length;
  return bytes;
}

/**
 * Whether the answer's head is over {@link MAX_HEAD_BYTES}; when it is, its
 * body is cancelled (nothing more is read).
 */
export async function fetchHeadTooLarge(response: Response): Promise<boolean> {
  if (fetchHeadBytesAtLeast(response) <= MAX_HEAD_BYTES) return false;
  await response.body?.cancel().catch(() => {});
  return true;
}
