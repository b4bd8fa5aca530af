/**
 * sql caps bound memory while reading, and a database URL the driver cannot
 * read is a start-up error naming the setting, never the password. Through
 * the shipped CLI against a real PostgreSQL: 300 rows of 1 MB against the
 * default 8 MiB answer cap is refused with the process's peak memory far
 * below the result's size (it was read whole: 68 -> 998 MiB); the cap holds
 * at boundary-1, boundary and boundary+1; bad DSNs (a port of 99999, `%zz`
 * in the password, an unclosed `[::1`, another scheme) stop `weir serve`
 * with exit 2, and one read per call from a file says `dsn_invalid`.
 */
import assert from "node:assert/strict";
import { callApi, runCli, serveHttp, tempGuardfile } from "../support/cli.ts";
import { postgresMissing, startPostgres } from "../support/postgres.ts";

const missing = postgresMissing();

/** Peak resident memory of a process, in MiB (Linux /proc). */
function peakMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

const GUARDFILE = `wrap ward mcp big {
    database pgx { value env "BIG_DSN" }
    can list blobs {
        sql {
            statement "SELECT i, repeat('x', $1) AS blob FROM generate_series(1, $2) AS i"
            param "size" type="integer" required=#true
            param "count" type="integer" required=#true
            max-rows "1000"
        }
    }
}
`;

Deno.test({
  name: "weir serve: a sql answer over the cap is refused while reading, memory bounded",
  ignore: missing !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const pg = await startPostgres();
    const file = await tempGuardfile(GUARDFILE);
    const server = await serveHttp(file, {
      env: { BIG_DSN: pg.adminUrl, PATH: Deno.env.get("PATH") ?? "" },
    });
    try {
      // Warm up (driver loaded, a connection open), then measure the peak.
      assert.equal((await callApi(server.url, "list_blobs", { size: 10, count: 2 })).status, 200);
      const before = peakMiB(server.pid);
      const r = await callApi(server.url, "list_blobs", { size: 1_000_000, count: 300 }, {
        timeoutMs: 120_000,
      });
      assert.equal(r.status, 502, r.text);
      assert.match(r.text, /^sql_too_large: list_blobs produced more than the 8388608-byte/);
      const grew = peakMiB(server.pid) - before;
      // 300 MB of rows (about 600 MB as JavaScript strings) were never held.
      assert.ok(grew < 200, `peak memory grew by ${grew.toFixed(0)} MiB reading a 300 MB result`);
      // The pool is fine afterwards.
      assert.equal((await callApi(server.url, "list_blobs", { size: 5, count: 3 })).status, 200);
    } finally {
      await server.stop();
      await pg.close();
      await Deno.remove(file);
    }
  },
});

Deno.test({
  name: "weir serve: the sql answer cap holds at boundary-1, boundary, boundary+1",
  ignore: missing !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const pg = await startPostgres();
    const file = await tempGuardfile(GUARDFILE);
    // The exact size of one answer, measured with a generous cap.
    const args = { size: 2000, count: 40 };
    let exact = 0;
    {
      const server = await serveHttp(file, {
        env: { BIG_DSN: pg.adminUrl, PATH: Deno.env.get("PATH") ?? "" },
      });
      try {
        const r = await callApi(server.url, "list_blobs", args);
        exact = (r.body.structuredContent as { coverage: { bytes: number } }).coverage.bytes;
      } finally {
        await server.stop();
      }
    }
    try {
      for (const delta of [-1, 0, 1]) {
        const server = await serveHttp(file, {
          env: { BIG_DSN: pg.adminUrl, PATH: Deno.env.get("PATH") ?? "" },
          extra: ["--max-response-bytes", String(exact + delta)],
        });
        try {
          const r = await callApi(server.url, "list_blobs", args);
          if (delta >= 0) assert.equal(r.status, 200, `cap ${exact + delta}: ${r.text}`);
          else {
            assert.equal(r.status, 502, `cap ${exact + delta}`);
            assert.match(r.text, /^sql_too_large/);
          }
        } finally {
          await server.stop();
        }
      }
    } finally {
      await pg.close();
      await Deno.remove(file);
    }
  },
});

Deno.test("weir serve: a database URL the driver cannot read stops start-up, naming the setting and never the password", async () => {
  const password = "s3cr3t-pw-4411";
  const file = await tempGuardfile(GUARDFILE);
  try {
    const bad: [string, RegExp][] = [
      [
        `postgres://app:${password}@127.0.0.1:99999/shop`,
        /port that is not a number from 1 to 65535/,
      ],
      [
        `postgres://app:${password}%zz@127.0.0.1:5432/shop`,
        /password with a "%" that is not followed/,
      ],
      [`postgres://app:${password}@[::1:5432/shop`, /IPv6 host without its closing bracket/],
      [`mysql://app:${password}@127.0.0.1/shop`, /is not a PostgreSQL URL/],
      [`host=127.0.0.1 password=${password}`, /is not a PostgreSQL URL/],
    ];
    for (const [dsn, why] of bad) {
      const out = await runCli(["serve", file, "--http", "127.0.0.1:0"], {
        env: { BIG_DSN: dsn, PATH: Deno.env.get("PATH") ?? "" },
      });
      assert.equal(out.code, 2, `${dsn}: ${out.stderr}`);
      assert.match(out.stderr, /the database DSN \(from env BIG_DSN\) /);
      assert.match(out.stderr, why);
      assert.ok(!out.stderr.includes(password), out.stderr);
      assert.ok(!out.stderr.includes("127.0.0.1:99999"), out.stderr);
    }
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("weir serve: a DSN read per call that turns bad answers dsn_invalid, not internal_error", async () => {
  const password = "s3cr3t-pw-9922";
  const dir = await Deno.makeTempDir();
  const dsnFile = `${dir}/dsn`;
  await Deno.writeTextFile(dsnFile, "postgres://app:pw@127.0.0.1:1/shop");
  const file = await tempGuardfile(
    GUARDFILE.replace(`value env "BIG_DSN"`, `value file "${dsnFile}"`),
  );
  const server = await serveHttp(file);
  try {
    await Deno.writeTextFile(dsnFile, `postgres://app:${password}@127.0.0.1:99999/shop`);
    const r = await callApi(server.url, "list_blobs", { size: 1, count: 1 });
    assert.equal(r.status, 500);
    assert.match(
      r.text,
      /^dsn_invalid: the database DSN \(from file .*\) has a port .*nothing was run/,
    );
    assert.ok(!r.text.includes(password));
    assert.ok(!server.stderr().includes(password));
    assert.ok(!server.stderr().includes("internal_error"));
  } finally {
    await server.stop();
    await Deno.remove(file);
    await Deno.remove(dir, { recursive: true });
  }
});
