/**
 * Scale out for real: three weir replicas (the real CLI) behind a real
 * HAProxy that health-checks `GET /readyz`, one shared redis-server, the same
 * state keys on each, and a recording upstream. Shown from a client's side:
 *
 * - a confirmation asked on one replica and answered on another runs once;
 *   the same answer replayed on the third does not run;
 * - `tools/list` paged on three replicas in turn: no item lost or repeated;
 * - a rolling restart (SIGTERM each replica in turn, start it again) while
 *   clients call continuously through the load balancer ends with 0 failed
 *   calls (HAProxy retries nothing, as a Kubernetes Service does not);
 * - a rate limit shared in Redis holds in total across the replicas.
 *
 * Skipped, with the reason, where haproxy or redis-server is missing.
 */
import assert from "node:assert/strict";
import { tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { haproxyBinary } from "../support/haproxy.ts";
import { redisMissing, startRedis } from "../support/redis.ts";
import { startCluster } from "../support/replicas.ts";
import { ACCEPT, modernPost, notRun, resultText } from "../support/modern_http.ts";

const haproxy = haproxyBinary();
const missing = "missing" in haproxy ? haproxy.missing : redisMissing();
if (missing) console.error(`SKIP replicas_test: ${missing}`);

const TOKEN = "replicas-test-token-0123456789";
const OLD_KEY = "replicas-test-old-key-0123456789abcdefghij";
const NEW_KEY = "replicas-test-new-key-0123456789abcdefghij";
/** Tools beyond one 50-item page, so tools/list pages. */
const ITEMS = 70;

const guardfile = (upstream: string, head = "") =>
  tempGuardfile(`${head}confirm "delete_ticket" message="Delete this ticket for good?"
wrap ward mcp tickets {
    base-url "${upstream}"
    auth none
    can delete ticket { path "/tickets/{id}" }
    can get ticket { path "/tickets/{id}" }
${
    Array.from({ length: ITEMS }, (_, i) =>
      `    can get item${String(i).padStart(3, "0")} { path "/items/${i}" }`)
      .join("\n")
  }
}
`);

/** A `tools/call` through the load balancer, to the replica named (or any). */
const call = (
  url: string,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  replica?: string,
) =>
  modernPost(url, "tools/call", { name, arguments: args, ...extra }, {
    token: TOKEN,
    headers: replica ? { "x-weir-replica": replica } : {},
  });

Deno.test({
  name:
    "three replicas behind HAProxy: confirmations, cursors and a rolling restart with 0 failed calls",
  ignore: missing !== null,
  fn: async () => {
    const redis = await startRedis();
    const upstream = await startRecorder((req) => Response.json({ path: req.path }));
    const file = await guardfile(upstream.url);
    let cluster;
    try {
      cluster = await startCluster({
        file,
        count: 3,
        env: { WEIR_STATE_KEYS: OLD_KEY, REDIS_URL: redis.url, WEIR_TOKENS: TOKEN },
        extra: [
          "--inbound-token-env",
          "WEIR_TOKENS",
          "--state-keys-env",
          "WEIR_STATE_KEYS",
          "--state-store-env",
          "REDIS_URL",
          "--shutdown-grace",
          "3000",
        ],
      });
      const lb = cluster.proxy.url;
      const proxy = cluster.proxy;
      // Every replica serves the same surface: one digest in each /healthz (issue 32).
      const digests = await Promise.all(
        cluster.replicas.map(async (r) =>
          (await (await fetch(`http://127.0.0.1:${r.port}/healthz`)).json()).surface
        ),
      );
      assert.match(digests[0], /^[0-9a-f]{16}$/);
      assert.deepEqual(digests, [digests[0], digests[0], digests[0]]);
      /** Run one request meant for `replica`, and check HAProxy did send it there. */
      const on = async <T>(replica: string, run: () => Promise<T>): Promise<T> => {
        const before = await proxy.sessions();
        const out = await run();
        const after = await proxy.sessions();
        assert.equal(after[replica] - before[replica], 1, `${replica} took the request`);
        return out;
      };
      const deletes = () => upstream.requests.filter((r) => r.method === "DELETE").length;

      // A confirmation asked on w1, answered on w2: runs once. Replayed on w3: does not run.
      const asked = await on("w1", () => call(lb, "delete_ticket", { id: "41" }, {}, "w1"));
      assert.equal(asked.result?.resultType, "input_required", JSON.stringify(asked));
      const answer = { requestState: asked.result!.requestState, inputResponses: ACCEPT };
      const ran = await on("w2", () => call(lb, "delete_ticket", { id: "41" }, answer, "w2"));
      assert.equal(ran.result?.resultType, "complete", resultText(ran.result));
      assert.equal(deletes(), 1);
      const replay = await on("w3", () => call(lb, "delete_ticket", { id: "41" }, answer, "w3"));
      assert.ok(notRun(replay), `a replayed answer does not run: ${JSON.stringify(replay)}`);
      assert.equal(deletes(), 1, "the answer ran its call once across three replicas");
      // Racing the same answer to all three at once: still once.
      const again = await call(lb, "delete_ticket", { id: "42" }, {}, "w3");
      const raced = await Promise.all(
        ["w1", "w2", "w3"].map((w) =>
          call(lb, "delete_ticket", { id: "42" }, {
            requestState: again.result!.requestState,
            inputResponses: ACCEPT,
          }, w)
        ),
      );
      assert.equal(raced.filter((r) => r.result?.resultType === "complete").length, 1);
      assert.equal(deletes(), 2);

      // tools/list paged on w1, then w2, then w3: every tool once.
      const names: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const replica = `w${(page % 3) + 1}`;
        const listed = await on(
          replica,
          () =>
            modernPost(lb, "tools/list", cursor ? { cursor } : {}, {
              token: TOKEN,
              headers: { "x-weir-replica": replica },
            }),
        );
        assert.equal(listed.error, undefined, JSON.stringify(listed.error));
        names.push(...(listed.result!.tools as { name: string }[]).map((t) => t.name));
        cursor = listed.result!.nextCursor as string | undefined;
        if (!cursor) break;
      }
      assert.equal(new Set(names).size, names.length, `a tool repeated: ${names}`);
      assert.deepEqual(names, [...names].sort(), "in order");
      for (let i = 0; i < ITEMS; i++) {
        assert.ok(names.includes(`get_item${String(i).padStart(3, "0")}`), `lost item ${i}`);
      }
      assert.ok(names.includes("delete_ticket") && names.includes("get_ticket"));

      // A question asked before the rolling restart, answered after it: the keys come from
      // configuration, so it still verifies on a restarted replica.
      const before = await call(lb, "delete_ticket", { id: "43" }, {}, "w3");
      assert.equal(before.result?.resultType, "input_required");

      // Rolling restart under continuous calls. The restarted replicas also add a second
      // key (the first step of a rotation: the old key still signs, both verify).
      let done = false;
      let calls = 0;
      const failures: string[] = [];
      const worker = async (w: number) => {
        for (let i = 0; !done && i < 100_000; i++) {
          calls++;
          try {
            if (w === 0) {
              // The tool API, through the same load balancer.
              const res = await fetch(`${lb}/api/get_ticket`, {
                method: "POST",
                headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
                body: JSON.stringify({ id: `api-${i}` }),
                signal: AbortSignal.timeout(30_000),
              });
              const text = await res.text();
              if (res.status !== 200) failures.push(`api ${res.status} ${text.slice(0, 120)}`);
            } else {
              const r = await call(lb, "get_ticket", { id: `w${w}-${i}` });
              if (r.status !== 200 || r.error || r.result?.isError) {
                failures.push(
                  `mcp ${r.status} ${JSON.stringify(r.error ?? r.result ?? null).slice(0, 160)}`,
                );
              }
            }
          } catch (error) {
            failures.push(`call failed: ${(error as Error).message}`);
          }
        }
      };
      const workers = [0, 1, 2, 3].map(worker);
      const codes: number[] = [];
      try {
        for (let i = 0; i < cluster.replicas.length; i++) {
          codes.push(await cluster.restart(i, { WEIR_STATE_KEYS: `${OLD_KEY},${NEW_KEY}` }));
        }
      } finally {
        done = true;
        await Promise.all(workers);
      }
      const sessions = await cluster.proxy.sessions();
      console.log(
        `rolling restart: ${calls} calls, ${failures.length} failed; per replica ${
          JSON.stringify(sessions)
        }`,
      );
      assert.deepEqual(codes, [0, 0, 0], "each replica drained and exited 0");
      assert.deepEqual(failures.slice(0, 10), [], `${failures.length} of ${calls} calls failed`);
      assert.ok(calls > 0);
      for (const r of cluster.replicas) {
        assert.match(
          r.served.stderr(),
          /"event":"state_keys","source":"env WEIR_STATE_KEYS","keys":2/,
        );
      }

      const after = await call(lb, "delete_ticket", { id: "43" }, {
        requestState: before.result!.requestState,
        inputResponses: ACCEPT,
      }, "w1");
      assert.equal(after.result?.resultType, "complete", resultText(after.result));
      assert.equal(deletes(), 3);
    } finally {
      await cluster?.close();
      await upstream.close();
      await redis.close();
      await Deno.remove(file);
    }
  },
});

Deno.test({
  name: "a rate limit shared in Redis holds in total across three replicas behind HAProxy",
  ignore: missing !== null,
  fn: async () => {
    const redis = await startRedis();
    const upstream = await startRecorder((req) => Response.json({ path: req.path }));
    const file = await guardfile(
      upstream.url,
      `rate-limit "5/1h" {\n    store redis env "REDIS_URL"\n    bucket "replicas-test"\n}\n`,
    );
    let cluster;
    try {
      cluster = await startCluster({
        file,
        count: 3,
        env: { WEIR_STATE_KEYS: OLD_KEY, REDIS_URL: redis.url, WEIR_TOKENS: TOKEN },
        extra: ["--inbound-token-env", "WEIR_TOKENS", "--state-keys-env", "WEIR_STATE_KEYS"],
      });
      const results = [];
      for (let i = 0; i < 15; i++) {
        // Each replica in turn, so all three spend from the one bucket.
        results.push(
          await call(cluster.proxy.url, "get_ticket", { id: `r${i}` }, {}, `w${(i % 3) + 1}`),
        );
      }
      const ok = results.filter((r) => r.result && !r.result.isError).length;
      const limited = results.filter((r) => /^rate_limited: /.test(resultText(r.result)));
      assert.equal(ok, 5, results.map((r) => resultText(r.result).slice(0, 60)).join("\n"));
      assert.equal(limited.length, 10);
      assert.equal(upstream.requests.length, 5, "five calls in total reached the upstream");
      const sessions = await cluster.proxy.sessions();
      assert.ok(
        Object.values(sessions).every((n) => n >= 5),
        `each replica took its five calls: ${JSON.stringify(sessions)}`,
      );
    } finally {
      await cluster?.close();
      await upstream.close();
      await redis.close();
      await Deno.remove(file);
    }
  },
});
