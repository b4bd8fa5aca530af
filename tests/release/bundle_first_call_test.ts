/**
 * The first tools/call of a spec-mode `serve` loads weir's HTTP/1.1 client
 * (src/outbound/http1_client.ts, a lazy module): from either bundle (the
 * binary's and the image's, npm packages inside; the JSR package's, npm
 * packages outside: scripts/bundle.ts `writeBundle`) that load must bring only
 * the client's own code, never the MCP SDKs or the wrap mode's modules (merged
 * into the client's chunk by scripts/bundle_merge.ts, they made the first call
 * take 190-360 ms, and 128 calls sent at start all time out at 1.5 s). Then the
 * bundle serves such a call, as the binary runs it (scripts/build.ts `bundleRunArgs`).
 */
import assert from "node:assert/strict";
import { writeBundle } from "../../scripts/bundle.ts";
import { bundleRunArgs } from "../../scripts/build.ts";
import { ROOT } from "../support/cli.ts";
import { initializeRequest } from "../support/mcp.ts";

/** The files a module's static imports load, itself included, from the bundle's root. */
async function staticGraph(dir: string, file: string, found = new Set<string>()) {
  if (found.has(file)) return found;
  found.add(file);
  const body = await Deno.readTextFile(`${dir}/${file}`);
  for (const m of body.matchAll(/(?:from|import)\s*"(\.\.?\/[^"]+)"/g)) {
    await staticGraph(dir, new URL(m[1], `file:///${file}`).pathname.slice(1), found);
  }
  return found;
}

/** Text only the MCP SDKs' clients or weir's wrap mode hold. */
const NOT_FOR_A_SPEC_CALL = [
  "Error POSTing to endpoint", // both SDKs' Streamable HTTP client transports
  "upstream_definition_scan", // src/wrap (the definition scan's log event)
  "@modelcontextprotocol/", // an import of an SDK (the JSR package's bundle)
];

for (const npm of ["inside", "outside"] as const) {
  Deno.test(`the first spec-mode call loads no MCP SDK or wrap code (npm ${npm} the bundle)`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "weir-first-call-" });
    try {
      assert.equal(await writeBundle(new URL(`file://${ROOT}`), `${dir}/b`, { npm }), undefined);
      const bundle = `${dir}/b`;
      const started = new Set([
        ...await staticGraph(bundle, "cli.js"),
        ...await staticGraph(bundle, "src/cli/serve.js"),
      ]);
      const client = await staticGraph(bundle, "src/outbound/http1_client.js");
      const added = [...client].filter((file) => !started.has(file));
      assert.ok(added.includes("src/outbound/http1_client.js"));
      let bytes = 0;
      for (const file of added) {
        const body = await Deno.readTextFile(`${bundle}/${file}`);
        bytes += body.length;
        for (const text of NOT_FOR_A_SPEC_CALL) {
          assert.ok(!body.includes(text), `${file}, loaded at the first call, holds "${text}"`);
        }
      }
      // The client's own modules (about 11 KB minified), not the 775 KB the merge once added.
      assert.ok(bytes < 64_000, `the first call loads ${bytes} bytes in ${added.length} files`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("from the bundle, spec-mode serve answers its first tools/call through an upstream", async () => {
  const dir = await Deno.makeTempDir({ prefix: "weir-first-call-" });
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => Response.json({ path: new URL(request.url).pathname }),
  );
  try {
    assert.equal(await writeBundle(new URL(`file://${ROOT}`), `${dir}/b`), undefined);
    const file = `${dir}/g.mcp.kdl`;
    await Deno.writeTextFile(
      file,
      `wrap up mcp items {\n  base-url "http://127.0.0.1:${upstream.addr.port}"\n  auth none\n` +
        `  can get item {\n    path "/items/{id}"\n  }\n}\n`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...bundleRunArgs(`${dir}/b`, ["--allow-net", "--allow-env", "--allow-read"]),
        "serve",
        file,
        "--stdio",
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const lines = [
      initializeRequest(),
      { method: "notifications/initialized" },
      ...Array.from({ length: 8 }, (_, i) => ({
        id: 10 + i,
        method: "tools/call",
        params: { name: "get_item", arguments: { id: String(i) } },
      })),
    ];
    const writer = child.stdin.getWriter();
    await writer.write(
      new TextEncoder().encode(
        lines.map((l) => JSON.stringify({ jsonrpc: "2.0", ...l })).join("\n") + "\n",
      ),
    );
    await writer.close();
    const out = new TextDecoder().decode((await child.output()).stdout);
    const answers = out.trim().split("\n").map((l) => JSON.parse(l));
    for (let i = 0; i < 8; i++) {
      const answer = answers.find((a) => a.id === 10 + i);
      assert.equal(answer?.result?.isError, undefined, JSON.stringify(answer));
      assert.equal(answer.result.structuredContent.result.path, `/items/${i}`);
    }
  } finally {
    await upstream.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
