/**
 * How a guardfile that wraps an MCP server (src/guardfile/mcp_wrap.ts)
 * becomes the settings of serve-upstream's host: the connection's target and
 * header templates, the served entries (overrides, argument rules, pins,
 * scopes), and the key that says whether a reload may keep the connection.
 *
 * @module
 */
import type { McpServerHeader, McpWrap, ProxyTool } from "../guardfile/mcp_wrap.ts";
import { forTool, type ValueSource } from "../guardfile/model.ts";
import { globsPattern } from "../guardfile/glob.ts";
import { type HeaderTemplate, resolveHeaders, type TemplatePart } from "../mcp_upstream/headers.ts";
import type { ConnectionOptions, OwnToken, UpstreamTarget } from "../mcp_upstream/connection.ts";
import type { ArgumentOverride } from "../mcp_upstream/overrides.ts";
import type { EntryPin, ServedEntry } from "./entries.ts";
import { connectionSecrets, type UpstreamHost } from "./host.ts";
import { readBoundedTextSync } from "../ops/bounded_file.ts";

/** The most a pin's `file` source may hold (a secret or an identifier, never a document). */
const MAX_PIN_FILE_BYTES = 65_536;

/** The defaults of the connection settings (the command line's). */
export const WRAP_DEFAULTS = {
  connectTimeoutMs: 0,
  requestTimeoutMs: 60_000,
  maxResponseBytes: 8_388_608,
};

/** Command-line settings that win over the file's. */
export interface WrapFlags {
  /** `--max-staleness`. */
  maxStalenessMs?: number;
}

/** How the file reaches its MCP server, for the connection. */
export function targetOf(wrap: McpWrap, withoutEnv: readonly string[] = []): UpstreamTarget {
  const server = wrap.server;
  return server.transport === "http"
    ? { kind: "http", url: new URL(server.url) }
    : { kind: "stdio", command: server.command, args: server.args, withoutEnv };
}

/**
 * The connection options a one-off listing of the file's MCP server opens
 * with (`lint-upstream FILE`, `verify`): the file's target, headers (their
 * secrets scrubbed from failures) and connection settings, and weir's own
 * token where client-credentials give it one.
 */
export function listingConnection(
  wrap: McpWrap,
  headers: readonly HeaderTemplate[],
  ownToken?: OwnToken,
): ConnectionOptions {
  return {
    target: targetOf(wrap),
    headers: () => resolveHeaders(headers).headers,
    secrets: connectionSecrets(headers),
    requestTimeoutMs: wrap.settings.requestTimeoutMs ?? WRAP_DEFAULTS.requestTimeoutMs,
    maxResponseBytes: wrap.settings.maxResponseBytes ?? WRAP_DEFAULTS.maxResponseBytes,
    connectTimeoutMs: wrap.settings.connectTimeoutMs ?? WRAP_DEFAULTS.connectTimeoutMs,
    ...(ownToken ? { ownToken } : {}),
  };
}

/** The file's headers as the connection's templates (values read per request). */
export function headerTemplates(headers: readonly McpServerHeader[]): HeaderTemplate[] {
  return headers.map((h) => {
    const parts: TemplatePart[] = [];
    if (h.prefix) parts.push(h.prefix);
    if ("text" in h.value) parts.push(h.value.text);
    else parts.push(sourcePart(h.value.source));
    return { name: h.name, parts, origin: `header "${h.name}"` };
  });
}

function sourcePart(source: ValueSource): TemplatePart {
  const chain = source.chain.map((c) => ({
    provider: c.provider as "env" | "file" | "literal",
    address: c.address,
  }));
  return chain.length === 1 ? chain[0] : { chain };
}

/** The served entries of the file's proxies (overrides, rules, pins, scopes). */
export function entriesOf(wrap: McpWrap): ServedEntry[] {
  return wrap.proxies.map((p) => ({
    name: p.name,
    upstream: p.upstream,
    override: {
      ...(p.title !== undefined ? { title: p.title } : {}),
      ...(p.description !== undefined ? { description: p.description } : {}),
      ...(p.annotations ? { annotations: p.annotations } : {}),
      arguments: p.arguments.map(argumentOverride),
    },
    pins: (forTool(wrap.controls.pins, p.name) ?? []).map((pin): EntryPin => {
      if ("literal" in pin.value) {
        return {
          name: pin.name,
          literal: pin.value.literal,
          source: "a literal",
          secret: pin.secret,
        };
      }
      const chain = pin.value.source.chain;
      return {
        name: pin.name,
        read: () => readSource(chain),
        source: chain.map((c) => `${c.provider} ${c.address}`).join(", else "),
        secret: pin.secret,
      };
    }),
    scopes: p.scopes,
    accept: p.accept.map((a) => a.id),
  }));
}

function argumentOverride(rule: ProxyTool["arguments"][number]): ArgumentOverride {
  const out: ArgumentOverride = { name: rule.name, upstream: rule.upstream, hide: rule.hide };
  for (const key of ["minimum", "maximum", "pattern", "minLength", "maxLength", "enum"] as const) {
    if (rule[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = rule[key];
  }
  if (rule.restrict) {
    const pattern = globsPattern(rule.restrict);
    out.restrict = { globs: rule.restrict, ...(pattern === undefined ? {} : { pattern }) };
  }
  return out;
}

/** The first non-empty value of a chain (env or file), read now; `undefined` when none. */
function readSource(chain: readonly { provider: string; address: string }[]): string | undefined {
  for (const { provider, address } of chain) {
    let text: string | undefined;
    try {
      text = provider === "env"
        ? Deno.env.get(address)
        : provider === "file"
        ? readPinFile(address)
        : address;
    } catch {
      text = undefined;
    }
    if (text !== undefined && text !== "") return text;
  }
  return undefined;
}

/** The key of how a file reaches its MCP server: a reload with the same key keeps the connection. */
export function connectionKey(wrap: McpWrap, flags: WrapFlags = {}): string {
  return JSON.stringify({ server: wrap.server, settings: wrap.settings, flags });
}
/**
 * A pin's file, read now: at most {@link MAX_PIN_FILE_BYTES} bytes of a
 * regular file (a device such as /dev/zero or a pipe is refused), one
 * trailing newline dropped.
 * @returns `undefined` when the file is missing, not a regular file or too long
 */
function readPinFile(path: string): string | undefined {
  try {
    // src/ops/bounded_file.ts: stat first, so a FIFO is refused unopened (opening one waits).
    return readBoundedTextSync(path, { what: "pin file", maxBytes: MAX_PIN_FILE_BYTES })
      .replace(/\r?\n$/, "");
  } catch {
    return undefined;
  }
}

/**
 * The controls that name what the file alone could not check: a
 * `reject-empty-argument` field the served tool does not have, a `cache` on
 * a tool the MCP server marks destructive.
 * @returns one sentence per problem (logged; the control then never applies)
 */
export function checkControls(wrap: McpWrap, host: UpstreamHost): string[] {
  const out: string[] = [];
  for (const state of host.served()) {
    if (state.kind !== "served") continue;
    const name = state.entry.name;
    const properties = Object.keys(
      (state.spec.inputSchema?.properties ?? {}) as Record<string, unknown>,
    );
    for (const field of forTool(wrap.controls.rejectEmptyArguments, name) ?? []) {
      if (!properties.includes(field)) {
        out.push(
          `reject-empty-argument "${name}" field="${field}": the served tool has no argument ` +
            `"${field}" (it has: ${properties.join(", ") || "none"})`,
        );
      }
    }
    if (
      forTool(wrap.controls.cache, name) !== undefined &&
      state.spec.annotations?.destructiveHint === true &&
      state.spec.annotations?.readOnlyHint !== true
    ) {
      out.push(
        `cache "${name}": the MCP server marks the tool destructive (destructiveHint), so a ` +
          `cached answer would hide that the call did not run again`,
      );
    }
  }
  return out;
}
