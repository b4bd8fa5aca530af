/**
 * Where a serve command's key service (src/mcp/signed_state.ts) gets its
 * keys and its single-use store: the flags every serve mode shares.
 *
 * - `--state-keys-env VAR` or `--state-keys-file PATH`: one or more keys,
 *   separated by commas, spaces or newlines, newest first (the first signs,
 *   all verify: rotate by adding the new key second on every replica, then
 *   moving it first, then dropping the old one). Each key is at least
 *   {@link MIN_STATE_KEY_CHARS} characters of `A-Z a-z 0-9 - . _ ~ + / =`
 *   (e.g. `openssl rand -base64 48`); its UTF-8 bytes are the HMAC key. A
 *   file is what a mounted Kubernetes Secret looks like.
 * - `--state-store-env VAR`: a `redis://` or `rediss://` URL where single-use
 *   values (answered confirmations) are recorded, so each runs its call once
 *   across every replica. Without it, a guardfile whose rate limit names a
 *   Redis store (`store redis env "X"`) shares that store.
 * - Neither: one random key for this process and single use in its memory,
 *   as before; the start-up line says so.
 *
 * Messages name the variable or file, never a key or a URL.
 *
 * @module
 */
import { InProcessSingleUse, type SingleUseStore, StateKeys } from "../mcp/signed_state.ts";
import type { Logger } from "../mcp/server.ts";
import { FlagError } from "./flags.ts";
import { FileRefused, readBoundedFile } from "./bounded_file.ts";

/** Fewest characters a configured key may have. */
export const MIN_STATE_KEY_CHARS = 32;

/** Largest key file read (a few keys are a few hundred bytes). */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** Where the keys came from, for the start-up line. */
export interface StateSetup {
  keys: StateKeys;
  /** `random`, `env VAR` or `file PATH`. */
  source: string;
  /** Where the single-use store's URL came from (a flag, or the rate-limit store), when shared. */
  store?: string;
  /** Why the shared store did not answer at start (weir starts anyway and keeps trying). */
  storeDown?: string;
}

/**
 * Split a key setting into keys.
 * @param name how to name the setting in messages (`--state-keys-env WEIR_STATE_KEYS`)
 * @throws {RangeError} when there is none, one is short or holds another
 *   character, or one repeats (the message never repeats a key)
 */
export function parseStateKeys(text: string | undefined, name: string): Uint8Array[] {
  const comment = (text ?? "").split("\n").findIndex((line) => line.trim().startsWith("#"));
  if (comment >= 0) {
    throw new RangeError(
      `${name}: line ${comment + 1} is a comment; a key setting holds keys only (newest first, ` +
        `separated by commas, spaces or newlines)`,
    );
  }
  const keys = (text ?? "").split(/[\s,]+/).filter((k) => k !== "");
  if (keys.length === 0) throw new RangeError(`${name}: holds no key`);
  keys.forEach((k, i) => {
    if (k.length < MIN_STATE_KEY_CHARS) {
      throw new RangeError(
        `${name}: key ${i + 1} is ${k.length} characters; use at least ${MIN_STATE_KEY_CHARS} ` +
          `(e.g. openssl rand -base64 48)`,
      );
    }
    if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(k)) {
      throw new RangeError(
        `${name}: key ${i + 1} has a character outside A-Z a-z 0-9 - . _ ~ + / = ` +
          `(e.g. openssl rand -base64 48 makes one)`,
      );
    }
    if (keys.indexOf(k) !== i) throw new RangeError(`${name}: key ${i + 1} repeats an earlier key`);
  });
  const encoder = new TextEncoder();
  return keys.map((k) => encoder.encode(k));
}

/** I/O the setup reads through (the process's by default; tests pass their own). */
export interface StateIo {
  env(name: string): string | undefined;
  /**
   * Read a file, at most `maxBytes + 1` bytes of it (so one over the cap is
   * seen, and an endless file such as /dev/zero is not read forever).
   */
  readFile(path: string, maxBytes: number): Promise<Uint8Array>;
  /** Make the shared single-use store for a Redis URL. */
  redisStore(url: string): Promise<SingleUseStore>;
}

const processIo: StateIo = {
  env: (name) => Deno.env.get(name),
  readFile: (path, maxBytes) =>
    readBoundedFile(path, {
      what: "key file",
      maxBytes,
      sizeHint: "a key file holds a few keys",
    }),
  redisStore: async (url) => {
    const { RedisSingleUse } = await import("../store/single_use.ts");
    return new RedisSingleUse({ url });
  },
};

/**
 * Build the key service from the flags.
 *
 * @param values the `parseArgs` values (the `state-*` keys of `OPS_FLAGS` are read)
 * @param fallbackStore the guardfile's Redis rate-limit store (how to name it,
 *   and its URL as configured), used for single use when `--state-store-env`
 *   is not given
 * @throws {FlagError} both a key variable and a key file (a usage error: exit 2)
 * @throws {RangeError} a variable unset, a file unreadable, a weak key or a
 *   store URL that is not redis:// (exit 1)
 */
export async function stateSetup(
  values: Record<string, unknown>,
  fallbackStore?: { what: string; url: string | undefined },
  io: StateIo = processIo,
): Promise<StateSetup> {
  const envName = values["state-keys-env"] as string | undefined;
  const file = values["state-keys-file"] as string | undefined;
  const storeVar = values["state-store-env"] as string | undefined;
  if (envName !== undefined && file !== undefined) {
    throw new FlagError("--state-keys-env and --state-keys-file are two sources: give one");
  }
  let raw: Uint8Array[] | undefined;
  let source = "random";
  if (envName !== undefined) {
    const name = `--state-keys-env ${envName}`;
    const value = io.env(envName);
    if (value === undefined || value.trim() === "") {
      throw new RangeError(`${name}: the variable is not set or holds no key`);
    }
    raw = parseStateKeys(value, name);
    source = `env ${envName}`;
  } else if (file !== undefined) {
    const name = `--state-keys-file ${file}`;
    let bytes: Uint8Array;
    try {
      bytes = await io.readFile(file, MAX_KEY_FILE_BYTES);
    } catch (error) {
      if (error instanceof FileRefused) throw new RangeError(`${name}: ${error.reason}`);
      throw new RangeError(
        `${name}: cannot read it (${
          error instanceof Deno.errors.NotFound
            ? "no such file"
            : error instanceof Deno.errors.PermissionDenied
            ? "permission denied"
            : "read failed"
        })`,
      );
    }
    if (bytes.length > MAX_KEY_FILE_BYTES) {
      throw new RangeError(`${name}: larger than ${MAX_KEY_FILE_BYTES} bytes; it holds keys`);
    }
    raw = parseStateKeys(new TextDecoder().decode(bytes), name);
    source = `file ${file}`;
  }
  const chosen = storeVar !== undefined
    ? { what: `--state-store-env ${storeVar}`, url: io.env(storeVar) }
    : fallbackStore;
  let singleUse: SingleUseStore = new InProcessSingleUse();
  let store: string | undefined;
  if (chosen) {
    const url = chosen.url;
    if (url === undefined || url === "") {
      throw new RangeError(`${chosen.what}: the variable is not set; set it to redis://host:port`);
    }
    if (!/^rediss?:\/\/\S+$/i.test(url)) {
      throw new RangeError(`${chosen.what}: does not hold a redis:// or rediss:// URL`);
    }
    singleUse = await io.redisStore(url);
    store = chosen.what;
  }
  // Ask the shared store once now, so a wrong URL or a store that is down is said at start,
  // not first found by a person's answer being refused.
  const storeDown = await (singleUse as { ping?: () => Promise<void> }).ping?.().then(
    () => undefined,
    (error: Error) => error.message,
  );
  return {
    keys: new StateKeys({ keys: raw, singleUse }),
    source,
    store,
    ...(storeDown ? { storeDown } : {}),
  };
}

/**
 * Why a setup would let a confirmed call run more than once, or `undefined`:
 * keys that verify beyond this process, confirmation gates, and single use
 * kept in this process's memory (another replica would accept the same answer
 * again). Checked at start ({@link checkSingleUse}) and by every reload (a
 * reload may add the first `confirm`).
 * @param keys the process's key service
 * @param gatedTools the tools the guardfile confirms
 * @param source where the keys came from, for the message (`env VAR`, `file PATH`)
 */
export function singleUseProblem(
  keys: StateKeys,
  gatedTools: readonly string[],
  source = "from configuration",
): string | undefined {
  if (!keys.configured || gatedTools.length === 0 || keys.singleUseKind !== "process") {
    return undefined;
  }
  return `the guardfile confirms ${gatedTools.map((t) => `"${t}"`).join(", ")}, and the state ` +
    `keys (${source}) let a confirmation verify on every process that holds them, but spent ` +
    `answers would be kept in this process only, so another replica could run the same answer ` +
    `again. Add --state-store-env VAR (VAR holding a redis:// URL every replica shares), or ` +
    `drop the state keys to keep a per-process key`;
}

/**
 * Refuse a setup {@link singleUseProblem} finds unsafe.
 * @throws {FlagError} saying what to add or drop (exit 2)
 */
export function checkSingleUse(setup: StateSetup, gatedTools: readonly string[]): void {
  const problem = singleUseProblem(setup.keys, gatedTools, setup.source);
  if (problem) throw new FlagError(problem);
}

/** The start-up line: where keys and single use come from (never a key or a URL). */
export function logStateSetup(log: Logger, setup: StateSetup): void {
  if (setup.storeDown) {
    log({
      level: "warn",
      event: "state_store_down",
      store: setup.store,
      reason: setup.storeDown,
      message: "answered confirmations are refused (503), never run, until the store answers; " +
        "weir keeps trying. Check the URL in that variable and that Redis is up",
    });
  }
  if (!setup.keys.configured) {
    log({
      level: "info",
      event: "state_keys",
      source: "random",
      single_use: setup.keys.singleUseKind,
      message: "cursors and confirmations are signed with a random key made for this process: " +
        "they verify nowhere else (another replica, a restart). To run several replicas, give " +
        "each the same keys (--state-keys-env or --state-keys-file) and a shared store " +
        "(--state-store-env)",
    });
    return;
  }
  log({
    level: "info",
    event: "state_keys",
    source: setup.source,
    keys: setup.keys.keyCount,
    single_use: setup.keys.singleUseKind,
    ...(setup.store ? { store: setup.store } : {}),
  });
}
