/**
 * One surface fingerprint (issue 32 item 4), through the shipped CLI: two
 * replicas of `weir serve FILE` with static tokens limited to different tools
 * answer the same digest in `GET /healthz` and `GET /readyz`, in the
 * `serving` log line, and, per caller, in `server/discover` (2026-07-28) and
 * `initialize` (2025-11-25, the official v1 client); two callers who list
 * different tools get different digests, the same on either replica; a
 * replica serving one more tool shows another digest. The wrap form: a tool
 * that drifts (a stub now) changes the digest.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CONFIG, serveHttp, tempGuardfile } from "../support/cli.ts";
import { modernPost } from "../support/modern_http.ts";
import { startWrapper, v1Http } from "../support/upstream_cli.ts";

const READER = "surface-digest-reader-token-0123456789";
const WRITER = "surface-digest-writer-token-0123456789";
const DIGEST = /^[0-9a-f]{16}$/;

const file = (extra = "") =>
  tempGuardfile(`wrap ward mcp tickets {
    base-url "http://127.0.0.1:9/api"
    auth none
    can get ticket { path "/tickets/{id}" }
    can list ticket { path "/tickets" }
    can delete ticket { path "/tickets/{id}" }
${extra}}
`);

async function probe(url: string, path: string): Promise<string> {
  const res = await fetch(`${url}${path}`);
  const body = await res.json();
  assert.equal(res.status, 200);
  assert.match(body.surface, DIGEST);
  return body.surface;
}

async function discovered(url: string, token: string): Promise<string> {
  const answer = await modernPost(url, "server/discover", {}, { token });
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  const digest = (answer.result!._meta as Record<string, string>)["weir.dev/surface"];
  assert.match(digest, DIGEST);
  return digest;
}

async function initialized(url: string, token: string): Promise<string> {
  const client = new Client({ name: "surface-digest", version: "1.0.0" });
  let meta: Record<string, unknown> | undefined;
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    // The initialize result's _meta is not kept by the client: read the wire.
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      const text = await res.clone().text();
      const m = /"weir\.dev\/surface":"([0-9a-f]{16})"/.exec(text);
      if (m && meta === undefined) meta = { surface: m[1] };
      return res;
    },
  });
  await client.connect(transport);
  await client.close();
  assert.ok(meta, "initialize carried the digest");
  return meta.surface as string;
}

function servingLine(stderr: string): Record<string, unknown> {
  const line = stderr.split("\n").find((l) => l.includes(`"event":"serving"`));
  assert.ok(line, stderr);
  return JSON.parse(line);
}

Deno.test("surface digest: replicas agree in /healthz, /readyz, the log line, discover and initialize; callers differ", async () => {
  const guardfile = await file();
  const env = { READER_TOKEN: READER, WRITER_TOKEN: WRITER };
  const extra = [
    "--tool-token-env",
    "READER_TOKEN:get_ticket,list_ticket",
    "--tool-token-env",
    "WRITER_TOKEN:get_ticket,list_ticket,delete_ticket",
  ];
  const replicas = [
    await serveHttp(guardfile, { env, extra }),
    await serveHttp(guardfile, { env, extra }),
  ];
  const other = await serveHttp(await file(`    can get report { path "/report" }\n`), {
    env,
    extra,
  });
  try {
    const whole = await Promise.all(replicas.map((r) => probe(r.url, "/healthz")));
    assert.equal(whole[0], whole[1], "every replica serves the same surface");
    for (const r of replicas) assert.equal(await probe(r.url, "/readyz"), whole[0]);
    assert.notEqual(await probe(other.url, "/healthz"), whole[0], "one more tool, another digest");
    const reader = await Promise.all(replicas.map((r) => discovered(r.url, READER)));
    const writer = await Promise.all(replicas.map((r) => discovered(r.url, WRITER)));
    assert.equal(reader[0], reader[1]);
    assert.equal(writer[0], writer[1]);
    assert.notEqual(reader[0], writer[0], "callers who list different tools see different digests");
    // Neither token may list the info tool: neither sees the whole surface.
    assert.notEqual(writer[0], whole[0]);
    // 2025-11-25: initialize carries the caller's digest too.
    assert.equal(await initialized(replicas[1].url, READER), reader[0]);
    for (const r of replicas) {
      const line = servingLine(r.stderr());
      assert.equal(line.surface, whole[0]);
      assert.deepEqual(
        new Set(Object.values(line.surfaces as Record<string, string>)),
        new Set([reader[0], writer[0]]),
      );
    }
    // The list a digest stands for: what that caller's tools/list shows.
    const listed = await modernPost(replicas[0].url, "tools/list", {}, { token: READER });
    assert.deepEqual(
      (listed.result!.tools as { name: string }[]).map((t) => t.name).sort(),
      ["get_ticket", "list_ticket"],
    );
  } finally {
    await Promise.all([...replicas, other].map((r) => r.stop()));
  }
});

Deno.test("surface digest: a wrapped tool that drifts to a stub changes the digest", async () => {
  const listing = new URL("../fixtures/scan/listing_server.ts", import.meta.url).pathname;
  const weir = await startWrapper([
    "--tool",
    "fact_of_the_day",
    "--max-staleness",
    "10m",
    "--",
    Deno.execPath(),
    "run",
    "--quiet",
    "-A",
    "--config",
    CONFIG,
    listing,
    "rug",
  ]);
  try {
    const before = await probe(weir.url, "/healthz");
    const client = await v1Http(weir.url);
    try {
      // The first call makes the server change its definition (and say so).
      await client.callTool({ name: "fact_of_the_day", arguments: { topic: "owls" } });
      const drifted = await client.callTool({ name: "fact_of_the_day", arguments: {} });
      assert.equal(drifted.isError, true);
    } finally {
      await client.close();
    }
    const after = await probe(weir.url, "/healthz");
    assert.notEqual(after, before);
    assert.equal(servingLine(weir.stderr()).surface, before);
  } finally {
    await weir.stop();
  }
});
