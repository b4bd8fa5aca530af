/**
 * Opaque pagination cursors for the MCP list methods.
 *
 * A cursor names the list it belongs to and the sort key of the last item the
 * client was shown, so the next page starts after that item whatever was added
 * or removed meanwhile: a list that changes between pages never skips an item
 * that was there before (an offset would). The pair is signed with
 * HMAC-SHA-256 (RFC 2104) by the server's {@link StateKeys}, bound to the
 * caller when the request was authenticated, so a cursor the server did not
 * issue, one issued for another list, or one issued to another caller is
 * refused rather than interpreted. Servers holding the same configured keys
 * (replicas behind one URL) accept each other's cursors.
 *
 * Wire form: `base64url(JSON [list, afterKey]) "." base64url(mac[0..16])`
 * (src/mcp/signed_state.ts, purpose `"cursor"`). Pages are described by MCP
 * "Pagination" (both revisions): the cursor is opaque, and an invalid one is
 * answered with `-32602`.
 *
 * @module
 */
import { ErrorCode, McpError } from "./jsonrpc.ts";
import { base64url, fromBase64url, StateKeys } from "./signed_state.ts";

export { base64url };

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MAC_BYTES = 16;
const PURPOSE = "cursor";

/**
 * Signs and checks cursors. One per server; replicas behind one URL share its keys.
 *
 * @example A cursor read back by a replica with the same key, not by another caller
 * ```ts
 * import { CursorCodec } from "./cursor.ts";
 * const key = new TextEncoder().encode("an example key of at least 32 bytes!!");
 * const cursor = await new CursorCodec(key).encode("tools/list", "get_issue", "alice");
 * const replica = new CursorCodec(key);
 * if (await replica.decode("tools/list", cursor, "alice") !== "get_issue") throw new Error();
 * const refused = await replica.decode("tools/list", cursor, "bob").then(() => false, () => true);
 * if (!refused) throw new Error("another caller's cursor was read");
 * ```
 */
export class CursorCodec {
  readonly #keys: StateKeys;

  /**
   * Make a codec that signs cursors with HMAC-SHA-256.
   * @param keys the server's key service, or raw HMAC key bytes (at least 32);
   *   a random key per process when omitted, which makes cursors from another
   *   process (or a restart) invalid
   * @throws {RangeError} when raw key bytes are fewer than 32
   */
  constructor(keys?: StateKeys | Uint8Array) {
    this.#keys = keys instanceof StateKeys
      ? keys
      : new StateKeys({ keys: keys ? [keys] : undefined });
  }

  /**
   * Make the cursor for "the page of `list` that starts after `afterKey`".
   * @param caller the caller it is issued to (see `callerOf`), if authenticated
   */
  encode(list: string, afterKey: string, caller?: string): Promise<string> {
    const body = base64url(encoder.encode(JSON.stringify([list, afterKey])));
    return this.#keys.sign(PURPOSE, body, caller, MAC_BYTES);
  }

  /**
   * Read a cursor issued by {@link encode} for `list` and `caller`.
   *
   * @returns the sort key of the last item already shown
   * @throws {McpError} `-32602` naming the list when the cursor is malformed, was
   *   not issued by this server (or its replicas) to this caller, or belongs to
   *   another list
   */
  async decode(list: string, cursor: unknown, caller?: string): Promise<string> {
    const refuse = (why: string) =>
      new McpError(ErrorCode.InvalidParams, `Invalid cursor for ${list}: ${why}`, {
        // Echoed bounded: a caller's value never comes back at any length or depth.
        cursor: typeof cursor === "string"
          ? (cursor.length > 120 ? `${cursor.slice(0, 117)}...` : cursor)
          : `(a JSON ${
            cursor === null ? "null" : Array.isArray(cursor) ? "array" : typeof cursor
          })`,
      });
    if (typeof cursor !== "string") throw refuse("a cursor is a string");
    if (cursor.length > 8192) throw refuse("not a cursor this server issued");
    const checked = await this.#keys.verify(PURPOSE, cursor, caller, MAC_BYTES);
    if (!checked.ok) {
      throw refuse(
        checked.why === "malformed"
          ? "not a cursor this server issued"
          : "not a cursor this server issued to this caller (or it was altered, or signed " +
            "with a key no longer configured); list again without a cursor",
      );
    }
    const payload = fromBase64urlText(checked.body);
    let owner: unknown, afterKey: unknown;
    try {
      [owner, afterKey] = JSON.parse(payload ?? "") as unknown[];
    } catch {
      throw refuse("not a cursor this server issued");
    }
    if (typeof owner !== "string" || typeof afterKey !== "string") {
      throw refuse("not a cursor this server issued");
    }
    if (owner !== list) throw refuse(`it was issued for ${owner}`);
    return afterKey;
  }
}

/** The UTF-8 text of a canonical base64url string, or null. */
function fromBase64urlText(text: string): string | null {
  const bytes = fromBase64url(text);
  return bytes ? decoder.decode(bytes) : null;
}
