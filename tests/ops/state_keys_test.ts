/**
 * Where the key service's keys and single-use store come from
 * (src/ops/state_keys.ts): the flags, their refusals, and the start-up line.
 */
import assert from "node:assert/strict";
import {
  checkSingleUse,
  logStateSetup,
  parseStateKeys,
  type StateIo,
  stateSetup,
} from "../../src/ops/state_keys.ts";
import { FlagError } from "../../src/ops/flags.ts";
import type { SingleUseStore } from "../../src/mcp/signed_state.ts";

const K1 = "k1-" + "a".repeat(40);
const K2 = "k2-" + "b".repeat(40);

function io(env: Record<string, string>, files: Record<string, string> = {}): StateIo & {
  stores: string[];
} {
  const stores: string[] = [];
  return {
    stores,
    env: (name) => env[name],
    readFile: (path) =>
      Object.hasOwn(files, path)
        ? Promise.resolve(new TextEncoder().encode(files[path]))
        : Promise.reject(new Deno.errors.NotFound("nope")),
    redisStore: (url) => {
      stores.push(url);
      const store: SingleUseStore = {
        kind: "redis",
        issue: () => Promise.resolve("n.g"),
        spend: () => Promise.resolve("spent"),
      };
      return Promise.resolve(store);
    },
  };
}

Deno.test("parseStateKeys() splits on commas, spaces and newlines, newest first", () => {
  const keys = parseStateKeys(`${K1}, ${K2}\n`, "X");
  assert.deepEqual(keys.map((k) => new TextDecoder().decode(k)), [K1, K2]);
});

Deno.test("parseStateKeys() refuses none, short, odd and repeated keys, never echoing one", () => {
  const cases: [string | undefined, RegExp][] = [
    [undefined, /X: holds no key/],
    [" , ", /X: holds no key/],
    ["short", /X: key 1 is 5 characters; use at least 32 \(e\.g\. openssl rand -base64 48\)/],
    [`${K1} ${"é".repeat(40)}`, /X: key 2 has a character outside/],
    [`${K1},${K1}`, /X: key 2 repeats an earlier key/],
    [`# rotated in May\n${K1}\n`, /X: line 1 is a comment; a key setting holds keys only/],
    [`${K1}\n  # old\n`, /X: line 2 is a comment; a key setting holds keys only/],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parseStateKeys(text, "X"), (error: Error) => {
      assert.match(error.message, message);
      assert.ok(!error.message.includes(K1), "no key in the message");
      return true;
    });
  }
});

Deno.test("stateSetup(): no flags keep a random per-process key and in-process single use", async () => {
  const setup = await stateSetup({}, undefined, io({}));
  assert.equal(setup.keys.configured, false);
  assert.equal(setup.source, "random");
  assert.equal(setup.keys.singleUseKind, "process");
  const lines: Record<string, unknown>[] = [];
  logStateSetup((l) => lines.push(l), setup);
  assert.equal(lines[0].event, "state_keys");
  assert.equal(lines[0].source, "random");
  assert.match(String(lines[0].message), /verify nowhere else.*--state-keys-env/);
});

Deno.test("stateSetup(): keys from a variable or a file, single use in the store named", async () => {
  const fromEnv = await stateSetup(
    { "state-keys-env": "KEYS", "state-store-env": "R" },
    undefined,
    io({ KEYS: `${K1},${K2}`, R: "redis://127.0.0.1:6379/2" }),
  );
  assert.equal(fromEnv.source, "env KEYS");
  assert.equal(fromEnv.keys.keyCount, 2);
  assert.equal(fromEnv.keys.singleUseKind, "redis");
  assert.equal(fromEnv.store, "--state-store-env R");
  const files = io({}, { "/keys": `${K2}\n${K1}\n` });
  const fromFile = await stateSetup({ "state-keys-file": "/keys" }, undefined, files);
  assert.equal(fromFile.source, "file /keys");
  assert.equal(fromFile.keys.keyCount, 2);
  // The two agree: K1 verifies on both (rotation).
  const a = await stateSetup({ "state-keys-env": "KEYS" }, undefined, io({ KEYS: K1 }));
  const token = await a.keys.seal("p", 1);
  assert.equal((await fromFile.keys.open("p", token)).ok, true);
  const lines: Record<string, unknown>[] = [];
  logStateSetup((l) => lines.push(l), fromEnv);
  assert.deepEqual(lines[0], {
    level: "info",
    event: "state_keys",
    source: "env KEYS",
    keys: 2,
    single_use: "redis",
    store: "--state-store-env R",
  });
  assert.ok(!JSON.stringify(lines).includes("redis://"), "never the URL");
});

Deno.test("stateSetup(): the guardfile's rate-limit store records single use unless a flag says otherwise", async () => {
  const world = io({ KEYS: K1, R: "redis://flag:1" });
  const fallback = { what: 'the rate-limit store (env "RL")', url: "redis://guardfile:1" };
  const viaGuardfile = await stateSetup({ "state-keys-env": "KEYS" }, fallback, world);
  assert.equal(viaGuardfile.store, 'the rate-limit store (env "RL")');
  const viaFlag = await stateSetup(
    { "state-keys-env": "KEYS", "state-store-env": "R" },
    fallback,
    world,
  );
  assert.equal(viaFlag.store, "--state-store-env R");
  assert.deepEqual(world.stores, ["redis://guardfile:1", "redis://flag:1"]);
});

Deno.test("stateSetup(): refusals name the flag and what to do", async () => {
  const cases: [Record<string, string>, Record<string, string>, RegExp, boolean][] = [
    [{ "state-keys-env": "A", "state-keys-file": "/k" }, {}, /two sources: give one/, true],
    [{ "state-keys-env": "A" }, {}, /--state-keys-env A: the variable is not set/, false],
    [
      { "state-keys-file": "/missing" },
      {},
      /--state-keys-file \/missing: cannot read it \(no such file\)/,
      false,
    ],
    [
      { "state-store-env": "R" },
      {},
      /--state-store-env R: the variable is not set; set it to redis/,
      false,
    ],
    [
      { "state-store-env": "R" },
      { R: "http://x" },
      /--state-store-env R: does not hold a redis/,
      false,
    ],
  ];
  for (const [values, env, message, usage] of cases) {
    await assert.rejects(() => stateSetup(values, undefined, io(env)), (error: Error) => {
      assert.match(error.message, message);
      assert.equal(error instanceof FlagError, usage, `${message}: a usage error? ${usage}`);
      return true;
    });
  }
});

Deno.test("checkSingleUse(): shared keys with confirm gates need a shared store", async () => {
  const keyed = await stateSetup({ "state-keys-env": "K" }, undefined, io({ K: K1 }));
  assert.throws(() => checkSingleUse(keyed, ["delete_ticket"]), (error: Error) => {
    assert.ok(error instanceof FlagError);
    assert.match(error.message, /confirms "delete_ticket".*Add --state-store-env VAR/);
    return true;
  });
  // Fine: no gate; a per-process key; a shared store.
  checkSingleUse(keyed, []);
  checkSingleUse(await stateSetup({}, undefined, io({})), ["delete_ticket"]);
  checkSingleUse(
    await stateSetup(
      { "state-keys-env": "K", "state-store-env": "R" },
      undefined,
      io({ K: K1, R: "redis://x:1" }),
    ),
    ["delete_ticket"],
  );
});
