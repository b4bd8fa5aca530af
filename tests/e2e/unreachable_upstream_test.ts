/**
 * When a spec-mode call cannot be sent, the caller is told why in fixed words
 * and what to fix: a base-url host that does not resolve points at base-url,
 * a port where nothing listens at the upstream. Both upstream clients (weir's
 * HTTP/1.1 client and `fetch`), both revisions over MCP and the tool API say
 * the same, and no message names the host or port.
 */
import assert from "node:assert/strict";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { freePort } from "../support/port.ts";
import { textOf, v1Http, v2Http } from "../support/upstream_cli.ts";

/** A host name under .invalid, which RFC 6761 reserves never to resolve. */
const NOWHERE = "weir-test-no-such-host.invalid";

function guardfile(baseUrl: string): Promise<string> {
  return tempGuardfile(
    `wrap ward mcp nowhere {\n  base-url "${baseUrl}"\n  auth none\n` +
      `  can get thing { path "/things/{id}" }\n}\n`,
  );
}

async function saidBy(file: string): Promise<string[]> {
  const servers = [
    await serveHttp(file),
    await serveHttp(file, { env: { WEIR_UPSTREAM_CLIENT: "fetch" } }),
  ];
  const said: string[] = [];
  try {
    for (const server of servers) {
      const api = await callApi(server.url, "get_thing", { id: "t-1" });
      assert.equal(api.status, 502, api.text);
      said.push(api.text);
      for (const open of [v1Http, v2Http]) {
        const client = await open(server.url);
        try {
          const result = await client.callTool({ name: "get_thing", arguments: { id: "t-1" } });
          assert.equal(result.isError, true);
          said.push(textOf(result));
        } finally {
          await client.close();
        }
      }
    }
  } finally {
    for (const s of servers) await s.stop();
  }
  return said;
}

Deno.test("a base-url host that does not resolve is named as a DNS failure, with base-url as the fix", async () => {
  const said = await saidBy(await guardfile(`https://${NOWHERE}:8443/v1`));
  assert.equal(said.length, 6);
  for (const text of said) {
    assert.match(text, /upstream_unreachable: GET \/things\/\{id\} could not be sent/);
    assert.match(text, /the host name does not resolve \(DNS\)/, text);
    assert.match(text, /check the host name of the guardfile's base-url/, text);
    assert.doesNotMatch(text, /weir-test-no-such-host|8443|lookup address/, text);
  }
});

Deno.test("a base-url port where nothing listens is named as refused, with the upstream as the fix", async () => {
  const said = await saidBy(await guardfile(`http://127.0.0.1:${freePort()}`));
  assert.equal(said.length, 6);
  for (const text of said) {
    assert.match(text, /connection refused: nothing is listening there/, text);
    assert.match(text, /check that the upstream is up/, text);
    assert.doesNotMatch(text, /base-url|127\.0\.0\.1/, text);
  }
});
