/**
 * `weir verify FILE`: serve a guardfile against a recording stand-in of its
 * upstream that weir starts itself, make a few hundred generated calls per
 * tool (src/verify/cases.ts) and hold every one to what the file grants
 * (src/verify/run.ts). In process: the guard is the one `weir serve` builds
 * (`guardedServer`, `guardedHttpApp`), reached through its HTTP app as a
 * client reaches it; its upstream is the stand-in.
 *
 * What verify changes to be able to run, and says so in its report: the
 * base URL points at the stand-in (its path kept); every credential, pin and
 * DSN the file reads from the environment or a file is a generated stand-in
 * value (verify reads none of yours); the `rate-limit` is lifted so the calls
 * do not queue. It does not check who may call (tokens, OAuth scopes): every
 * tool is called as a caller allowed all of them. A file that sends each
 * caller's identity upstream (token exchange) is served with OAuth against a
 * stand-in identity provider and called by several callers
 * (src/modes/verify_identity.ts).
 *
 * @module
 */
import type { Grant, Guardfile } from "../guardfile/model.ts";
import { readOnlyView } from "../guardfile/surface.ts";
import type { Surface } from "../surface/model.ts";
import { surfaceOfGuardfile } from "../surface/spec.ts";
import type { LogEvent } from "../mcp/server.ts";
import { setUpstreamTracing } from "../ops/trace_hooks.ts";
import { guardedServer, toolScopesOf } from "./serve.ts";
import { guardedHttpApp } from "../serving/http_app.ts";
import { startHttpStandIn } from "../verify/standin.ts";
import { StandInValues } from "./verify_values.ts";
import { checkSpecRequest, type SpecContext } from "../verify/spec_oracle.ts";
import type { ListedTool, Target } from "../verify/run.ts";
import { openStdioLink, type StdioLink } from "../verify/stdio_link.ts";
import type { StandInIdentity } from "./verify_identity.ts";

/** A target and what to stop when done. */
export interface BuiltTarget {
  /** `spec` or `mcp wrap`. */
  mode: string;
  target: Target;
  /** Restrict globs per tool and input, for generation. */
  restricts: Record<string, Record<string, string[][]>>;
  /** Per tool, more names whose twins generation sends (see `ToolShape.alsoTwin`). */
  alsoTwin?: Record<string, string[]>;
  notes: string[];
  stop(): Promise<void>;
}

/**
 * What generation reads beside each tool's input schema, from the surface
 * model (src/surface/): restrict globs per argument, and the names a wrapped
 * server reads that the tool serves under another name or pins (their twins
 * are sent as extra keys).
 */
export function hintsOf(surface: Surface): Pick<BuiltTarget, "restricts" | "alsoTwin"> {
  const restricts: BuiltTarget["restricts"] = {};
  const alsoTwin: Record<string, string[]> = {};
  for (const tool of surface.tools) {
    restricts[tool.name] = Object.fromEntries(
      tool.arguments.filter((a) => a.restrict.length > 0).map((a) => [a.name, a.restrict]),
    );
    if (tool.kind === "proxy") {
      alsoTwin[tool.name] = [
        ...tool.arguments.filter((a) => a.sentAs !== a.name).map((a) => a.sentAs),
        ...tool.pins.map((p) => p.name),
      ];
    }
  }
  return { restricts, alsoTwin };
}

/** Capture of log events and telemetry hook calls, as JSON text. */
export function watcher(): { log: (event: LogEvent) => void; lines: string[]; stop(): void } {
  const lines: string[] = [];
  const log = (event: LogEvent) => lines.push(JSON.stringify(event));
  setUpstreamTracing({
    // What a span may say (the hook's call); the request headers are the hook's to add
    // `traceparent` to, never exported.
    http: (call, _headers, send) => {
      lines.push(JSON.stringify({ telemetry: "http", call }));
      return send();
    },
    mcp: (call, run) => {
      lines.push(JSON.stringify({ telemetry: "mcp", call }));
      return run();
    },
    inject: () => {},
  });
  return { log, lines, stop: () => setUpstreamTracing(undefined) };
}

/**
 * The tools weir lists, read through its own `tools/list` (every page).
 * @param authorization the `Authorization` a caller allowed every tool sends (with OAuth)
 */
export async function listedTools(
  fetch: (r: Request) => Promise<Response>,
  authorization?: string,
): Promise<{ name: string; inputSchema: Record<string, unknown> }[]> {
  const out: { name: string; inputSchema: Record<string, unknown> }[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const response = await fetch(
      new Request("http://127.0.0.1:8080/mcp", {
        method: "POST",
        headers: {
          host: "127.0.0.1:8080",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/list",
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: {
            ...(cursor ? { cursor } : {}),
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        }),
      }),
    );
    if (response.status !== 200) {
      throw new Error(`tools/list failed: ${response.status} ${await response.text()}`);
    }
    const json = await response.json();
    if (!json.result) throw new Error(`tools/list failed: ${JSON.stringify(json.error)}`);
    out.push(...json.result.tools);
    cursor = json.result.nextCursor;
    if (!cursor) break;
  }
  return out;
}

/** The copy of a spec-mode guardfile verify serves, and what it set. */
function standInGuardfile(given: Guardfile, url: string, values: StandInValues) {
  const guardfile: Guardfile = structuredClone(given);
  const notes: string[] = [];
  const basePath = typeof given.baseUrl === "string" && given.baseUrl !== ""
    ? new URL(given.baseUrl).pathname.replace(/\/+$/, "")
    : "";
  guardfile.baseUrl = url + basePath;
  const auth: SpecContext["auth"] = { query: [] };
  const a = guardfile.auth;
  if (a.scheme === "bearer") {
    const s = values.source("credential", true);
    a.value = s.source;
    auth.header = ["authorization", `Bearer ${s.value}`];
  } else if (a.scheme === "header-token") {
    const s = values.source("credential", true);
    a.value = s.source;
    auth.header = [a.header, a.prefix + s.value];
  } else if (a.scheme === "query-param") {
    for (const p of a.params) {
      const s = values.source(`credential ${p.name}`, true);
      p.value = s.source;
      auth.query.push([p.name, s.value]);
    }
  }
  const pins: SpecContext["pins"] = {};
  for (const [tool, list] of Object.entries(guardfile.controls.pins)) {
    pins[tool] = [];
    for (const p of list) {
      const secret = p.secret === true || p.fromQuery !== undefined;
      if (p.source.chain.every((c) => c.provider === "literal")) {
        pins[tool].push([p.name, p.source.chain[0].address]);
        continue;
      }
      if (p.fromQuery) {
        // The pin takes one query parameter out of a URL-valued secret: that value is secret.
        const value = values.fresh();
        const url = `https://pin.example/?${encodeURIComponent(p.fromQuery)}=${
          encodeURIComponent(value)
        }`;
        p.source = values.source(`pin ${p.name}`, false, url).source;
        values.secrets.push([`pin ${p.name}`, value]);
        pins[tool].push([p.name, value]);
        continue;
      }
      const s = values.source(`pin ${p.name}`, secret);
      p.source = s.source;
      pins[tool].push([p.name, s.value]);
    }
  }
  if (guardfile.database) {
    const password = values.fresh();
    const s = values.source(
      "database DSN",
      false,
      `postgres://verify:${password}@127.0.0.1:1/verify`,
    );
    values.secrets.push(["database password", password]);
    guardfile.database.dsn = s.source;
    notes.push(
      "sql grants are called against no database (they answer a tool error): verify holds HTTP grants",
    );
  }
  if (guardfile.controls.rateLimit) {
    notes.push("the rate-limit is lifted so the calls do not queue; it is not what verify checks");
    delete guardfile.controls.rateLimit;
  }
  if (
    a.scheme !== "token-exchange" && (guardfile.oauth || guardfile.inboundTokens?.length)
  ) {
    notes.push(
      "who may call (OAuth scopes, inbound tokens) is not checked: every tool is called as a caller allowed all",
    );
  }
  return { guardfile, basePath, auth, pins, notes };
}

/** Build the target for a spec-mode guardfile. */
export async function specTarget(given: Guardfile): Promise<BuiltTarget> {
  const standIn = startHttpStandIn();
  const values = new StandInValues();
  const { guardfile, basePath, auth, pins, notes } = standInGuardfile(given, standIn.url, values);
  const watch = watcher();
  const a = guardfile.auth;
  let identity: StandInIdentity | undefined;
  try {
    identity = a.scheme === "token-exchange"
      ? await (await import("./verify_identity.ts")).standInIdentity(
        guardfile.oauth,
        a.exchange,
        toolScopesOf(guardfile),
        values,
        watch.log,
      )
      : undefined;
  } catch (error) {
    watch.stop();
    await standIn.stop();
    throw error;
  }
  if (identity && a.scheme === "token-exchange") {
    a.exchange = identity.setting;
    notes.push(...identity.notes);
  }
  const server = guardedServer(guardfile, {
    resolver: values.resolver(),
    log: watch.log,
    limits: { timeoutMs: 10_000 },
    ...(identity
      ? {
        toolAccess: identity.oauth.server.toolAccess,
        upstreamCredential: identity.oauth.upstreamCredential,
      }
      : {}),
  });
  const app = guardedHttpApp(server, {
    port: 8080,
    hostname: "127.0.0.1",
    log: watch.log,
    ...(identity ? { oauth: identity.oauth.server } : {}),
  });
  // The grants served (a read-only surface serves its reads only).
  const served = guardfile.surface.readOnly ? readOnlyView(guardfile) : guardfile;
  const grants = new Map<string, Grant>(served.grants.map((g) => [g.tool, g]));
  const context: SpecContext = { guardfile: served, basePath, auth, pins };
  const listed = await listedTools(app, identity?.listing);
  const tools: ListedTool[] = listed.map((t) => ({
    name: t.name,
    inputSchema: t.inputSchema,
    reaches: grants.has(t.name) && !grants.get(t.name)!.sql,
    ...(grants.get(t.name)?.sql
      ? { unchecked: "sql: arguments only, the statement runs against no database" }
      : {}),
    confirm: Object.hasOwn(guardfile.controls.confirm, t.name),

    cached: Object.hasOwn(guardfile.controls.cache, t.name),
  }));
  const { restricts } = hintsOf(surfaceOfGuardfile(served));
  let link: Promise<StdioLink> | undefined;
  const target: Target = {
    fetch: app,
    stdio: () => link ??= openStdioLink(server),
    tools,
    received: () => standIn.received.length,
    check: (tool, args, from, caller) => {
      const grant = grants.get(tool)!;
      const record = typeof args === "object" && args !== null && !Array.isArray(args)
        ? args as Record<string, unknown>
        : {};
      return standIn.received.slice(from).flatMap((r) => [
        ...checkSpecRequest(grant, record, r, context),
        ...(identity && caller
          ? identity.check(r.headers, r.target + "\n" + r.body, caller, tool)
          : []),
      ]);
    },
    ...(identity ? { callerOf: identity.callerOf, findings: identity.findings } : {}),
    secrets: values.secrets,
    watched: () => watch.lines,
  };
  return {
    mode: "spec",
    target,
    restricts,
    notes,
    stop: async () => {
      if (link) await (await link).close();
      watch.stop();
      await standIn.stop();
      await identity?.stop();
    },
  };
}
