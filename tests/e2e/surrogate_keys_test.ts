/**
 * An argument name holding a lone UTF-16 surrogate (`"\ud800"` is valid JSON
 * text) is refused as bad arguments, naming the problem, through the real
 * CLI over the tool API and MCP: the JSON Schema validator builds a pointer
 * with `encodeURI`, which throws on it, and that had made an "Internal error".
 */
import assert from "node:assert/strict";
import { serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { postMcp } from "../support/raw_upstream.ts";

Deno.test("a lone surrogate in an argument name is a named refusal, not an internal error", async () => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const file = await tempGuardfile(`wrap ward mcp keys {
    base-url "${upstream.url}"
    auth none
    can create thing {
        path "/things"
        body {
            field "title" type="string"
            object "meta" { field "s" type="string"; }
        }
    }
}
`);
  const server = await serveHttp(file);
  try {
    for (const args of ['{"zz\\ud800":"x"}', '{"title":"t","meta":{"s\\udc00x":"y"}}']) {
      const api = await fetch(`${server.url}/api/create_thing`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: args,
      });
      const text = await api.text();
      assert.equal(api.status, 400, `${args}: ${text}`);
      assert.match(text, /Invalid arguments for tool \\"create_thing\\": an argument name is not/);
      const answer = JSON.parse(
        await postMcp(
          server.url,
          `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"create_thing","arguments":${args}}}`,
        ),
      );
      assert.equal(answer.result?.isError, true, JSON.stringify(answer));
      assert.match(answer.result.content[0].text, /an argument name is not well-formed Unicode/);
    }
    assert.equal(upstream.requests.length, 0, "nothing was sent");
    assert.ok(!server.stderr().includes("internal_error"), server.stderr());
    // Well-formed names still reach the validator's usual words.
    const other = await fetch(`${server.url}/api/create_thing`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"zz\\ud83d\\udc1f":"x"}',
    });
    assert.match(await other.text(), /unexpected argument/);
  } finally {
    await server.stop();
    await upstream.close();
    await Deno.remove(file);
  }
});
