/**
 * Reading what an authorization server answers (metadata, a JWKS,
 * introspection, a token endpoint): never a redirect followed, never more
 * than {@link MAX_ANSWER_BYTES} of body (decoded) or 64 KiB of head read.
 *
 * @module
 */
import { readAtMost } from "../transport/bytes.ts";
import { redirectTarget, type Secrets } from "../outbound/once.ts";
import { fetchHeadTooLarge, MAX_HEAD_BYTES } from "../outbound/fetch_head.ts";

/** Largest answer body read from an authorization server, in bytes (decoded). */
export const MAX_ANSWER_BYTES = 256 * 1024;

/**
 * Words for an answer that is not 2xx, for the operator (the log and start-up
 * errors; a caller is told only that its token was not accepted): a redirect
 * names its status and its target with query values and `secrets` (what the
 * request carried: a client secret, the caller's token) redacted (never
 * followed); anything else its status.
 */
export function refusalOf(response: Response, url: string, secrets: Secrets): string {
  if (response.status >= 300 && response.status < 400) {
    const target = redirectTarget(response.headers.get("location"), url, secrets);
    return `answered ${response.status} redirecting to ${target ?? "no usable Location"}; ` +
      "weir follows no redirect, so nothing was sent there";
  }
  return `answered HTTP ${response.status}`;
}

/**
 * Read a JSON answer of at most {@link MAX_ANSWER_BYTES} (decoded), never
 * further, whose head is at most 64 KiB (src/outbound/fetch_head.ts).
 * @param what names the answer in the error (`<what> too large`)
 * @throws {Error} when the head or body is too large, or the body is not JSON
 */
export async function readJson(
  response: Response,
  what = "metadata document",
): Promise<unknown> {
  if (await fetchHeadTooLarge(response)) {
    throw new Error(`the answer's head is over ${MAX_HEAD_BYTES} bytes`);
  }
  const bytes = response.body
    ? await readAtMost(response.body, MAX_ANSWER_BYTES)
    : new Uint8Array();
  if (bytes === null) throw new Error(`${what} too large`);
  return JSON.parse(new TextDecoder().decode(bytes));
}
