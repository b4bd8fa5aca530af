/**
 * `weir diff` of files that wrap an MCP server, held to what serving shows:
 * pairs of generated wrap files (NEW is OLD with one or two parts drawn
 * anew: the proxy served or withheld, an argument renamed, a length bound, a
 * restrict, a maximum, an argument hidden, a pinned argument, `confirm`) are
 * each built as `weir serve FILE` builds them (`buildWrapSurface`) against
 * one recording MCP stand-in, and generated calls go to both. When NEW
 * forwards arguments for a call that OLD does not forward for any call (the
 * request is also asked of OLD directly), diff (from the files alone, and
 * from the server's definitions) must report a widening.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import type { ToolSpec } from "../../src/mcp/types.ts";
import type { McpWrap } from "../../src/guardfile/mcp_wrap.ts";
import { buildWrapSurface } from "../../src/wrap/surface.ts";
import { describeWrap } from "../../src/wrap/describe.ts";
import { surfaceOfWrap } from "../../src/surface/wrap.ts";
import { diffSurfaces } from "../../src/diff/surface_diff.ts";
import { startMcpStandIn } from "../../src/verify/standin.ts";

const DEFINITION: ToolSpec = {
  name: "search_issues",
  description: "Search issues.",
  inputSchema: {
    type: "object",
    properties: {
      repo: { type: "string" },
      limit: { type: "integer" },
      token: { type: "string" },
      org: { type: "string" },
    },
    required: ["repo"],
  },
  annotations: { readOnlyHint: true },
};

interface Spec {
  served: boolean;
  rename: boolean;
  maxLength: number | null;
  restrict: string[] | null;
  maximum: number | null;
  hideToken: boolean;
  pin: string | null;
  confirm: boolean;
}

const FIELDS: (keyof Spec)[] = [
  "served",
  "rename",
  "maxLength",
  "restrict",
  "maximum",
  "hideToken",
  "pin",
  "confirm",
];

const spec: fc.Arbitrary<Spec> = fc.record({
  served: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)),
  rename: fc.boolean(),
  maxLength: fc.option(fc.constantFrom(6, 20), { nil: null, freq: 2 }),
  restrict: fc.option(fc.constantFrom(["acme/*"], ["acme/*", "beta/*"]), { nil: null, freq: 2 }),
  maximum: fc.option(fc.constantFrom(10, 100), { nil: null, freq: 2 }),
  hideToken: fc.boolean(),
  pin: fc.option(fc.constantFrom("org-a", "org-b"), { nil: null, freq: 2 }),
  confirm: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, fc.constant(true)),
});

function kdl(s: Spec, url: string): string {
  const lines: string[] = [];
  if (s.served && s.pin) lines.push(`pin "find" { argument "org" literal "${s.pin}"; }`);
  if (s.served && s.confirm) lines.push(`confirm "find" message="Search?"`);
  if (!s.served) lines.push(`withhold "find" { reason "Not now."; }`);
  lines.push(`wrap ward mcp gen {`, `    mcp-server http "${url}"`);
  if (s.served) {
    lines.push(`    proxy "find" {`, `        upstream "search_issues"`);
    const props = [
      s.rename ? ` upstream="repo"` : "",
      s.maxLength === null ? "" : ` max-length=${s.maxLength}`,
    ].join("");
    const block = s.restrict ? ` { restrict ${s.restrict.map((g) => `"${g}"`).join(" ")}; }` : "";
    if (props || block) {
      lines.push(`        argument "${s.rename ? "repository" : "repo"}"${props}${block}`);
    }
    if (s.maximum !== null) lines.push(`        argument "limit" maximum=${s.maximum}`);
    if (s.hideToken) lines.push(`        argument "token" hide=#true`);
    lines.push(`    }`);
  } else {
    lines.push(`    proxy "other" { upstream "search_issues"; }`);
  }
  lines.push(`}`);
  return lines.join("\n") + "\n";
}

const call = fc.record({
  key: fc.constantFrom("repo", "repository"),
  repo: fc.constantFrom("acme/x", "beta/y", "zeta/z", "acme/a-long-name"),
  limit: fc.option(fc.constantFrom(5, 50, 500), { nil: undefined }),
  token: fc.option(fc.constant("t"), { nil: undefined }),
});

/**
 * The call that would make a file forward `sent` (the server's argument
 * names): each argument under its served name, the file's pins left out
 * (weir adds them).
 */
function callFor(wrap: McpWrap, sent: Record<string, unknown>): Record<string, unknown> {
  const proxy = wrap.proxies.find((p) => p.name === "find");
  const pinned = new Set((wrap.controls.pins.find ?? []).map((p) => p.name));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(sent)) {
    if (pinned.has(key)) continue;
    out[proxy?.arguments.find((a) => a.upstream === key)?.name ?? key] = value;
  }
  return out;
}

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

Deno.test("diff of wrap files says widen whenever NEW forwards what OLD did not, on generated pairs", async () => {
  const standIn = startMcpStandIn([DEFINITION]);
  let witnessed = 0;
  let id = 0;
  try {
    await fc.assert(
      fc.asyncProperty(
        spec,
        spec,
        fc.subarray(FIELDS, { minLength: 1, maxLength: 2 }),
        fc.array(call, { minLength: 3, maxLength: 6 }),
        async (a, other, fields, calls) => {
          const b: Spec = { ...a };
          for (const f of fields) (b as unknown as Record<string, unknown>)[f] = other[f];
          const texts = [kdl(a, standIn.url), kdl(b, standIn.url)];
          const built = [];
          for (const text of texts) {
            const loaded = loadGuardfileText(text, "gen.mcp.kdl");
            assert.ok(loaded.mcpWrap, `${loaded.diagnostics.map((d) => d.message)}\n${text}`);
            built.push({
              wrap: loaded.mcpWrap,
              surface: await buildWrapSurface(loaded.mcpWrap, { log: () => {} }),
            });
          }
          try {
            const [old, next] = built;
            const held = diffSurfaces(surfaceOfWrap(old.wrap), surfaceOfWrap(next.wrap));
            const served = diffSurfaces(
              describeWrap(old.wrap, old.surface.host),
              describeWrap(next.wrap, next.surface.host),
            );
            for (const c of calls) {
              const args: Record<string, unknown> = { [c.key]: c.repo };
              if (c.limit !== undefined) args.limit = c.limit;
              if (c.token !== undefined) args.token = c.token;
              const forwarded: string[][] = [];
              for (const side of built) {
                const before = standIn.received.length;
                await side.surface.server.handle({
                  jsonrpc: "2.0",
                  id: ++id,
                  method: "tools/call",
                  params: { name: "find", arguments: args, _meta: META },
                });
                forwarded.push(
                  standIn.received.slice(before).map((r) => JSON.stringify(r.arguments)),
                );
              }
              // A request OLD forwards for another call is one OLD admits: ask OLD for it.
              const fresh = [];
              for (const r of forwarded[1].filter((r) => !forwarded[0].includes(r))) {
                const asked = callFor(old.wrap, JSON.parse(r));
                const before = standIn.received.length;
                await old.surface.server.handle({
                  jsonrpc: "2.0",
                  id: ++id,
                  method: "tools/call",
                  params: { name: "find", arguments: asked, _meta: META },
                });
                const got = standIn.received.slice(before).map((x) => JSON.stringify(x.arguments));
                if (!got.includes(r)) fresh.push(r);
              }
              if (fresh.length === 0) continue;
              witnessed++;
              for (const [basis, changes] of [["the files", held], ["the definitions", served]]) {
                assert.ok(
                  (changes as { effect: string }[]).some((x) => x.effect === "widen"),
                  `NEW forwarded ${fresh} for ${JSON.stringify(args)}, OLD ${
                    forwarded[0].join(" | ") || "nothing"
                  }; diff from ${basis} reports no widening:\n${
                    JSON.stringify(changes, null, 1)
                  }\n--- OLD\n${texts[0]}--- NEW\n${texts[1]}`,
                );
              }
            }
          } finally {
            for (const side of built) await side.surface.connection.close();
          }
        },
      ),
      { numRuns: 200 },
    );
  } finally {
    await standIn.stop();
  }
  assert.ok(witnessed > 5, `only ${witnessed} calls showed a widening: the generator is too tame`);
});
