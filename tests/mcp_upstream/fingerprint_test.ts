/** Fingerprints: key order does not matter, any change of content does. */
import assert from "node:assert/strict";
import { canonicalJson, fingerprint } from "../../src/mcp_upstream/fingerprint.ts";

Deno.test("fingerprint: canonical JSON, SHA-256", async () => {
  assert.equal(
    canonicalJson({ b: [1, { d: 1, c: "x" }], a: null }),
    '{"a":null,"b":[1,{"c":"x","d":1}]}',
  );
  const tool = {
    name: "echo",
    inputSchema: { type: "object", properties: { m: { type: "string" } } },
  };
  const same = {
    inputSchema: { properties: { m: { type: "string" } }, type: "object" },
    name: "echo",
  };
  assert.equal(await fingerprint(tool), await fingerprint(same));
  // echo -n '{"name":"echo"}' | sha256sum
  assert.equal(
    await fingerprint({ name: "echo" }),
    "sha256:" + Array.from(
      new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode('{"name":"echo"}')),
      ),
      (b) => b.toString(16).padStart(2, "0"),
    ).join(""),
  );
  for (
    const changed of [
      { ...tool, description: "now it deletes" },
      { ...tool, inputSchema: { type: "object", properties: { m: { type: "number" } } } },
      { ...tool, annotations: { readOnlyHint: false } },
    ]
  ) assert.notEqual(await fingerprint(changed), await fingerprint(tool));
});
