/**
 * The operations flags every serve mode shares, parsed in one place so each
 * mode's CLI only spreads {@link OPS_FLAGS} into its `parseArgs` options and
 * calls {@link opsSettings}: the log level, the shutdown grace and drain
 * deadline, and the stop signals (the key flags are read by
 * `src/ops/state_keys.ts`). (The help text stays in `cli.ts`, so `weir help` loads none of this.)
 *
 * @module
 */
import { createLogger, type OpsLogger, resolveLogLevel } from "./log.ts";
import { DEFAULT_DRAIN_MS } from "./shutdown.ts";
import { parseTokens, type TokenGrant } from "../inbound/static_tokens.ts";
import type { InboundToken } from "../guardfile/model.ts";
import { FileRefused, MAX_VALUE_FILE_BYTES, readBoundedTextSync } from "./bounded_file.ts";
import { DEFAULT_BODY_DEADLINE_MS } from "../inbound/body.ts";

/** `node:util` `parseArgs` options of the shared flags. */
export const OPS_FLAGS = {
  "log-level": { type: "string" },
  "drain-timeout": { type: "string" },
  "inbound-token-env": { type: "string" },
  "no-inbound-auth": { type: "boolean" },
  "admin-token-env": { type: "string" },
  "body-timeout": { type: "string" },
  "max-concurrent": { type: "string" },
  "shutdown-grace": { type: "string" },
  // The key service's sources (src/ops/state_keys.ts).
  "state-keys-env": { type: "string" },
  "state-keys-file": { type: "string" },
  "state-store-env": { type: "string" },
} as const;

/** Default cap on requests handled at once over HTTP (`--max-concurrent`). */
export const DEFAULT_MAX_CONCURRENT = 1024;

/** What the shared flags configure. */
export interface OpsSettings {
  log: OpsLogger;
  drainMs: number;
  /** HTTP: milliseconds a request body may take to arrive (408 past it; 0 disables). */
  bodyDeadlineMs: number;
  /** HTTP: requests handled at once (503 with Retry-After past it; 0 disables). */
  maxConcurrent: number;
  /**
   * HTTP: on SIGTERM, milliseconds `GET /readyz` answers 503 while everything
   * else is still served, before the drain (default 0).
   */
  shutdownGraceMs: number;
}

/**
 * Read the shared flags.
 * @param values the `parseArgs` values (only the {@link OPS_FLAGS} keys are read)
 * @param env the environment (`WEIR_LOG_LEVEL`)
 * @throws {RangeError} with a message for the user when a value is malformed (a usage error)
 */
export function opsSettings(
  values: Record<string, unknown>,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): OpsSettings {
  const level = resolveLogLevel(values["log-level"] as string | undefined, env("WEIR_LOG_LEVEL"));
  return {
    log: createLogger({ level }),
    drainMs: whole(values, "drain-timeout", DEFAULT_DRAIN_MS),
    bodyDeadlineMs: whole(values, "body-timeout", DEFAULT_BODY_DEADLINE_MS),
    maxConcurrent: whole(values, "max-concurrent", DEFAULT_MAX_CONCURRENT),
    shutdownGraceMs: whole(values, "shutdown-grace", 0),
  };
}

function whole(values: Record<string, unknown>, flag: string, fallback: number): number {
  const text = values[flag] as string | undefined;
  if (text === undefined) return fallback;
  if (!/^\d{1,9}$/.test(text)) {
    throw new RangeError(
      `--${flag} takes a whole number, got ${JSON.stringify(text.slice(0, 40))}`,
    );
  }
  return Number(text);
}

/**
 * An `AbortSignal` that aborts on SIGTERM or SIGINT with the signal's name as
 * its reason (the `shutdown` line's `reason`); `dispose` removes the listeners.
 */
export function stopSignals(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const names = ["SIGTERM", "SIGINT"] as const;
  const listeners = names.map((name) => [name, () => controller.abort(name)] as const);
  for (const [name, fn] of listeners) Deno.addSignalListener(name, fn);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const [name, fn] of listeners) Deno.removeSignalListener(name, fn);
    },
  };
}

/** Thrown for a flag combination that is wrong as written (exit 2). */
export class FlagError extends RangeError {}

/**
 * `--tool-token-env VAR:TOOL[,TOOL...]` (repeatable): tokens limited to some
 * tools. Given to the commands that serve a tool surface they can check the
 * names against (`weir serve`); spread into their `parseArgs` options.
 */
export const TOOL_TOKEN_FLAGS = {
  "tool-token-env": { type: "string", multiple: true },
} as const;

/** The inbound and admin tokens a serve command runs with. */
export interface AuthSettings {
  /** Inbound bearer tokens (rotation: any one is accepted); none: no inbound auth. */
  inboundTokens?: string[];
  /**
   * `--tool-token-env`: tokens each limited to the tools named (the variable's
   * name is the grant's name in audit lines); check the names with
   * {@link unknownGrantTools} once the served tools are known.
   */
  toolTokens?: TokenGrant[];
  /** Admin tokens: set only with `--admin-token-env`. */
  adminTokens?: string[];
}

/**
 * Inbound auth that fails closed: listening beyond loopback needs
 * `--inbound-token-env VAR` unless `--no-inbound-auth` says, explicitly, that
 * something in front authenticates. Admin endpoints need their own variable.
 *
 * @param values the `parseArgs` values ({@link OPS_FLAGS} keys)
 * @param http the address asked for, or `undefined` for stdio
 * @throws {FlagError} for a wrong combination (a usage error: exit 2)
 * @throws {RangeError} when a named variable is unset or holds a weak token (exit 1)
 */
export function authSettings(
  values: Record<string, unknown>,
  http: { hostname: string } | undefined,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
  more: {
    /** The guardfile declares `inbound-token` nodes (inbound authentication too). */
    guardfileTokens?: boolean;
  } = {},
): AuthSettings {
  const inboundVar = values["inbound-token-env"] as string | undefined;
  const adminVar = values["admin-token-env"] as string | undefined;
  const toolSpecs = (values["tool-token-env"] as string[] | undefined) ?? [];
  const open = Boolean(values["no-inbound-auth"]);
  if (open && (inboundVar !== undefined || toolSpecs.length > 0)) {
    throw new FlagError(
      `--no-inbound-auth and ${
        inboundVar !== undefined ? "--inbound-token-env" : "--tool-token-env"
      } contradict each other`,
    );
  }
  if (
    http === undefined &&
    (inboundVar !== undefined || adminVar !== undefined || open || toolSpecs.length > 0)
  ) {
    throw new FlagError(
      "--inbound-token-env, --tool-token-env, --no-inbound-auth and --admin-token-env apply " +
        "to --http only",
    );
  }
  const toolGrants = toolSpecs.map(toolTokenSpec);
  const vars = [inboundVar, ...toolGrants.map((g) => g.variable)].filter((v) => v !== undefined);
  const twice = vars.find((v, i) => vars.indexOf(v) !== i);
  if (twice !== undefined) {
    throw new FlagError(
      `the variable ${twice} is named twice (--inbound-token-env, --tool-token-env): each ` +
        `variable's tokens get one set of tools; name it once`,
    );
  }
  // OAuth (--oauth-issuer, src/modes/serve_oauth_flags.ts) is inbound authentication too.
  const oauth = values["oauth-issuer"] !== undefined;
  if (open && oauth) {
    throw new FlagError("--no-inbound-auth and --oauth-issuer contradict each other");
  }
  if (
    http && inboundVar === undefined && toolSpecs.length === 0 && !more.guardfileTokens &&
    !open && !oauth && !isLoopbackHost(http.hostname)
  ) {
    throw new FlagError(
      `--http ${http.hostname}: listening beyond loopback needs inbound authentication; ` +
        `add --inbound-token-env VAR (VAR holding one or more tokens), --oauth-issuer and ` +
        `--oauth-resource, or --no-inbound-auth when a proxy in front authenticates every caller`,
    );
  }
  const settings: AuthSettings = {};
  if (inboundVar !== undefined) {
    settings.inboundTokens = parseTokens(env(inboundVar), `--inbound-token-env ${inboundVar}`);
  }
  if (toolGrants.length > 0) {
    if (oauth) {
      throw new FlagError(
        "--tool-token-env and --oauth-issuer cannot be combined: limit OAuth callers with " +
          "each tool's scope instead",
      );
    }
    settings.toolTokens = toolGrants.map((g) => ({
      tokens: parseTokens(env(g.variable), `--tool-token-env ${g.variable}`),
      tools: g.tools,
      name: g.variable,
    }));
  }
  if (adminVar !== undefined) {
    if (adminVar === inboundVar || toolGrants.some((g) => g.variable === adminVar)) {
      throw new FlagError(
        "--admin-token-env must name another variable than --inbound-token-env and " +
          "--tool-token-env",
      );
    }
    settings.adminTokens = parseTokens(env(adminVar), `--admin-token-env ${adminVar}`);
    const inbound = [
      ...(settings.inboundTokens ?? []),
      ...(settings.toolTokens ?? []).flatMap((g) => g.tokens),
    ];
    if (settings.adminTokens.some((t) => inbound.includes(t))) {
      throw new RangeError(
        `--admin-token-env ${adminVar}: an admin token must not also be an inbound token`,
      );
    }
  }
  return settings;
}

/**
 * Read one `--tool-token-env VAR:TOOL[,TOOL...]`.
 * @throws {FlagError} when it is not that shape, or names a tool twice
 */
function toolTokenSpec(spec: string): { variable: string; tools: string[] } {
  const m = /^([A-Za-z_][A-Za-z0-9_]*):(.+)$/.exec(spec);
  if (!m) {
    throw new FlagError(
      `--tool-token-env takes VAR:TOOL[,TOOL...], e.g. --tool-token-env ` +
        `READER_TOKEN:get_issue,list_issue; got ${JSON.stringify(spec.slice(0, 80))}`,
    );
  }
  const tools = m[2].split(",").map((t) => t.trim());
  if (tools.some((t) => t === "")) {
    throw new FlagError(`--tool-token-env ${m[1]}: a tool name is empty; list names with commas`);
  }
  const twice = tools.find((t, i) => tools.indexOf(t) !== i);
  if (twice !== undefined) {
    throw new FlagError(`--tool-token-env ${m[1]}: "${twice}" is listed twice; list it once`);
  }
  return { variable: m[1], tools };
}

/**
 * The tokens of a guardfile's `inbound-token` nodes, read now from where
 * each names (an environment variable or a file).
 * @throws {RangeError} naming the node's caller and its source (never a
 *   token) when one is unset, empty or weak
 */
export function guardfileTokens(tokens: readonly InboundToken[]): TokenGrant[] {
  return tokens.map((t) => {
    let text: string | undefined;
    const where: string[] = [];
    for (const { provider, address } of t.source.chain) {
      where.push(`${provider} ${address}`);
      try {
        text = provider === "env" ? Deno.env.get(address) : readBoundedTextSync(address, {
          what: "token file",
          maxBytes: MAX_VALUE_FILE_BYTES,
          sizeHint: "a token file holds a few bearer tokens",
        });
      } catch (error) {
        // Why a file gave nothing (never its content), so the message does not send the
        // operator to a file that exists.
        if (error instanceof FileRefused) where[where.length - 1] += ` (${error.reason})`;
        text = undefined;
      }
      if (text !== undefined && text.trim() !== "") break;
    }
    return {
      tokens: parseTokens(text, `inbound-token "${t.name}" (${where.join(", else ")})`),
      tools: t.tools,
      name: t.name,
    };
  });
}

/**
 * The tool names limited tokens list that the server does not serve, each
 * with the grant naming it (a typo would otherwise lock a caller out silently).
 * @returns `VAR: "tool"` lines, empty when every name is served
 */
export function unknownGrantTools(
  grants: readonly TokenGrant[],
  served: readonly string[],
): string[] {
  const out: string[] = [];
  for (const g of grants) {
    for (const tool of g.tools ?? []) {
      if (!served.includes(tool)) out.push(`${g.name ?? "a token"}: "${tool}"`);
    }
  }
  return out;
}

/**
 * Whether a host as written on the command line is loopback, reading IPv4
 * shorthands the way the listener will (`127.1` is 127.0.0.1).
 */
export function isLoopbackHost(hostname: string): boolean {
  let host = hostname.toLowerCase();
  try {
    host = new URL(`http://${host.includes(":") ? `[${host}]` : host}/`).hostname;
  } catch {
    return false;
  }
  host = host.replace(/^\[(.*)\]$/, "$1");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host) ||
    /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host);
}

/** Flags that name a variable holding one of weir's own secrets. */
const OWN_SECRET_FLAGS = [
  "inbound-token-env",
  "tool-token-env",
  "admin-token-env",
  "state-keys-env",
  "state-store-env",
  "oauth-introspection-secret-env",
  "token-exchange-secret-env",
] as const;

/**
 * The environment variables weir's own secrets are read from (inbound, tool
 * and admin tokens, state keys, the state store's URL, OAuth introspection
 * and token exchange client secrets; `--tool-token-env VAR:TOOLS` too): a stdio upstream does not inherit them
 * (serve-upstream and a guardfile that wraps an MCP server over stdio).
 */
export function weirSecretVariables(values: Record<string, unknown>): string[] {
  return OWN_SECRET_FLAGS.flatMap((flag) => [values[flag]].flat())
    .filter((v): v is string => typeof v === "string")
    .map((v) => v.split(":")[0]);
}
