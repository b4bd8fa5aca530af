/**
 * An upstream MCP server that asks weir something during a call (a
 * server-to-client request) gets its answer at once, in every form weir
 * wraps a server (serve-upstream, the guardfile's `mcp-server`), on every
 * framing (the call's event stream, the standalone GET stream with JSON
 * answers, stdio), on both of weir's paths to an HTTP upstream (its own
 * HTTP/1.1 client, the official client) and both revisions; no call waits
 * for the request timeout:
 *
 * - 2025-11-25: `ping` is answered `{}` (the spec's MUST), every other
 *   method -32601 (weir declares no client capability), and the call goes on;
 * - 2026-07-28, which forbids these requests: on a call's event stream the
 *   call fails at once, naming the method, and weir closes the stream (the
 *   revision's cancellation); over stdio (one stream, no call to fail) the
 *   request is answered -32601.
 *
 * Driven through the shipped CLI: `/api/ask` for every method, and one call
 * per form through the official client of each revision.
 */
import assert from "node:assert/strict";
import { callApi, type Served, tempGuardfile } from "../support/cli.ts";
import {
  ASK_WAIT_MS,
  type AskingHttpUpstream,
  askingStdioCommand,
  SERVER_REQUESTS,
  startAskingHttpUpstream,
} from "../support/asking_upstream.ts";
import {
  serveAll,
  startWrapper,
  textOf,
  v1Http,
  v2Http,
  type Wrapper,
} from "../support/upstream_cli.ts";
import { until } from "../support/wait.ts";

type Revision = "2025-11-25" | "2026-07-28";

interface Form {
  /** What the case is called. */
  name: string;
  revision: Revision;
  framing: "sse" | "json" | "stdio";
  /** weir's official client instead of its own HTTP/1.1 client (`WEIR_UPSTREAM_CLIENT=fetch`). */
  official?: boolean;
  /** Served from a guardfile (`wrap ... { mcp-server ...; proxy ask }`) instead of serve-upstream. */
  guardfile?: boolean;
}

const FORMS: Form[] = [];
for (const revision of ["2025-11-25", "2026-07-28"] as const) {
  for (const framing of ["sse", "json", "stdio"] as const) {
    // 2026-07-28 has no standalone stream: with JSON answers there is nowhere to ask.
    if (framing === "json" && revision === "2026-07-28") continue;
    if (framing === "stdio") {
      FORMS.push({ name: `${revision} stdio`, revision, framing });
      continue;
    }
    for (const official of [false, true]) {
      FORMS.push({
        name: `${revision} HTTP ${framing}${official ? " (official client)" : ""}`,
        revision,
        framing,
        official,
      });
    }
  }
  FORMS.push({
    name: `${revision} HTTP sse, guardfile`,
    revision,
    framing: "sse",
    guardfile: true,
  });
  FORMS.push({ name: `${revision} stdio, guardfile`, revision, framing: "stdio", guardfile: true });
}

/** What weir must do with a request of `method` in `form` (see the module doc). */
function expected(form: Form, method: string): "empty" | "not found" | "call refused" {
  if (form.revision === "2026-07-28") {
    return form.framing === "stdio" ? "not found" : "call refused";
  }
  return method === "ping" ? "empty" : "not found";
}

async function serve(
  form: Form,
  upstream: AskingHttpUpstream | undefined,
): Promise<Served | Wrapper> {
  const env = form.official ? { WEIR_UPSTREAM_CLIENT: "fetch" } : undefined;
  const command = form.framing === "stdio" ? askingStdioCommand(form.revision) : undefined;
  if (form.guardfile) {
    const server = command
      ? `mcp-server stdio ${command.map((a) => JSON.stringify(a)).join(" ")}`
      : `mcp-server http "${upstream!.url}"`;
    const file = await tempGuardfile(`wrap ward mcp asking {\n    ${server}\n    proxy ask\n}\n`);
    // Every permission, as docs/wrapping-mcp-servers.md says to run a stdio server (--allow-run).
    return await serveAll(file, env);
  }
  const target = command ? ["--", ...command] : ["--upstream", upstream!.url];
  return await startWrapper(["--tool", "ask", ...target], { env });
}

for (const form of FORMS) {
  Deno.test(`an upstream's request during a call is answered at once: ${form.name}`, async () => {
    const upstream = form.framing === "stdio"
      ? undefined
      : startAskingHttpUpstream(form.revision, form.framing);
    const weir = await serve(form, upstream);
    try {
      for (const method of SERVER_REQUESTS) {
        const answer = await callApi(weir.url, "ask", { method }, { timeoutMs: ASK_WAIT_MS * 3 });
        const said = `${method}: ${answer.status} ${answer.text}`;
        assert.doesNotMatch(answer.text, /no answer within/, said);
        switch (expected(form, method)) {
          case "empty":
            assert.equal(answer.status, 200, said);
            assert.equal(answer.text, 'answered {"result":{}}', said);
            break;
          case "not found":
            assert.equal(answer.status, 200, said);
            // weir's own answer (server_requests.ts) on every path, not the SDK client's.
            assert.ok(
              answer.text.startsWith(
                `answered {"error":{"code":-32601,"message":"Method not found: weir relays no ${
                  JSON.stringify(JSON.stringify(method)).slice(1, -1)
                } request`,
              ),
              said,
            );
            break;
          case "call refused":
            assert.notEqual(answer.status, 200, said);
            assert.ok(answer.text.includes(method), said);
            assert.match(answer.text, /2026-07-28/, said);
            break;
        }
      }
      if (upstream) {
        const asked = SERVER_REQUESTS.length;
        if (form.revision === "2026-07-28") {
          // No answer was written; each call's stream was closed (the revision's cancellation).
          assert.deepEqual(upstream.peer.answers, []);
          assert.ok(
            await until(() => upstream.closedEarly() === asked),
            "every call's stream closed",
          );
        } else {
          // Exactly one answer per request.
          assert.deepEqual(
            upstream.peer.answers.map((a) => a.id).sort(),
            Array.from({ length: asked }, (_, i) => `ask-${i + 1}`).sort(),
          );
        }
      }
      // One call through the official client of the revision (the MCP route, not /api).
      const client = form.revision === "2025-11-25"
        ? await v1Http(weir.url)
        : await v2Http(weir.url);
      try {
        const method = "roots/list";
        if (expected(form, method) === "call refused") {
          const result = await client.callTool({ name: "ask", arguments: { method } });
          assert.equal(result.isError, true);
          assert.ok(textOf(result).includes(method), textOf(result));
        } else {
          const result = await client.callTool({ name: "ask", arguments: { method } });
          assert.match(textOf(result), /^answered \{"error":\{"code":-32601,/);
        }
      } finally {
        await client.close();
      }
    } finally {
      await weir.stop();
      await upstream?.stop();
    }
  });
}
