/**
 * Opaque pagination cursors for the MCP list methods.
 *
 * A cursor names the list it belongs to and the sort key of the last item the
 * client was shown, so the next page starts after that item whatever was added
 * or removed meanwhile: a list that changes between pages never skips an item
 * that was there before (an offset would). The pair is signed with
 * HMAC-SHA-256 (RFC 2104) under a key the server holds, so a cursor the server
 * did not issue, or one issued for another list, is refused rather than
 * interpreted.
 *
 * Wire form: `base64url(JSON [list, afterKey]) "." base64url(mac[0..16])`.
 * Pages are described by MCP "Pagination" (both revisions): the cursor is
 * opaque, and an invalid one is answered with `-32602`.
 *
 * @module
 */
import { ErrorCode, McpError } from "./jsonrpc.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MAC_BYTES = 16;

/** Signs and checks cursors. One per server; share `key` between replicas behind one URL. */
export class CursorCodec {
  #bytes: Uint8Array<ArrayBuffer>;
  /** Imported on first use: the first Web Crypto call of a process costs tens of ms. */
  #key?: Promise<CryptoKey>;

  /**
   * Make a codec that signs cursors with HMAC-SHA-256.
   * @param key raw HMAC key bytes (at least 16); a random one per process when omitted,
   *   which makes cursors from another process (or a restart) invalid
   */
  constructor(key?: Uint8Array) {
    const bytes = key ?? crypto.getRandomValues(new Uint8Array(32));
    if (bytes.length < 16) throw new RangeError("a cursor key needs at least 16 bytes");
    this.#bytes = new Uint8Array(bytes);
  }

  #cryptoKey(): Promise<CryptoKey> {
    this.#key ??= crypto.subtle.importKey(
      "raw",
      this.#bytes,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    return this.#key;
  }

  /** Make the cursor for "the page of `list` that starts after `afterKey`". */
  async encode(list: string, afterKey: string): Promise<string> {
    const payload = encoder.encode(JSON.stringify([list, afterKey]));
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await this.#cryptoKey(), payload));
    return `${base64url(payload)}.${base64url(mac.subarray(0, MAC_BYTES))}`;
  }

  /**
   * Read a cursor issued by {@link encode} for `list`.
   *
   * @returns the sort key of the last item already shown
   * @throws {McpError} `-32602` naming the list when the cursor is malformed, was
   *   not issued by this server, or belongs to another list
   */
  async decode(list: string, cursor: unknown): Promise<string> {
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
    const dot = cursor.indexOf(".");
    const payload = dot > 0 ? fromBase64url(cursor.slice(0, dot)) : null;
    const mac = dot > 0 ? fromBase64url(cursor.slice(dot + 1)) : null;
    if (!payload || !mac || mac.length !== MAC_BYTES) {
      throw refuse("not a cursor this server issued");
    }
    const full = new Uint8Array(await crypto.subtle.sign("HMAC", await this.#cryptoKey(), payload));
    if (!constantTimeEqual(full.subarray(0, MAC_BYTES), mac)) {
      throw refuse("not a cursor this server issued (or it was altered)");
    }
    const [owner, afterKey] = JSON.parse(decoder.decode(payload)) as [string, string];
    if (owner !== list) throw refuse(`it was issued for ${owner}`);
    return afterKey;
  }
}

function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.min(a.length, b.length); i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** Unpadded base64url (RFC 4648 section 5) of `bytes`. */
export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * Decode unpadded base64url, canonical form only: a string whose unused low
 * bits are set decodes to the same bytes as another, so it is refused, and
 * each cursor has exactly one spelling.
 */
function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return base64url(bytes) === text ? bytes : null;
  } catch {
    return null;
  }
}
