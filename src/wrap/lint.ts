/**
 * What `weir lint-upstream` checks, the CI gate of both forms of wrapping an
 * MCP server, serve minus the listener: {@link lintUpstream} for an
 * allowlist given as flags, {@link lintWrap} for a guardfile that wraps an
 * MCP server. Each decides every tool as serve does at start-up (the same
 * decision, pins, overrides and rules) and reports it; `--fingerprints`
 * holds the tools to the definitions a previous run wrote.
 *
 * The fingerprints file is JSON: `{"tools": {"<name>": "sha256:<hex>"}}`.
 *
 * @module
 */
import type { ToolSpec } from "../mcp/types.ts";
import type { Diagnostic } from "../guardfile/diagnostics.ts";
import { formatDiagnostic } from "../guardfile/diagnostics.ts";
import type { McpWrap } from "../guardfile/mcp_wrap.ts";
import { READ_ONLY_REASON } from "../guardfile/surface.ts";
import { mcpToolAccess } from "../guardfile/reads.ts";
import { parsePins, readOnlyNameProblem } from "../mcp_upstream/allowlist.ts";
import { resolveHeaders } from "../mcp_upstream/headers.ts";
import { type OwnToken, UpstreamConnection } from "../mcp_upstream/connection.ts";
import { decideTools, stubWords, type SurfaceInput } from "../mcp_upstream/decision.ts";
import { FileRefused, readBoundedText } from "../ops/bounded_file.ts";
import { type Finding, findingLine } from "../mcp_upstream/scan.ts";
import { connectionSecrets, secretsRedactor, withholdingSecrets } from "./host.ts";
import { type EntryState, entryState, renamedOntoListed } from "./entries.ts";
import { checkControls, entriesOf, headerTemplates, listingConnection } from "./config.ts";
import { connectionRefusal, describeTarget } from "./open.ts";
import type { SharedConfig } from "./flags.ts";

/** A guardfile as loaded from disk (`loadGuardfileFile`): what {@link lintWrap} reads of it. */
export interface LoadedWrapFile {
  /** Why the file could not be read, if it could not. */
  readError?: string;
  diagnostics: readonly Diagnostic[];
  /** The model, when the file wraps an MCP server and loads. */
  mcpWrap?: McpWrap;
}

/** One allowlisted tool's verdict. */
export interface ToolVerdict {
  name: string;
  /**
   * `present` (served), `missing`, a stub's kind (`unservable`, `drifted`,
   * `withheld`, `flagged` by the definition scan), or `unchecked` when no
   * upstream was consulted.
   */
  status: "present" | "missing" | "drifted" | "unservable" | "withheld" | "flagged" | "unchecked";
  fingerprint?: string;
  problems: string[];
  /** What is merely unusual: reported, not failed (the scan's warnings, a stale acceptance). */
  warnings: string[];
  /** The definition scan's findings (src/mcp_upstream/scan.ts): errors, warnings, accepted. */
  findings?: Finding[];
}

/** The whole report (the `--format json` document). */
export interface LintUpstreamReport {
  ok: boolean;
  tools: ToolVerdict[];
  /** Problems not tied to one tool (an unreachable upstream, an unreadable file). */
  problems: string[];
}

/** What `lint-upstream` was asked to check. */
export interface LintUpstreamConfig extends SharedConfig {
  readOnly?: "heuristic" | "strict";
  fingerprints?: string;
  writeFingerprints?: string;
  requestTimeoutMs: number;
  /** `--pin` values as written (decided as serve-upstream decides them). */
  pins?: string[];
}

/** Largest fingerprints file read (the fingerprints and definitions of thousands of tools fit). */
const MAX_FINGERPRINTS_BYTES = 16 * 1024 * 1024;

/** `--read-only strict`: a tool without `readOnlyHint: true` is withheld. */
const readOnlyStrict: SurfaceInput["withhold"] = (_name, definition) =>
  mcpToolAccess({ upstream: definition.annotations?.readOnlyHint }).reads ? undefined : {
    reason: "it does not carry annotations.readOnlyHint: true",
    remedy: "drop the tool from the allowlist, or have the upstream mark it read-only",
  };

/**
 * The fingerprints a `--fingerprints FILE` holds (`{"tools": {NAME: FINGERPRINT}}`,
 * at most {@link MAX_FINGERPRINTS_BYTES}), or `undefined` when none was named
 * or it cannot be used; then `problems` gets a line naming the file, why, and
 * how to write one.
 */
async function readFingerprints(
  file: string | undefined,
  problems: string[],
): Promise<Record<string, string> | undefined> {
  if (file === undefined) return undefined;
  try {
    const doc = JSON.parse(
      await readBoundedText(file, { what: "fingerprints file", maxBytes: MAX_FINGERPRINTS_BYTES }),
    );
    if (typeof doc?.tools !== "object" || doc.tools === null || Array.isArray(doc.tools)) {
      throw new Error(`it has no "tools" object`);
    }
    return doc.tools;
  } catch (error) {
    problems.push(
      `--fingerprints ${file}: ${
        error instanceof FileRefused ? error.reason : (error as Error).message
      } (write one with --write-fingerprints)`,
    );
    return undefined;
  }
}

/**
 * What `--write-fingerprints` writes: `{"tools": {NAME: FINGERPRINT}, "definitions": [...]}`,
 * the fingerprinted tools' definitions as the server listed them (every string with the
 * credential weir sends it redacted), so `weir diff --definitions FILE` can compare the
 * served surfaces offline. Readers of fingerprints read `tools` only.
 */
function fingerprintsDocument(
  prints: ReadonlyMap<string, string>,
  listed: readonly ToolSpec[],
  headers: Parameters<typeof secretsRedactor>[0],
): { tools: Record<string, string>; definitions: ToolSpec[] } {
  const redactor = secretsRedactor(headers);
  const clean = (v: unknown): unknown =>
    typeof v === "string"
      ? redactor.text(v)
      : Array.isArray(v)
      ? v.map(clean)
      : typeof v === "object" && v !== null
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clean(x)]))
      : v;
  const names = [...prints.keys()].sort();
  return {
    tools: Object.fromEntries(names.map((n) => [n, prints.get(n)!])),
    definitions: names.flatMap((n) => {
      const d = listed.find((t) => t.name === n);
      return d ? [clean(d) as ToolSpec] : [];
    }),
  };
}

/**
 * Run the checks.
 * @returns the report; never throws for a finding or an unreachable upstream
 */
export async function lintUpstream(config: LintUpstreamConfig): Promise<LintUpstreamReport> {
  const verdicts = new Map<string, ToolVerdict>(
    config.allowlist.map((
      name,
    ) => [name, { name, status: "unchecked", problems: [], warnings: [] }]),
  );
  const problems: string[] = [];
  if (config.readOnly === "heuristic") {
    for (const v of verdicts.values()) {
      const problem = readOnlyNameProblem(v.name);
      if (problem) v.problems.push(problem);
    }
  }
  const expected = await readFingerprints(config.fingerprints, problems);
  let listed: ToolSpec[] | undefined;
  if (config.target) {
    let connection: UpstreamConnection | undefined;
    try {
      resolveHeaders(config.headers);
      connection = await UpstreamConnection.open({
        target: config.target,
        headers: () => resolveHeaders(config.headers).headers,
        secrets: connectionSecrets(config.headers),
        requestTimeoutMs: config.requestTimeoutMs,
        maxResponseBytes: 8 * 1024 * 1024,
        connectTimeoutMs: config.connectTimeoutMs,
      });
      listed = await connection.listTools();
    } catch (error) {
      // The upstream's error text may quote the credential weir sent it.
      problems.push(
        `upstream ${describeTarget(config.target)}: ${
          secretsRedactor(config.headers).text((error as Error).message)
        }`,
      );
    } finally {
      await connection?.close();
    }
    if (listed) {
      const fingerprints = new Map(
        Object.entries(expected ?? {}).filter(([, v]) => typeof v === "string"),
      );
      const decisions = await decideTools({
        allowlist: config.allowlist,
        listed,
        pins: parsePins(config.pins ?? [], config.allowlist),
        baseline: expected
          ? { fingerprints, since: "the fingerprints were written", running: false }
          : undefined,
        // serve-upstream's policy, then --read-only strict's.
        withhold: withholdingSecrets(
          config.headers,
          config.readOnly === "strict" ? readOnlyStrict : undefined,
        ),
      });
      for (const d of decisions) {
        const v = verdicts.get(d.name)!;
        if (d.status === "missing") {
          v.status = "missing";
          v.problems.push(
            "the upstream does not list it" +
              (d.nearest.length ? ` (nearest: ${d.nearest.join(", ")})` : ""),
          );
          continue;
        }
        v.fingerprint = d.fingerprint;
        if (d.status === "stubbed") {
          v.status = d.why;
          v.problems.push(stubWords(d));
          continue;
        }
        // The definition scan, as serve-upstream reads the tool it would list.
        const state = entryState({
          name: d.name,
          upstream: d.name,
          accept: config.accept.get(d.name),
        }, d);
        reportScan(v, state, (id) => `--accept-finding ${d.name}=${id}`);
        if (state.kind === "stubbed") {
          v.status = state.stub.why;
          continue;
        }
        v.status = "present";
        if (expected && !fingerprints.has(d.name)) {
          v.problems.push(`the fingerprints file has no entry for it`);
        }
      }
    }
  }
  const tools = [...verdicts.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0
  );
  const ok = problems.length === 0 && tools.every((t) => t.problems.length === 0);
  if (ok && config.writeFingerprints !== undefined) {
    const doc = fingerprintsDocument(
      new Map(tools.map((t) => [t.name, t.fingerprint ?? ""])),
      listed ?? [],
      config.headers,
    );
    try {
      await Deno.writeTextFile(config.writeFingerprints, JSON.stringify(doc, null, 2) + "\n");
    } catch (error) {
      problems.push(
        `--write-fingerprints ${config.writeFingerprints}: ${(error as Error).message}`,
      );
    }
  }
  return withoutSecrets({ ok: ok && problems.length === 0, tools, problems }, config.headers);
}

/**
 * The report with the header secrets taken out of every string: the nearest
 * names, a stub's words and the scan's evidence are the MCP server's words,
 * which may quote the credential weir sent it (a tool named after it).
 */
function withoutSecrets<R>(
  report: R,
  headers: Parameters<typeof secretsRedactor>[0],
  connection?: UpstreamConnection,
): R {
  return connectionSecrets(headers)(connection?.ownTokensSent ?? []).deep(report) as R;
}

/** One served tool of a guardfile that wraps an MCP server, as `lint-upstream FILE` reports it. */
export interface WrapToolVerdict extends ToolVerdict {
  /** The MCP server's tool it serves. */
  upstream: string;
}

/**
 * Check a guardfile that wraps an MCP server against the server: decide each
 * proxied tool as `weir serve FILE` does at start-up (the same host,
 * overrides and rules), with the fingerprints of `--fingerprints` as the
 * baseline; a tool is `present` when served, else `missing`, `drifted`,
 * `unservable` (its rules contradict the MCP server's schema: the problem
 * names both) or `withheld` (read-only mode). Fingerprints are of the MCP
 * server's definitions, keyed by its tool names.
 * @returns the report; never throws for a finding or an unreachable server
 */
export async function lintWrap(
  file: string,
  loaded: LoadedWrapFile,
  options: {
    fingerprints?: string;
    writeFingerprints?: string;
    /** `client-credentials`: weir's own token for the handshake and listing, as serve sends. */
    ownToken?: OwnToken;
  },
): Promise<LintUpstreamReport & { tools: WrapToolVerdict[] }> {
  const problems: string[] = [];
  if (loaded.readError) problems.push(loaded.readError);
  for (const d of loaded.diagnostics) {
    if (d.severity === "error") problems.push(formatDiagnostic(file, d));
  }
  const wrap = loaded.mcpWrap;
  if (!wrap) {
    if (problems.length === 0) {
      problems.push(
        `${file} does not wrap an MCP server (no mcp-server in its wrap): lint it with weir lint`,
      );
    }
    return { ok: false, tools: [], problems };
  }
  const verdicts: WrapToolVerdict[] = wrap.proxies.map((p) => ({
    name: p.name,
    upstream: p.upstream,
    status: "unchecked",
    problems: [],
    warnings: [],
  }));
  const expected = await readFingerprints(options.fingerprints, problems);
  const entries = entriesOf(wrap);
  const headers = headerTemplates(wrap.server.transport === "http" ? wrap.server.headers : []);
  let connection: UpstreamConnection | undefined;
  const prints = new Map<string, string>();
  let listed: ToolSpec[] = [];
  try {
    resolveHeaders(headers);
    connection = await UpstreamConnection.open(listingConnection(wrap, headers, options.ownToken));
    listed = await connection.listTools();
    const allowlist = [...new Set(entries.map((e) => e.upstream))];
    const fingerprints = new Map(
      Object.entries(expected ?? {}).filter(([, v]) => typeof v === "string"),
    );
    const decisions = await decideTools({
      allowlist,
      listed,
      baseline: expected
        ? { fingerprints, since: "the fingerprints were written", running: false }
        : undefined,
      withhold: withholdingSecrets(headers),
    });
    const present = decisions.filter((d) => d.status !== "missing");
    problems.push(...renamedOntoListed(entries, listed.map((t) => t.name)));
    for (const d of decisions) {
      if (d.status !== "missing" && d.fingerprint) prints.set(d.name, d.fingerprint);
      if (d.status === "missing") {
        for (const v of verdicts.filter((v) => v.upstream === d.name)) {
          v.status = "missing";
          v.problems.push(
            `the MCP server does not list "${d.name}"` +
              (d.nearest.length ? ` (nearest: ${d.nearest.join(", ")})` : ""),
          );
        }
      } else if (expected && !fingerprints.has(d.name) && d.status === "served") {
        for (const v of verdicts.filter((v) => v.upstream === d.name)) {
          v.problems.push(`the fingerprints file has no entry for "${d.name}"`);
        }
      }
    }
    const served = new Set(present.map((d) => d.name));
    const { UpstreamHost } = await import("./host.ts");
    const host = new UpstreamHost(present, {
      connection,
      allowlist: [...served],
      entries: entries.filter((e) => served.has(e.upstream)),
      headers,
      withhold: withholdingSecrets(headers),
      log: () => {},
      ...(wrap.surface.readOnly ? { readOnlyReason: READ_ONLY_REASON } : {}),
      schemaProfile: wrap.surface.schemaProfile,
    });
    for (const state of host.served()) {
      const v = verdicts.find((x) => x.name === state.entry.name)!;
      v.fingerprint = prints.get(state.entry.upstream);
      reportScan(v, state, (id) => `accept-finding "${id}" in proxy ${state.entry.name}`);
      if (state.kind === "stubbed") {
        v.status = state.stub.why;
        if (state.stub.why !== "flagged") v.problems.push(stubWords(state.stub));
      } else v.status = "present";
    }
    problems.push(...checkControls(wrap, host));
  } catch (error) {
    // The MCP server's error text may quote the credential weir sent it.
    const exchange = wrap.server.transport === "http" ? wrap.server.exchange : undefined;
    const ownTokenMissing = exchange?.clientCredentials !== undefined && !options.ownToken;
    problems.push(
      `MCP server: ${
        connectionRefusal(error, exchange !== undefined && !options.ownToken, ownTokenMissing) ??
          secretsRedactor(headers).text((error as Error).message)
      }`,
    );
  } finally {
    await connection?.close();
  }
  const tools = verdicts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const ok = problems.length === 0 && tools.every((t) => t.problems.length === 0);
  if (ok && options.writeFingerprints !== undefined) {
    const doc = fingerprintsDocument(prints, listed, headers);
    try {
      await Deno.writeTextFile(options.writeFingerprints, JSON.stringify(doc, null, 2) + "\n");
    } catch (error) {
      problems.push(
        `--write-fingerprints ${options.writeFingerprints}: ${(error as Error).message}`,
      );
    }
  }
  return withoutSecrets({ ok: ok && problems.length === 0, tools, problems }, headers, connection);
}

/**
 * The definition scan's words in a verdict: a problem per finding not
 * accepted (with how to accept it), a warning per warning and per
 * acceptance that matches nothing; the findings themselves for `--format json`.
 */
function reportScan(v: ToolVerdict, state: EntryState, acceptance: (id: string) => string): void {
  const scan = state.scan;
  if (!scan) return;
  for (const f of scan.errors) {
    v.problems.push(
      `${findingLine(f)}: replace the text, or accept the finding (${acceptance(f.id)})`,
    );
  }
  for (const f of scan.warnings) v.warnings.push(findingLine(f));
  for (const id of scan.unmatched) {
    v.warnings.push(
      `the accepted finding ${id} matches nothing in the tool's definition (its text changed, ` +
        `or the id is mistyped): remove the acceptance`,
    );
  }
  const all = [...scan.errors, ...scan.warnings, ...scan.accepted];
  if (all.length > 0) v.findings = all;
}
