/**
 * What `weir lint` accepts, `weir serve` can build: a guardfile's text is
 * loaded with the one loader (src/guardfile/load.ts) and, when the loader
 * reports no error, the very server `serve` runs is built from the model
 * through the module API `serve` uses — `guardedServer` for a spec-mode
 * file, `awsServer` for an AWS policy, `buildWrapSurface` (against a local
 * MCP stand-in that lists every tool the file proxies) for a file that wraps
 * an MCP server — and its tools are listed once.
 *
 * {@link buildOutcome} says which happened: the loader refused the file
 * (`diagnosed`), the server was built (`built`), or building threw
 * (`crash`: a rule the core or the guard checks at start that the loader
 * does not). Used by tests/guardfile/build_fuzz_test.ts (bounded) and
 * scripts/fuzz_guardfiles.ts (a long campaign).
 */
import { loadGuardfileText } from "../../src/guardfile/load.ts";
import type { McpWrap } from "../../src/guardfile/mcp_wrap.ts";
import { McpServer } from "../../src/mcp/server.ts";
import type { JsonObject } from "../../src/mcp/jsonrpc.ts";
import type { ToolSpec } from "../../src/mcp/types.ts";
import { createHttpHandler } from "../../src/transport/http.ts";
import { guardedServer } from "../../src/modes/serve.ts";
import { buildRefusal } from "../../src/modes/lint_build.ts";
import { awsServer } from "../../src/modes/serve_aws.ts";
import { listedSurface } from "../../src/surface/size.ts";
import { prepareBacktracking } from "../../src/mcp/backtracking.ts";
import { loadAnalysis } from "../../src/ops/pattern_check.ts";

// Serve loads the backtracking analysis before it builds a file whose pattern has a quantified
// group (src/ops/pattern_check.ts); these builds skip that loader step, so load it once here.
await prepareBacktracking([], loadAnalysis, true);
import { buildWrapSurface } from "../../src/wrap/surface.ts";
import { StartupError } from "../../src/wrap/open.ts";

/**
 * What became of one guardfile: the loader refused it (`diagnosed`); the
 * core refused the server built from it and lint's build check placed the
 * refusal at its node (`placed`: a `schema-profile` that cannot list a
 * grant, src/modes/lint_build.ts); the stand-in refused the connection
 * (`unreachable`: a limit of the wrapped server's, such as a header section
 * over Deno.serve's 64 KiB, not a value weir checks); it was built and
 * listed (`built`); or
 * building threw, or a refusal could not be placed (`crash`).
 */
export type BuildOutcome =
  | { kind: "diagnosed" }
  | { kind: "unreachable"; mode: string; message: string }
  | { kind: "placed"; mode: string; message: string }
  | { kind: "built"; mode: string }
  | { kind: "crash"; mode: string; error: unknown };

/**
 * A local MCP server standing in for the wrapped one: it lists, for each
 * tool the file proxies, a tool of that name whose schema declares every
 * argument the file names (typed as the file's rules read them), and so
 * admits what the file narrows.
 */
export interface WrapStandIn {
  url: string;
  /** Set before each build: the tools the next listing answers. */
  tools: ToolSpec[];
  stop(): Promise<void>;
}

/** Start the stand-in (127.0.0.1, a free port). */
export function startWrapStandIn(): WrapStandIn {
  const state: { tools: ToolSpec[] } = { tools: [] };
  const server = new McpServer({
    name: "fuzz-stand-in",
    version: "1.0.0",
    log: () => {},
    catalog: () => ({ tools: state.tools, resources: [], prompts: [] }),
    dispatch: () => ({ content: [{ type: "text", text: "ok" }] }),
  });
  const handler = createHttpHandler(server, { authorize: () => true, allowedOrigins: [] });
  const listener = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  return {
    url: `http://127.0.0.1:${listener.addr.port}/mcp`,
    get tools() {
      return state.tools;
    },
    set tools(tools: ToolSpec[]) {
      state.tools = tools;
    },
    stop: () => listener.shutdown(),
  };
}

/**
 * The JSON Schema type a file's rules read an argument as: a number for
 * bounds and numeric enum values, a string for string rules and string enum
 * values, any type when they mix (the file's rules then hold a type the
 * upstream does not fix, which is the upstream's choice, not the loader's).
 */
function argumentSchema(rule: McpWrap["proxies"][number]["arguments"][number]): JsonObject {
  const numeric = rule.minimum !== undefined || rule.maximum !== undefined ||
    (rule.enum ?? []).some((v) => typeof v === "number");
  const text = rule.pattern !== undefined || rule.minLength !== undefined ||
    rule.maxLength !== undefined || rule.restrict !== undefined ||
    (rule.enum ?? []).some((v) => typeof v === "string");
  return numeric && !text ? { type: "number" } : text && !numeric ? { type: "string" } : {};
}

/** The tools the stand-in lists for a file: one per proxied upstream name. */
export function standInTools(wrap: McpWrap): ToolSpec[] {
  const byName = new Map<string, Record<string, JsonObject>>();
  for (const p of wrap.proxies) {
    const props: Record<string, JsonObject> = byName.get(p.upstream) ?? {};
    // Own data properties, whatever the name (`__proto__` included).
    const define = (name: string, schema: JsonObject) =>
      Object.defineProperty(props, name, {
        value: schema,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    for (const a of p.arguments) define(a.upstream, argumentSchema(a));
    for (const pin of wrap.controls.pins[p.name] ?? []) {
      if (Object.hasOwn(props, pin.name)) continue;
      define(
        pin.name,
        "literal" in pin.value
          ? { type: typeof pin.value.literal === "string" ? "string" : "number" }
          : {},
      );
    }
    byName.set(p.upstream, props);
  }
  return [...byName].map(([name, properties]) => ({
    name,
    description: "stand-in",
    inputSchema: { type: "object", properties },
  }));
}

/**
 * The file's MCP server replaced by the stand-in; header secrets by fixed
 * text (their sources are read per request, outside the loader's reach), so
 * the headers' names and fixed texts are still held to what a request can carry.
 */
function onStandIn(wrap: McpWrap, url: string): McpWrap {
  const headers = wrap.server.transport === "http"
    ? wrap.server.headers.map((
      h,
    ) => ("source" in h.value ? { ...h, value: { text: "stand-in" } } : h))
    : [];
  return { ...wrap, server: { transport: "http", url, headers } };
}

/**
 * Load a guardfile's text and, when the loader reports no error, build and
 * list the server `serve` would run.
 * @param standIn needed for files that wrap an MCP server (else they count as built unbuilt)
 */
export async function buildOutcome(
  text: string,
  standIn?: WrapStandIn,
): Promise<BuildOutcome> {
  let loaded: ReturnType<typeof loadGuardfileText>;
  try {
    loaded = loadGuardfileText(text, "g.mcp.kdl");
  } catch (error) {
    // The loader itself must never throw: every problem is a diagnostic.
    return { kind: "crash", mode: "loader", error };
  }
  if (loaded.diagnostics.some((d) => d.severity === "error")) return { kind: "diagnosed" };
  const mode = loaded.mode ?? "none";
  try {
    if (loaded.guardfile) {
      const guardfile = loaded.guardfile;
      let server: McpServer | undefined;
      const refused = buildRefusal(guardfile, () => {
        server = guardedServer(guardfile, { log: () => {} });
      });
      if (refused) {
        if (!refused.position) throw new Error(`placed nowhere: ${refused.message}`);
        return { kind: "placed", mode, message: refused.message };
      }
      usable(await listedSurface(server!));
    } else if (loaded.policy) {
      usable(await listedSurface(awsServer(loaded.policy, { log: () => {} })));
    } else if (loaded.mcpWrap && standIn) {
      standIn.tools = standInTools(loaded.mcpWrap);
      const surface = await buildWrapSurface(onStandIn(loaded.mcpWrap, standIn.url), {
        log: () => {},
      });
      try {
        usable(await listedSurface(surface.server));
      } finally {
        await surface.connection.close();
      }
    }
  } catch (error) {
    const message = (error as Error)?.message ?? "";
    if (error instanceof StartupError && /^upstream \S+: could not connect/.test(message)) {
      return { kind: "unreachable", mode, message };
    }
    return { kind: "crash", mode, error };
  }
  return { kind: "built", mode };
}

/**
 * What is listed, a client (and the core, at the first call) can use: every
 * `pattern` of a listed schema compiles. A regular expression is compiled on
 * its first use, not by `new RegExp`: one too large or too deep for the
 * engine fails only then.
 * @throws {SyntaxError} the engine's, for the first that does not compile
 */
function usable(listed: { tools: JsonObject[] }): void {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== "object" || node === null) return;
    for (const [key, child] of Object.entries(node)) {
      if (key === "pattern" && typeof child === "string") new RegExp(child, "u").test("");
      walk(child);
    }
  };
  for (const tool of listed.tools) walk([tool.inputSchema, tool.outputSchema]);
}

/** A crash's kind: its class and its message with names, numbers and quoted text folded. */
export function crashKind(error: unknown): string {
  const e = error as Error;
  const message = String(e?.message ?? e).split("\n")[0]
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+/g, "N")
    .slice(0, 160);
  return `${e?.name ?? typeof e}: ${message}`;
}
