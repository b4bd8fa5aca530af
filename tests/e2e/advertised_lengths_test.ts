/**
 * A length the advertised schema states is the length the guard holds
 * (issue 35 item 5): JSON Schema counts `maxLength` in code points (2020-12
 * section 6.3.1), so a path parameter that takes `/` (`slashes="segments"`
 * or `"encoded"`, `maxLength` 1024 unless smaller) admits 600 characters past
 * U+FFFF (1,200 UTF-16 units); the guard counted UTF-16 units and refused
 * them as "longer than 1024 characters", a rule the schema states. And a
 * value too long for the upstream URL (a limit no schema states) is refused
 * saying which part to shorten. Through the shipped CLI, judged by Ajv
 * (JSON Schema 2020-12), against a recording upstream.
 */
import assert from "node:assert/strict";
import Ajv2020Import from "ajv/dist/2020.js";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { rpcAs } from "../support/revision_http.ts";

interface AjvLike {
  compile(schema: unknown): (data: unknown) => boolean;
}
const Ajv2020 = Ajv2020Import as unknown as new (o: Record<string, unknown>) => AjvLike;

Deno.test("a path value the schema admits by its length is not refused for its length", async () => {
  const upstream = await startRecorder();
  const file = await tempGuardfile(`wrap ward mcp t {
    base-url "${upstream.url}"
    auth none
    can get tree { path "/tree/{p}"; param "p" type="string" slashes="segments"; }
    can get flat { path "/flat/{k}"; param "k" type="string" slashes="encoded"; }
    can get one { path "/one/{id}"; param "id" type="string"; }
    can search thing { path "/s"; query "q"; }
}
`);
  const server = await serveHttp(file);
  try {
    const listed = await rpcAs<{ result: { tools: { name: string; inputSchema: unknown }[] } }>(
      server.url,
      "2025-11-25",
      "tools/list",
      {},
    );
    const schemas = new Map<string, unknown>(
      listed.result.tools.map((t: { name: string; inputSchema: unknown }) => [
        t.name,
        t.inputSchema,
      ]),
    );
    const ajv = new Ajv2020({ strict: false });
    const cases: [string, string, string, boolean][] = [
      ["get_tree", "p", "😀".repeat(600), true],
      ["get_tree", "p", `${"a".repeat(300)}/${"𝔸".repeat(300)}`, true],
      ["get_flat", "k", "😀".repeat(600), true],
      ["get_tree", "p", "a".repeat(1024), true],
      ["get_tree", "p", "a".repeat(1025), false],
      ["get_flat", "k", "😀".repeat(1025), false],
    ];
    for (const [tool, arg, value, admitted] of cases) {
      const where = `${tool} ${value.length} units, ${[...value].length} code points`;
      assert.equal(ajv.compile(schemas.get(tool))({ [arg]: value }), admitted, where);
      const before = upstream.requests.length;
      const answer = await callApi(server.url, tool, { [arg]: value });
      if (admitted) {
        assert.equal(answer.status, 200, `${where}: ${answer.text}`);
        assert.equal(upstream.requests.length, before + 1, where);
      } else {
        assert.equal(answer.status, 400, `${where}: ${answer.text}`);
        assert.match(answer.text, /too long/, where);
        assert.equal(upstream.requests.length, before, where);
      }
    }
    // Over the URL limit: the message names the part to shorten.
    for (
      const [tool, args, part] of [
        ["get_one", { id: "a".repeat(9000) }, /send a shorter path parameter value/],
        ["search_thing", { q: "a".repeat(9000) }, /send fewer or shorter query values/],
      ] as const
    ) {
      const before = upstream.requests.length;
      const answer = await callApi(server.url, tool, args);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.text, /^request_too_large: .*-byte URL, over the 8192-byte limit/);
      assert.match(answer.text, part, answer.text);
      assert.equal(upstream.requests.length, before, "nothing sent");
    }
  } finally {
    await server.stop();
    await upstream.close();
  }
});
