/**
 * docs/operating.md "Audit lines" against what `weir serve` writes: each
 * inbound and protocol refusal (405, 415, 406, 404, 400 bad Host, parse
 * errors over HTTP and stdio, -32600, -32602, -32601, malformed `/api`
 * bodies) is sent to the shipped CLI, and the one `refused` line it writes
 * must carry the rule and status the table lists for it, and never the value
 * sent.
 */
import assert from "node:assert/strict";
import { ROOT, serveHttp, spawnServeStdio } from "../support/cli.ts";
import { until } from "../support/wait.ts";

const FIXTURE = "tests/fixtures/conformance.mcp.kdl";

/** rule -> the statuses the table lists for it, read from the page. */
function table(): Map<string, Set<number>> {
  const page = Deno.readTextFileSync(`${ROOT}docs/operating.md`);
  const section = page.split(/^### Audit lines$/m)[1].split(/^## /m)[0];
  const rows = new Map<string, Set<number>>();
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells[1] !== "`refused`") continue;
    const statuses = [...cells[4].matchAll(/\d{3}/g)].map((m) => Number(m[0]));
    for (const m of cells[3].matchAll(/`([a-z_]+)`/g)) {
      rows.set(m[1], new Set([...(rows.get(m[1]) ?? []), ...statuses]));
    }
  }
  return rows;
}

const TABLE = table();
const SECRET = "do-not-log-7f3a";

type Line = { event?: string; rule?: string; status?: number };

function refusedLines(stderr: string): Line[] {
  return stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((l: Line) => l.event === "refused");
}

function holds(line: Line | undefined, rule: string, status: number, what: string): void {
  assert.ok(line, `${what}: no refused line`);
  assert.equal(line.rule, rule, `${what}: ${JSON.stringify(line)}`);
  assert.equal(line.status, status, `${what}: ${JSON.stringify(line)}`);
  const listed = TABLE.get(rule);
  assert.ok(listed, `${what}: rule ${rule} is not in docs/operating.md "Audit lines"`);
  assert.ok(
    listed.has(status),
    `${what}: the table lists ${rule} with ${[...listed]}, not ${status}`,
  );
}

const JSON_HEADERS = {
  "content-type": "application/json",
  "accept": "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};

Deno.test("weir serve --http: every inbound and protocol refusal writes the line the audit table lists", async () => {
  const server = await serveHttp(FIXTURE);
  const cases: [string, string, number, () => Promise<Response>][] = [
    ["GET /mcp", "method", 405, () => fetch(`${server.url}/mcp`)],
    ["PUT /api/get_ticket", "method", 405, () =>
      fetch(`${server.url}/api/get_ticket`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: "{}",
      })],
    ["text/plain body", "media_type", 415, () =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { ...JSON_HEADERS, "content-type": "text/plain" },
        body: "{}",
      })],
    ["Accept q=0", "not_acceptable", 406, () =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { ...JSON_HEADERS, "accept": "application/json;q=0, text/event-stream;q=0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      })],
    ["/api/ naming no tool", "not_found", 404, () =>
      fetch(`${server.url}/api/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      })],
    [
      "not JSON",
      "parse_error",
      400,
      () =>
        fetch(`${server.url}/mcp`, { method: "POST", headers: JSON_HEADERS, body: `{${SECRET}` }),
    ],
    ["a batch", "invalid_request", 400, () =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: JSON_HEADERS,
        body: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]),
      })],
    ["a cursor that is a number", "invalid_params", 400, () =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: JSON_HEADERS,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: { cursor: 5 },
        }),
      })],
    ["an unknown method", "unknown_method", 200, () =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: JSON_HEADERS,
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: `x/${SECRET}` }),
      })],
    [
      "an /api body that is an array",
      "invalid_body",
      400,
      () =>
        fetch(`${server.url}/api/get_ticket`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify([SECRET]),
        }),
    ],
    [
      "an /api body that is not JSON",
      "invalid_body",
      400,
      () =>
        fetch(`${server.url}/api/get_ticket`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: `{${SECRET}`,
        }),
    ],
  ];
  try {
    for (const [what, rule, status, send] of cases) {
      const before = refusedLines(server.stderr()).length;
      const response = await send();
      await response.body?.cancel();
      assert.equal(response.status, status, what);
      // The line is written before the answer is sent; stderr is read in the background.
      let lines = refusedLines(server.stderr());
      await until(() => (lines = refusedLines(server.stderr())).length !== before);
      assert.equal(lines.length, before + 1, `${what}: one line per refusal`);
      holds(lines.at(-1), rule, status, what);
    }
    assert.doesNotMatch(server.stderr(), new RegExp(SECRET), "a refused value was logged");
  } finally {
    await server.stop();
  }
});

Deno.test("weir serve --stdio: a parse error, an invalid request and invalid params write their lines", async () => {
  const child = spawnServeStdio(FIXTURE);
  const w = child.stdin.getWriter();
  const lines = [
    `{${SECRET}`,
    JSON.stringify({ jsonrpc: "2.0", id: 1 }),
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { cursor: 5 } }),
  ];
  await w.write(new TextEncoder().encode(lines.join("\n") + "\n"));
  await w.close();
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  const refused = refusedLines(stderr);
  holds(refused.find((l) => l.rule === "parse_error"), "parse_error", 400, "stdio parse error");
  holds(refused.find((l) => l.rule === "invalid_request"), "invalid_request", 400, "stdio -32600");
  holds(refused.find((l) => l.rule === "invalid_params"), "invalid_params", 400, "stdio -32602");
  assert.equal(refused.length, 3, stderr);
  assert.doesNotMatch(stderr, new RegExp(SECRET));
});
