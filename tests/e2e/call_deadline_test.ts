/**
 * One deadline per call, over every wait in it: whatever a caller is told
 * failed does not happen later. Through the shipped CLI with
 * `--upstream-timeout`: twelve concurrent sql writes against a real
 * PostgreSQL (a pool of four connections, each write slower than the
 * deadline allows a second wave), calls queued behind a rate limit against a
 * slow upstream, and a confirmation a v1 client answers only after the
 * deadline. No timing is asserted: after everything settles (a bounded wait),
 * each call told it timed out with "nothing was sent" reached nothing, and
 * each call told it succeeded took effect exactly once.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { callApi, ROOT, serveHttp, tempGuardfile, weirCommand } from "../support/cli.ts";
import { postgresMissing, startPostgres } from "../support/postgres.ts";
import { startRecorder } from "../support/upstream.ts";

const missing = postgresMissing();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name:
    "weir serve: sql writes past the call's deadline never commit (pool wait and statement inside it)",
  ignore: missing !== null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const pg = await startPostgres();
    const admin = postgres(pg.adminUrl, { onnotice: () => {} });
    const file = await tempGuardfile(`wrap ward mcp marks {
    database pgx { value env "MARKS_DSN" }
    can create mark {
        sql {
            statement "INSERT INTO marks (tag) SELECT $1 FROM pg_sleep(1.2)"
            param "tag" type="string" required=#true
        }
    }
}
`);
    let server: Awaited<ReturnType<typeof serveHttp>> | undefined;
    try {
      await admin.unsafe(`CREATE TABLE marks (id serial PRIMARY KEY, tag text)`);
      server = await serveHttp(file, {
        env: { MARKS_DSN: pg.adminUrl, PATH: Deno.env.get("PATH") ?? "" },
        extra: ["--upstream-timeout", "2000"],
      });
      const tags = Array.from({ length: 12 }, (_, i) => `call-${i}`);
      const answers = await Promise.all(
        tags.map((tag) => callApi(server!.url, "create_mark", { tag }, { timeoutMs: 60_000 })),
      );
      // Let anything still queued or running finish (bounded): nothing more may commit.
      await sleep(4000);
      const committed = new Set(
        (await admin.unsafe(`SELECT tag FROM marks`)).map((r) => r.tag as string),
      );
      let timedOut = 0;
      answers.forEach((a, i) => {
        if (a.status === 200) {
          assert.ok(committed.has(tags[i]), `${tags[i]} was told it succeeded but did not commit`);
        } else {
          timedOut++;
          assert.equal(a.status, 504, a.text);
          assert.match(a.text, /^sql_timeout: "create_mark" did not finish within 2000 ms \(/);
          assert.ok(!committed.has(tags[i]), `${tags[i]} was told "${a.text}" but committed`);
        }
      });
      // Four connections, 1.2 s a write, 2 s a call: twelve cannot all finish.
      assert.ok(timedOut >= 4, `only ${timedOut} of 12 timed out`);
      const waited = answers.filter((a) => /waiting for a database connection/.test(a.text));
      for (const a of waited) assert.match(a.text, /nothing was sent, and nothing will be/);
      assert.equal(committed.size, answers.filter((a) => a.status === 200).length);
    } finally {
      await server?.stop();
      await admin.end();
      await pg.close();
      await Deno.remove(file);
    }
  },
});

Deno.test("weir serve: a call queued behind the rate limit past its deadline never reaches the upstream", async () => {
  // The upstream answers after 600 ms; the bucket lets one call through every 700 ms.
  const upstream = await startRecorder(async (req) => {
    await sleep(600);
    return Response.json({ path: req.path });
  });
  const file = await tempGuardfile(`rate-limit "1/700ms"
wrap ward mcp slow {
    base-url "${upstream.url}"
    auth none
    can get item { path "/items/{id}"; }
}
`);
  const server = await serveHttp(file, { extra: ["--upstream-timeout", "1500"] });
  try {
    const ids = Array.from({ length: 6 }, (_, i) => `i${i}`);
    const answers = await Promise.all(
      ids.map((id) => callApi(server.url, "get_item", { id }, { timeoutMs: 30_000 })),
    );
    await sleep(3000);
    const reached = new Set(upstream.requests.map((r) => r.path.slice("/items/".length)));
    answers.forEach((a, i) => {
      if (a.status === 200) assert.ok(reached.has(ids[i]));
      else {
        assert.ok([429, 504].includes(a.status), `${a.status}: ${a.text}`);
        if (/nothing was sent|rate_limited/.test(a.text)) {
          assert.ok(
            !reached.has(ids[i]),
            `${ids[i]} was told "${a.text}" but reached the upstream`,
          );
        } else {
          assert.match(a.text, /the request was sent and may have taken effect/);
        }
      }
    });
    assert.ok(
      answers.some((a) => a.status !== 200),
      "six calls at 1/700ms within 1.5 s cannot all pass",
    );
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});

Deno.test("weir serve --stdio: a confirmation answered after the deadline sends nothing", async () => {
  const upstream = await startRecorder(() => Response.json({ deleted: true }));
  const file = await tempGuardfile(`confirm "delete_ticket" message="Delete it?"
wrap ward mcp tickets {
    base-url "${upstream.url}"
    auth none
    can delete ticket { path "/tickets/{id}" }
}
`);
  const { command, args } = weirCommand();
  const transport = new StdioClientTransport({
    command,
    args: [...args, "serve", file, "--stdio", "--upstream-timeout", "1500"],
    cwd: ROOT,
    env: Deno.env.toObject(),
    stderr: "pipe",
  });
  let answerNow!: () => void;
  const later = new Promise<void>((r) => answerNow = r);
  const client = new ClientV1({ name: "late-confirmer", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    await later; // a person who answers after the call's deadline
    return { action: "accept" as const, content: {} };
  });
  try {
    await client.connect(transport);
    const result = await client.callTool({ name: "delete_ticket", arguments: { id: "9" } });
    assert.equal(result.isError, true);
    const text = (result.content as { text: string }[])[0].text;
    assert.match(
      text,
      /^upstream_timeout: DELETE \/tickets\/\{id\} did not finish within 1500 ms \(waiting for the confirmation\); nothing was sent/,
    );
    answerNow();
    await sleep(1500);
    assert.equal(upstream.requests.length, 0, "the late yes sent nothing");
  } finally {
    answerNow();
    await client.close();
    await upstream.close();
    await Deno.remove(file);
  }
});
