/**
 * `weir diff` held to what serving shows: pairs of small guardfiles are
 * generated from a grammar of grants and controls (NEW is OLD with one or two
 * parts drawn anew: a grant or a withhold,
 * its path, how a path value's `/` is placed, `restrict`, a query input's
 * rules and metacharacter gate, a pin, `confirm`), both are served (the
 * guarded server `weir serve` builds, in process) against one recording
 * upstream, and generated calls go to both. When NEW sends an upstream
 * request for a call that OLD did not send (OLD refused the call, or sent
 * another request), diff must report a widening, and `--fail-on widen`
 * would exit 1. The reverse is allowed: diff may call a change a widening
 * that these calls do not show.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import { guardedServer } from "../../src/modes/serve.ts";
import type { McpServer } from "../../src/mcp/server.ts";
import { surfaceOfGuardfile } from "../../src/surface/spec.ts";
import { diffSurfaces } from "../../src/diff/surface_diff.ts";

/** One generated guardfile. */
interface Spec {
  granted: boolean;
  path: "/items/{id}" | "/things/{id}";
  slashes: "refuse" | "encoded" | "segments";
  restrict: string[] | null;
  idType: "string" | "integer";
  maximum: number | null;
  q: {
    maxLength: number | null;
    pattern: string | null;
    enumValues: string[] | null;
    metacharacters: boolean;
  } | null;
  pin: string | null;
  confirm: boolean;
}

const spec: fc.Arbitrary<Spec> = fc.record({
  granted: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)),
  path: fc.constantFrom("/items/{id}" as const, "/things/{id}" as const),
  slashes: fc.constantFrom("refuse" as const, "encoded" as const, "segments" as const),
  restrict: fc.option(fc.constantFrom(["acme-*"], ["acme-*", "beta-*"], ["acme-1"], ["*"]), {
    nil: null,
    freq: 2,
  }),
  idType: fc.constantFrom("string" as const, "integer" as const),
  maximum: fc.option(fc.constantFrom(10, 1000), { nil: null, freq: 2 }),
  q: fc.option(
    fc.record({
      maxLength: fc.option(fc.constantFrom(3, 10), { nil: null }),
      pattern: fc.option(fc.constantFrom("^[a-z]+$", "^[a-z;]+$"), { nil: null }),
      enumValues: fc.option(fc.constantFrom(["abc", "xyz"], ["abc"]), { nil: null }),
      metacharacters: fc.boolean(),
    }),
    { nil: null, freq: 2 },
  ),
  pin: fc.option(fc.constantFrom("site-one", "site-two"), { nil: null, freq: 2 }),
  confirm: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, fc.constant(true)),
});

/** The guardfile text of a spec, its upstream at `base`. */
function kdl(s: Spec, base: string): string {
  const lines: string[] = [];
  if (s.granted && s.pin) lines.push(`pin "get_item" { query "site" literal "${s.pin}"; }`);
  if (s.granted && s.confirm) lines.push(`confirm "get_item" message="Get it?"`);
  if (!s.granted) lines.push(`withhold "get_item" { reason "Not now."; }`);
  lines.push(`wrap ward mcp gen {`, `    base-url "${base}"`, `    auth none`);
  if (s.granted && s.restrict && s.idType === "string") {
    lines.push(`    restrict id matches ${s.restrict.map((g) => JSON.stringify(g)).join(" ")}`);
  }
  if (s.granted) {
    lines.push(`    can get item {`, `        path "${s.path}"`);
    if (s.idType === "integer") {
      lines.push(
        `        param "id" type="integer"${s.maximum === null ? "" : ` maximum=${s.maximum}`}`,
      );
    } else if (s.slashes !== "refuse") {
      lines.push(`        param "id" slashes="${s.slashes}"`);
    }
    if (s.q) {
      const q = s.q;
      const props = [
        q.maxLength === null ? "" : ` max-length=${q.maxLength}`,
        q.pattern === null ? "" : ` pattern="${q.pattern}"`,
        q.metacharacters ? ` metacharacters="allow"` : "",
      ].join("");
      const block = q.enumValues ? ` { enum ${q.enumValues.map((v) => `"${v}"`).join(" ")}; }` : "";
      lines.push(
        `        query {`,
        `            field "q" type="string"${props}${block}`,
        `        }`,
      );
    }
    lines.push(`    }`);
  } else {
    // A withheld tool needs some grant beside it to be a guardfile.
    lines.push(`    can get other { path "/other"; }`);
  }
  lines.push(`}`);
  return lines.join("\n") + "\n";
}

const FIELDS: (keyof Spec)[] = [
  "granted",
  "path",
  "slashes",
  "restrict",
  "idType",
  "maximum",
  "q",
  "pin",
  "confirm",
];

const ID_VALUES: unknown[] = ["1", "acme-1", "beta-2", "a/b", "acme-x/y", 5, 5000, "x;y", ".."];
const Q_VALUES: unknown[] = ["abc", "xyz", "abcdefgh", "a;b", "ABC"];

const call = fc.record({
  id: fc.constantFrom(...ID_VALUES),
  // Often none: a query argument a grant does not declare refuses the whole call.
  q: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom(...Q_VALUES) },
  ),
});

/** A recording upstream: every request it receives, as one line. */
function recordingUpstream() {
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    seen.push(`${req.method} ${url.pathname}${url.search} ${await req.text()}`);
    return Response.json({ ok: true });
  });
  return { seen, server, base: `http://127.0.0.1:${server.addr.port}` };
}

let nextId = 0;
async function callTool(server: McpServer, args: Record<string, unknown>): Promise<void> {
  await server.handle({
    jsonrpc: "2.0",
    id: ++nextId,
    method: "tools/call",
    params: {
      name: "get_item",
      arguments: args,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });
}

function serverOf(
  text: string,
): { server: McpServer; surface: ReturnType<typeof surfaceOfGuardfile> } {
  const loaded = loadGuardfileText(text, "gen.mcp.kdl");
  assert.ok(loaded.guardfile, `${loaded.diagnostics.map((d) => d.message).join("\n")}\n${text}`);
  return {
    server: guardedServer(loaded.guardfile, { log: () => {} }),
    surface: surfaceOfGuardfile(loaded.guardfile),
  };
}

Deno.test("diff says widen whenever NEW sends a request OLD did not, on generated guardfile pairs", async () => {
  const up = recordingUpstream();
  let witnessed = 0;
  try {
    await fc.assert(
      fc.asyncProperty(
        spec,
        spec,
        fc.subarray(FIELDS, { minLength: 1, maxLength: 2 }),
        fc.array(call, { minLength: 4, maxLength: 10 }),
        async (a, other, fields, calls) => {
          // NEW is OLD with one or two fields drawn anew, so no other widening hides a miss.
          const b: Spec = { ...a };
          for (const f of fields) (b as unknown as Record<string, unknown>)[f] = other[f];
          const oldText = kdl(a, up.base);
          const newText = kdl(b, up.base);
          const old = serverOf(oldText);
          const next = serverOf(newText);
          const changes = diffSurfaces(old.surface, next.surface);
          const widened = changes.some((c) => c.effect === "widen");
          for (const c of calls) {
            const args: Record<string, unknown> = { id: c.id };
            if (c.q !== undefined) args.q = c.q;
            up.seen.length = 0;
            await callTool(old.server, args);
            const sentOld = new Set(up.seen);
            up.seen.length = 0;
            await callTool(next.server, args);
            const fresh = up.seen.filter((r) => !sentOld.has(r));
            if (fresh.length === 0) continue;
            witnessed++;
            assert.ok(
              widened,
              `NEW sent ${fresh.join(" | ")} for ${JSON.stringify(args)}, which OLD did not ` +
                `(OLD sent ${[...sentOld].join(" | ") || "nothing"}), yet diff reports no ` +
                `widening:\n${changes.map((x) => `${x.effect} ${x.tool}: ${x.what}`).join("\n")}` +
                `\n--- OLD\n${oldText}--- NEW\n${newText}`,
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  } finally {
    await up.server.shutdown();
  }
  assert.ok(
    witnessed > 30,
    `only ${witnessed} calls showed a widening: the generator is too tame`,
  );
});
