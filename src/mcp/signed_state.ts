/**
 * The key service for signed state: everything a server hands a client to
 * carry back (list cursors, the `requestState` of a multi round-trip call, any
 * later token) is signed and checked here, and single-use values are spent
 * here.
 *
 * - **Keys.** {@link StateKeys} holds one or more HMAC-SHA-256 keys (RFC 2104):
 *   the first signs, every one verifies, so a key is rotated without downtime
 *   (add the new key second everywhere, then first, then drop the old one).
 *   Without configured keys a process makes one random key, and what it signed
 *   verifies nowhere else (another replica, a restart).
 * - **Binding.** A value is signed for a *purpose* (`"cursor"`,
 *   `"weir/confirm"`, ...) and, when the request was authenticated, for the
 *   *caller* (see {@link callerOf}). Both go into the MAC input but not into
 *   the value, so a client cannot read whom a value is bound to, and a value
 *   issued for one purpose or caller fails to verify for any other.
 * - **Single use.** {@link StateKeys.issue} makes a one-time value (a nonce)
 *   and {@link StateKeys.spend} records that it was used, in a
 *   {@link SingleUseStore}: this process's memory by default, or a store every
 *   replica shares (weir's Redis store, in `src/store/`), so a value is spent
 *   once across all of them. A store marks each value it issues with its
 *   *generation*, which changes whenever its records may have been lost (a
 *   restart, a flush, an eviction): a value from an earlier generation is
 *   refused as `"unrecorded"`, since the store can no longer tell whether it
 *   was used, so a lost record never lets an answer run twice.
 *
 * Wire form of a signed value: `base64url(payload) "." base64url(mac[0..n])`
 * (RFC 4648 section 5, unpadded), where `mac = HMAC(key, purpose 0x00 caller
 * 0x00 base64url(payload))`. The payload is readable by the client: put
 * nothing secret in it.
 *
 * Web-standard only (`crypto.subtle`): the MCP core uses this, and any host
 * gets it through the core's public options (`ServerOptions.stateKeys`).
 *
 * @module
 */

const encoder = new TextEncoder();

/** Fewest bytes a configured key may have (the HMAC-SHA-256 block is 64; its output 32). */
export const MIN_STATE_KEY_BYTES = 32;

/**
 * What {@link SingleUseStore.spend} found:
 * `"spent"` this call used the value first (run what it guards);
 * `"used"` it was used before, on any process sharing the store;
 * `"unrecorded"` it was issued before the store's present records began (the
 * store restarted, was flushed or lost the records since), so whether it was
 * used cannot be told: refuse it, and ask again.
 */
export type SpendOutcome = "spent" | "used" | "unrecorded";

/**
 * Where single-use values are made and recorded.
 *
 * `spend` must be atomic across everyone sharing the store: of any number of
 * concurrent calls for one `id`, at most one resolves `"spent"`. A store that
 * may have lost its records (restarted empty, flushed, evicted) must answer
 * `"unrecorded"` for every value it issued before, never `"spent"`.
 */
export interface SingleUseStore {
  /**
   * Make a fresh one-time value, marked with the store's present generation.
   * @returns at most 100 characters of `A-Za-z0-9-_.`; spend it as it is
   */
  issue(): Promise<string>;
  /**
   * Record `id` (made by {@link issue}) as used, until `expiresAt`.
   * @param id the one-time value, as {@link issue} made it
   * @param expiresAt milliseconds since the epoch after which the record may go
   *   (the value it guards is refused by then anyway)
   * @returns what was found (see {@link SpendOutcome})
   * @throws {Error} when the record cannot be made (the caller must then refuse,
   *   never run what the value guards)
   */
  spend(id: string, expiresAt: number): Promise<SpendOutcome>;
  /** A short name for start-up lines and messages (`"process"`, `"redis"`). */
  readonly kind: string;
  /** Release connections. */
  close?(): Promise<void>;
}

/**
 * How long a spent record outlives its value's expiry: covers clocks that disagree between replicas.
 *
 * @example Five minutes
 * ```ts
 * import { SPENT_RECORD_SLACK_MS } from "./signed_state.ts";
 * if (SPENT_RECORD_SLACK_MS !== 300_000) throw new Error(String(SPENT_RECORD_SLACK_MS));
 * ```
 */
export const SPENT_RECORD_SLACK_MS = 5 * 60_000;

/** Random unpadded base64url text of `bytes` random bytes. */
export function randomToken(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The generation part of a value made by {@link SingleUseStore.issue} (`<random>.<generation>`). */
export function generationOf(id: string): string {
  const dot = id.lastIndexOf(".");
  return dot > 0 ? id.slice(dot + 1) : "";
}

/**
 * Single use within this process: a map of spent ids, pruned as they expire.
 * Its generation is random, made at its first issue or spend, so values issued by an earlier process
 * (this one restarted, with keys from configuration) are `"unrecorded"`.
 *
 * @example A value spent once
 * ```ts
 * import { InProcessSingleUse } from "./signed_state.ts";
 * const store = new InProcessSingleUse();
 * const id = await store.issue();
 * const until = Date.now() + 60_000;
 * if (await store.spend(id, until) !== "spent" || await store.spend(id, until) !== "used") {
 *   throw new Error("spent twice");
 * }
 * if (await store.spend("forged.value", until) !== "unrecorded") throw new Error("forged");
 * ```
 */
export class InProcessSingleUse implements SingleUseStore {
  readonly kind = "process";
  readonly #spent = new Map<string, number>();
  /**
   * Made at the first issue or spend, not at construction: every serve builds
   * one, and base64 (btoa) is a module Deno loads at its first use (~4 M
   * instructions at start). A value issued before it existed cannot exist.
   */
  #made?: string;
  #nextPrune = 0;

  get #generation(): string {
    return this.#made ??= randomToken(12);
  }

  /** A fresh value: `<random>.<this store's generation>`. */
  issue(): Promise<string> {
    return Promise.resolve(`${randomToken(16)}.${this.#generation}`);
  }

  /**
   * Spend `id` in this process.
   * @returns `"spent"` the first time `id` is spent (until `expiresAt`), `"used"`
   *   after, `"unrecorded"` for a value this store did not issue
   */
  spend(id: string, expiresAt: number): Promise<SpendOutcome> {
    if (generationOf(id) !== this.#generation) return Promise.resolve("unrecorded");
    const now = Date.now();
    if (now >= this.#nextPrune) {
      for (const [spent, until] of this.#spent) if (until < now) this.#spent.delete(spent);
      this.#nextPrune = now + 10_000;
    }
    const until = this.#spent.get(id);
    if (until !== undefined && until >= now) return Promise.resolve("used");
    this.#spent.set(id, expiresAt);
    return Promise.resolve("spent");
  }
}

/** Options of {@link StateKeys}. */
export interface StateKeysOptions {
  /**
   * The keys, newest first: the first signs, all verify. Each at least
   * {@link MIN_STATE_KEY_BYTES} bytes. Absent or empty: one random key made
   * for this process.
   */
  keys?: readonly Uint8Array[];
  /** Where single-use values are spent (default: {@link InProcessSingleUse}). */
  singleUse?: SingleUseStore;
}

/** Why {@link StateKeys.open} refused a value. */
export type Unverified =
  /** Not of the wire form (or too long). */
  | "malformed"
  /** No key verifies its MAC: altered, forged, issued for another purpose or caller, or
   * signed with a key this server no longer holds. */
  | "unsigned";

/**
 * Signs and checks state a client carries back, and spends single-use values.
 *
 * @example Two replicas configured with the same key agree
 * ```ts
 * import { StateKeys } from "./signed_state.ts";
 * const key = new TextEncoder().encode("an example key of at least 32 bytes!!");
 * const a = new StateKeys({ keys: [key] });
 * const b = new StateKeys({ keys: [key] });
 * const token = await a.seal("cursor", { page: 2 }, "alice");
 * const opened = await b.open("cursor", token, "alice");
 * if (!opened.ok || (opened.payload as { page: number }).page !== 2) throw new Error("no");
 * if ((await b.open("cursor", token, "bob")).ok) throw new Error("bound to alice");
 * ```
 */
export class StateKeys {
  readonly #raw: Uint8Array<ArrayBuffer>[];
  readonly #configured: boolean;
  readonly #singleUse: SingleUseStore;
  /** Imported on first use: the first Web Crypto call of a process costs tens of ms. */
  #keys?: Promise<CryptoKey[]>;

  /**
   * Make the key service.
   * @param options the keys (newest first) and the single-use store
   * @throws {RangeError} when a key is shorter than {@link MIN_STATE_KEY_BYTES}
   */
  constructor(options: StateKeysOptions = {}) {
    const given = options.keys ?? [];
    given.forEach((k, i) => {
      if (k.length < MIN_STATE_KEY_BYTES) {
        throw new RangeError(
          `state key ${i + 1} has ${k.length} bytes; a key needs at least ${MIN_STATE_KEY_BYTES}`,
        );
      }
    });
    this.#configured = given.length > 0;
    this.#raw = this.#configured
      ? given.map((k) => new Uint8Array(k))
      : [crypto.getRandomValues(new Uint8Array(32))];
    this.#singleUse = options.singleUse ?? new InProcessSingleUse();
  }

  /** True when the keys came from configuration (values verify in every process holding them). */
  get configured(): boolean {
    return this.#configured;
  }

  /** How many keys verify (the first of them signs). */
  get keyCount(): number {
    return this.#raw.length;
  }

  /** Where single-use values are spent (`"process"`, `"redis"`...). */
  get singleUseKind(): string {
    return this.#singleUse.kind;
  }

  #cryptoKeys(): Promise<CryptoKey[]> {
    this.#keys ??= Promise.all(
      this.#raw.map((bytes) =>
        crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
          "sign",
        ])
      ),
    );
    return this.#keys;
  }

  /**
   * MAC of `body` for `purpose` and `caller` under the signing (first) key, or
   * under every key (verification).
   */
  async #macs(
    purpose: string,
    caller: string | undefined,
    body: string,
    all: boolean,
  ): Promise<Uint8Array[]> {
    const input = encoder.encode(`${purpose}\u0000${caller ?? ""}\u0000${body}`);
    const keys = await this.#cryptoKeys();
    return await Promise.all(
      (all ? keys : keys.slice(0, 1)).map(async (key) =>
        new Uint8Array(await crypto.subtle.sign("HMAC", key, input))
      ),
    );
  }

  /**
   * Sign `body` (already in its wire alphabet, base64url) for `purpose` and `caller`.
   * @param macBytes how many MAC bytes to append (16 to 32; default 32)
   * @returns `body "." base64url(mac)`
   */
  async sign(purpose: string, body: string, caller?: string, macBytes = 32): Promise<string> {
    const [mac] = await this.#macs(purpose, caller, body, false);
    return `${body}.${base64url(mac.subarray(0, clampMac(macBytes)))}`;
  }

  /**
   * Check a value made by {@link sign} for the same `purpose` and `caller`.
   * Every key is tried (rotation); comparisons take the same time wherever
   * they differ.
   * @returns the body, or why it is refused
   */
  async verify(
    purpose: string,
    token: string,
    caller?: string,
    macBytes = 32,
  ): Promise<{ ok: true; body: string } | { ok: false; why: Unverified }> {
    const dot = token.indexOf(".");
    const body = dot > 0 ? token.slice(0, dot) : "";
    const mac = dot > 0 ? fromBase64url(token.slice(dot + 1)) : null;
    const n = clampMac(macBytes);
    if (!body || !/^[A-Za-z0-9_-]+$/.test(body) || !mac || mac.length !== n) {
      return { ok: false, why: "malformed" };
    }
    let match = false;
    for (const full of await this.#macs(purpose, caller, body, true)) {
      match = constantTimeEqual(full.subarray(0, n), mac) || match;
    }
    return match ? { ok: true, body } : { ok: false, why: "unsigned" };
  }

  /**
   * Sign a JSON payload: {@link sign} of `base64url(JSON.stringify(payload))`.
   */
  seal(purpose: string, payload: unknown, caller?: string, macBytes = 32): Promise<string> {
    return this.sign(purpose, base64url(encoder.encode(JSON.stringify(payload))), caller, macBytes);
  }

  /**
   * Verify and decode a value made by {@link seal}.
   * @returns the payload, or why it is refused (`"malformed"` also when the
   *   signed body is not JSON, which only a holder of a key could make)
   */
  async open(
    purpose: string,
    token: unknown,
    caller?: string,
    macBytes = 32,
  ): Promise<{ ok: true; payload: unknown } | { ok: false; why: Unverified }> {
    if (typeof token !== "string" || token.length > 8192) return { ok: false, why: "malformed" };
    const checked = await this.verify(purpose, token, caller, macBytes);
    if (!checked.ok) return checked;
    const bytes = fromBase64url(checked.body);
    if (!bytes) return { ok: false, why: "malformed" };
    try {
      return { ok: true, payload: JSON.parse(new TextDecoder().decode(bytes)) };
    } catch {
      return { ok: false, why: "malformed" };
    }
  }

  /**
   * Make a single-use value (see {@link SingleUseStore.issue}): put it in what
   * is signed, and {@link spend} it when the value comes back.
   * @throws {Error} when the store cannot make one
   */
  issue(): Promise<string> {
    return this.#singleUse.issue();
  }

  /**
   * Spend a single-use value made by {@link issue} (see
   * {@link SingleUseStore.spend}). The record is kept
   * {@link SPENT_RECORD_SLACK_MS} past `expiresAt`, so a replica whose clock
   * runs behind still finds it while it holds the value unexpired.
   * @returns `"spent"` only when this call spent it first
   * @throws {Error} when the store cannot record it: refuse what it guards
   */
  spend(id: string, expiresAt: number): Promise<SpendOutcome> {
    return this.#singleUse.spend(id, expiresAt + SPENT_RECORD_SLACK_MS);
  }

  /** Release the single-use store's connections. */
  async close(): Promise<void> {
    await this.#singleUse.close?.();
  }
}

/**
 * The caller identity signed state is bound to, read from the transport's
 * `authorize` verdict (`auth`): its `caller` property when that is a
 * non-empty string (weir's bearer-token and OAuth checks set one), else none
 * (an unauthenticated request binds to nobody in particular).
 *
 * @example The identity an authorize verdict carries
 * ```ts
 * import { callerOf } from "./signed_state.ts";
 * if (callerOf({ caller: "alice" }) !== "alice" || callerOf(true) !== undefined) throw new Error();
 * ```
 */
export function callerOf(auth: unknown): string | undefined {
  const caller = (auth as { caller?: unknown } | null | undefined)?.caller;
  return typeof caller === "string" && caller !== "" ? caller : undefined;
}

function clampMac(n: number): number {
  return Math.min(32, Math.max(16, Math.floor(n)));
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
 * each value has exactly one spelling.
 */
export function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return base64url(bytes) === text ? bytes : null;
  } catch {
    return null;
  }
}
