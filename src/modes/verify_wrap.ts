/**
 * `weir verify FILE` for a guardfile that wraps an MCP server: the wrapped
 * server's tool definitions (listed from the server as `weir describe` does,
 * or read from `--definitions F`, a saved `tools/list` result) are served by
 * a recording MCP stand-in (src/verify/standin.ts), and the file is served
 * against it exactly as `weir serve FILE` serves it (`buildWrapSurface`),
 * with its header secrets and pins replaced by generated stand-ins. With
 * `token-exchange`, with OAuth against a stand-in identity provider and
 * several callers (src/modes/verify_identity.ts).
 *
 * @module
 */
import type { McpWrap } from "../guardfile/mcp_wrap_model.ts";
import type { ToolSpec } from "../mcp/types.ts";
import { UpstreamConnection } from "../mcp_upstream/connection.ts";
import { headerTemplates, listingConnection } from "../wrap/config.ts";
import { buildWrapSurface } from "../wrap/surface.ts";
import { secretsRedactor } from "../wrap/host.ts";
import { connectionRefusal } from "../wrap/open.ts";
import { guardedHttpApp } from "../serving/http_app.ts";
import { type BuiltTarget, hintsOf, listedTools, watcher } from "./verify.ts";
import { StandInValues } from "./verify_values.ts";
import { surfaceOfWrap } from "../surface/wrap.ts";
import { wrapDecisions } from "../wrap/describe.ts";
import { startMcpStandIn } from "../verify/standin.ts";
import { checkWrapCall, type PinnedArgument } from "../verify/wrap_oracle.ts";
import type { ListedTool, Target } from "../verify/run.ts";
import { openStdioLink, type StdioLink } from "../verify/stdio_link.ts";
import { readBoundedText } from "../ops/bounded_file.ts";
import type { StandInIdentity } from "./verify_identity.ts";

/**
 * The wrapped server's definitions: from `file` (a saved `tools/list` result,
 * `{"tools": [...]}`, or a fingerprints file `weir lint-upstream
 * --write-fingerprints` wrote, whose `definitions` it reads), else listed from
 * the server itself.
 * @throws {Error} when neither can be had (the message says how)
 */
export async function definitionsOf(wrap: McpWrap, file?: string): Promise<ToolSpec[]> {
  if (file !== undefined) {
    const text = await readBoundedText(file, {
      what: "definitions file",
      maxBytes: 16 * 1024 * 1024,
    });
    let json: { tools?: unknown };
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(`--definitions ${file}: not JSON (${(error as Error).message})`);
    }
    const recorded = (json as { definitions?: unknown })?.definitions;
    if (Array.isArray(recorded)) return recorded as ToolSpec[];
    if (!Array.isArray(json?.tools)) {
      throw new Error(
        `--definitions ${file}: expected a tools/list result, {"tools": [...]}, or a ` +
          `fingerprints file with definitions (weir lint-upstream FILE --write-fingerprints F)`,
      );
    }
    return json.tools as ToolSpec[];
  }
  const headers = headerTemplates(wrap.server.transport === "http" ? wrap.server.headers : []);
  let connection: UpstreamConnection;
  try {
    // client-credentials: listed as serve lists, with weir's own token.
    const { listingToken } = await import("./serve_mcp_wrap.ts");
    const ownToken = await listingToken(wrap);
    connection = await UpstreamConnection.open(listingConnection(wrap, headers, ownToken));
  } catch (error) {
    const exchange = wrap.server.transport === "http" ? wrap.server.exchange : undefined;
    const why = connectionRefusal(error, exchange !== undefined && !exchange.clientCredentials) ??
      (error as Error).message;
    throw new Error(
      `cannot list the MCP server's tools to serve them from a stand-in (${why}); give them ` +
        `with --definitions F (a saved tools/list result, {"tools": [...]})`,
    );
  }
  try {
    // The MCP server's words may quote the credential weir sent: a tool named after it is
    // left out (no file can serve it), any other definition is read with it redacted.
    const redactor = secretsRedactor(headers);
    return (await connection.listTools())
      .filter((tool) => redactor.text(String(tool.name)) === tool.name)
      .map((tool) => redactor.deep(tool) as ToolSpec);
  } finally {
    await connection.close();
  }
}

/** A pin's stand-in value of the argument's JSON type. */
function pinValue(
  definition: ToolSpec | undefined,
  name: string,
  values: StandInValues,
  what: string,
  secret: boolean,
) {
  const props = (definition?.inputSchema?.properties ?? {}) as Record<string, { type?: unknown }>;
  const type = props[name]?.type;
  if (type === "integer" || type === "number") return values.source(what, false, "4242");
  if (type === "boolean") return values.source(what, false, "true");
  return values.source(what, secret);
}

/** Build the target for a guardfile that wraps an MCP server. */
export async function wrapTarget(given: McpWrap, definitionsFile?: string): Promise<BuiltTarget> {
  const definitions = await definitionsOf(given, definitionsFile);
  const standIn = startMcpStandIn(definitions);
  const values = new StandInValues();
  const wrap: McpWrap = structuredClone(given);
  const notes: string[] = [
    `the MCP server is a stand-in listing ${
      definitionsFile
        ? `the definitions of ${definitionsFile}`
        : "the definitions the server listed"
    }`,
  ];
  const headers = given.server.transport === "http" ? structuredClone(given.server.headers) : [];
  for (const h of headers) {
    if ("source" in h.value) h.value = { source: values.source(`header ${h.name}`, true).source };
  }
  const exchange = given.server.transport === "http" ? given.server.exchange : undefined;
  wrap.server = { transport: "http", url: standIn.url, headers };
  const pins: Record<string, PinnedArgument[]> = {};
  for (const [tool, list] of Object.entries(wrap.controls.pins)) {
    const proxy = wrap.proxies.find((p) => p.name === tool);
    const definition = definitions.find((d) => d.name === proxy?.upstream);
    pins[tool] = list.map((p) => {
      if ("literal" in p.value) return [p.name, p.value.literal];
      const s = pinValue(definition, p.name, values, `pin ${p.name}`, p.secret);
      p.value = { source: s.source };
      const type =
        ((definition?.inputSchema?.properties ?? {}) as Record<string, { type?: unknown }>)[p.name]
          ?.type;
      return [
        p.name,
        type === "integer" || type === "number"
          ? Number(s.value)
          : type === "boolean"
          ? true
          : s.value,
      ];
    });
  }
  if (wrap.controls.rateLimit) {
    notes.push("the rate-limit is lifted so the calls do not queue; it is not what verify checks");
    delete wrap.controls.rateLimit;
  }
  if (!exchange && (wrap.oauth || wrap.inboundTokens.length > 0)) {
    notes.push(
      "who may call (OAuth scopes, inbound tokens) is not checked: every tool is called as a caller allowed all",
    );
  }
  const watch = watcher();
  let identity: StandInIdentity | undefined;
  const stopAll = async () => {
    watch.stop();
    for (const name of values.values.keys()) Deno.env.delete(name);
    await standIn.stop();
    await identity?.stop();
  };
  let surface;
  try {
    if (exchange) {
      const scopes = new Map(wrap.proxies.map((p) => [p.name, p.scopes]));
      identity = await (await import("./verify_identity.ts")).standInIdentity(
        wrap.oauth,
        exchange,
        scopes,
        values,
        watch.log,
      );
      wrap.server.exchange = identity.setting;
      notes.push(...identity.notes);
    }
    for (const [name, value] of values.values) Deno.env.set(name, value);
    surface = await buildWrapSurface(wrap, {
      log: watch.log,
      ...(identity
        ? {
          credential: identity.oauth.upstreamCredential,
          connection: identity.oauth.connectionToken,
          toolAccess: identity.oauth.server.toolAccess,
        }
        : {}),
    });
  } catch (error) {
    await stopAll();
    throw error;
  }
  const app = guardedHttpApp(surface.server, {
    port: 8080,
    hostname: "127.0.0.1",
    log: watch.log,
    ...(identity ? { oauth: identity.oauth.server } : {}),
  });
  const served = new Map(
    surface.host.served().flatMap((s) => s.kind === "served" ? [[s.entry.name, s] as const] : []),
  );
  const listed = await listedTools(app, identity?.listing);
  const schemas = new Map(listed.map((t) => [t.name, t.inputSchema]));
  const tools: ListedTool[] = listed.map((t) => ({
    name: t.name,
    inputSchema: t.inputSchema,
    reaches: served.has(t.name),
    confirm: Object.hasOwn(wrap.controls.confirm, t.name),

    cached: Object.hasOwn(wrap.controls.cache, t.name),
  }));
  const { restricts, alsoTwin } = hintsOf(surfaceOfWrap(wrap, wrapDecisions(surface.host)));
  let link: Promise<StdioLink> | undefined;
  const target: Target = {
    fetch: app,
    stdio: () => link ??= openStdioLink(surface.server),
    tools,
    received: () => standIn.received.length,
    check: (tool, args, from, caller) => {
      const proxy = wrap.proxies.find((p) => p.name === tool)!;
      const schema = schemas.get(tool) ?? {};
      const declared = new Set(Object.keys((schema.properties ?? {}) as object));
      const admitsOthers = schema.additionalProperties !== false;
      const record = typeof args === "object" && args !== null && !Array.isArray(args)
        ? args as Record<string, unknown>
        : {};
      return standIn.received.slice(from).flatMap((c) => [
        ...checkWrapCall(proxy, record, c, declared, admitsOthers, pins[tool] ?? []),
        ...(identity && caller
          ? identity.check(c.headers, JSON.stringify(c.arguments ?? null), caller, tool)
          : []),
      ]);
    },
    ...(identity ? { callerOf: identity.callerOf, findings: identity.findings } : {}),
    secrets: values.secrets,
    watched: () => watch.lines,
  };
  return {
    mode: "mcp wrap",
    target,
    restricts,
    alsoTwin,
    notes,
    stop: async () => {
      if (link) await (await link).close();
      await surface.connection.close();
      await stopAll();
    },
  };
}
