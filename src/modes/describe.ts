/**
 * `weir describe`: the served surface of a guardfile as a person reads it,
 * or as JSON for machines. Derived from the same tool specs the server lists,
 * so what it says is what is served.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { Grant, Guardfile, ValueRules } from "../guardfile/model.ts";
import { grantInputSchema } from "../guard/tools.ts";
import { printable } from "../guardfile/diagnostics.ts";
import { grantReadsOnly } from "../guardfile/surface.ts";

/** One input of a tool, flattened for reading. */
export interface DescribedInput {
  name: string;
  /** `path`, `query`, `body`, `body map`, `graphql`, `sql $<n>`. */
  in: string;
  type: string;
  required: boolean;
  /** Bounds and other constraints in words, e.g. `1..50`, `at most 5 items`. */
  constraints: string[];
  /** Wire name when it differs (query `upstream=`, body map target). */
  sentAs?: string;
  /**
   * `allow` when the input opts out of the shell-metacharacter gate
   * (`metacharacters="allow"`); `refuse` for gated path and query values;
   * absent for body values, which are never gated.
   */
  metacharacters?: "refuse" | "allow";
}

/** One served tool. */
export interface DescribedTool {
  name: string;
  /** `proxy`: a tool of a wrapped MCP server (the guardfile form of serve-upstream). */
  kind: "grant" | "withheld" | "info" | "proxy";
  /** A proxied tool: the MCP server's name for it. */
  upstreamTool?: string;
  /** A proxied tool's `outputSchema` (its `structuredContent`), when it has one. */
  outputSchema?: JsonObject;
  /** A proxied tool's MCP Apps interface (`_meta.ui.resourceUri`), readable through weir. */
  interface?: string;
  /** A proxied tool's arguments weir supplies (`pin`), with where the value comes from; never the value. */
  pinnedArguments?: { argument: string; from: string }[];
  /**
   * A proxied tool's findings of the definition scan the file accepts
   * (`accept-finding`): the id, where in the definition, and the file's reason.
   */
  acceptedFindings?: { id: string; pointer: string; reason?: string }[];
  method?: string;
  path?: string;
  description?: string;
  inputs?: DescribedInput[];
  restrictions?: { param: string; allowed: string[] }[];
  exclusive?: string[][];
  fixedBody?: Record<string, unknown>;
  destructive?: boolean;
  /**
   * The tool changes nothing upstream: a grant `--read-only` keeps (`grantReadsOnly`: GET or
   * HEAD saying nothing else, or a sql read); a proxied tool its MCP server marks
   * `readOnlyHint` (the server's word, not weir's).
   */
  reads?: boolean;
  /** Query keys weir sets itself (`pin`), with where the value comes from; never the value. */
  pins?: { query: string; from: string }[];
  /** `cache` ttl in milliseconds. */
  cacheTtlMs?: number;
  /** An empty upstream answer is an error (`reject-empty`). */
  rejectEmpty?: boolean;
  /** Arguments refused when blank (`reject-empty-argument`). */
  rejectBlank?: string[];
  /** OAuth scopes a caller's token must all carry (empty: any valid token). */
  scopes?: string[];
  reason?: string;
  alternative?: string;
  inputSchema?: JsonObject;
  /** `extract`: what the raw answer is projected into, and its bound. */
  extract?: string;
  /** `confirm`: the question a person answers before each call runs. */
  confirm?: string;
  /** A sql grant: the statement, and whether it reads (read-only, at most maxRows) or writes. */
  sql?: { statement: string; reads: boolean; maxRows: number };
  /** A GraphQL grant: the document it sends (its variables are inputs). */
  graphql?: { document: string };
}

/** The whole surface. */
export interface Surface {
  server: string;
  file: string;
  upstream: string;
  auth: string;
  /** `database`: where sql grants connect (the source, never the DSN). */
  database?: string;
  /** The outbound `rate-limit` shared by every grant, if any; `store` says where it lives. */
  rateLimit?: { count: number; windowMs: number; store?: string };
  /** `oauth`: callers need an access token from `issuer` for `resource` (flags may override). */
  oauth?: { issuer: string; resource: string };
  tools: DescribedTool[];
}

/** Describe a loaded guardfile. */
export function describeGuardfile(guardfile: Guardfile): Surface {
  const tools: DescribedTool[] = guardfile.grants.map((g) => describeGrant(g, guardfile));
  for (const w of guardfile.withholds) {
    tools.push({ name: w.tool, kind: "withheld", reason: w.reason, alternative: w.alternative });
  }
  if (guardfile.infoTool) {
    tools.push({
      name: guardfile.infoTool,
      kind: "info",
      description: "read-only: lists what this server serves; reaches nothing upstream",
    });
  }
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const auth = guardfile.auth;
  const limit = guardfile.controls.rateLimit;
  const store = limit?.store;
  const extra: Partial<Surface> = {};
  if (guardfile.database) {
    extra.database = `${guardfile.database.driver} (PostgreSQL), DSN from ${
      sourceText(guardfile.database.dsn.chain)
    }`;
  }
  if (limit) {
    extra.rateLimit = { count: limit.count, windowMs: limit.windowMs };
    if (store) {
      extra.rateLimit.store = `shared in redis (URL from ${
        store.url.provider === "env" ? `env ${store.url.address}` : "a literal"
      }, bucket ${store.bucket ?? guardfile.name})`;
    }
  }
  return {
    server: guardfile.name,
    file: guardfile.file,
    upstream: guardfile.baseUrl === ""
      ? "none (every grant is sql)"
      : typeof guardfile.baseUrl === "string"
      ? guardfile.baseUrl
      : `resolved at call time from ${sourceText(guardfile.baseUrl.chain)}`,
    auth: auth.scheme === "none"
      ? "none"
      : auth.scheme === "header-token"
      ? `header ${auth.header} from ${sourceText(auth.value.chain)}`
      : auth.scheme === "bearer"
      ? `Authorization: Bearer from ${sourceText(auth.value.chain)}`
      : `query ${auth.params.map((p) => `${p.name} from ${sourceText(p.value.chain)}`).join(", ")}`,
    ...extra,
    ...(guardfile.oauth
      ? { oauth: { issuer: guardfile.oauth.issuer, resource: guardfile.oauth.resource } }
      : {}),
    tools,
  };
}

function sourceText(chain: { provider: string; address: string }[]): string {
  return chain.map((c) => (c.provider === "literal" ? "a literal" : `${c.provider} ${c.address}`))
    .join(", else ");
}

function describeGrant(grant: Grant, guardfile: Guardfile): DescribedTool {
  const inputs: DescribedInput[] = [];
  for (const p of grant.params) {
    const constraints = [
      p.slashes === "refuse"
        ? "one segment"
        : p.slashes === "segments"
        ? "relative path of segments"
        : "one segment, / sent as %2F",
      ...bounds(p.minimum, p.maximum),
      // A path value is never empty: its least length is 1.
      ...ruleWords(p.type === "string" && p.maxLength !== undefined ? { minLength: 1, ...p } : p),
      ...(p.type === "string" && p.metacharacters === "allow" ? ["metacharacters allowed"] : []),
    ];
    inputs.push({
      name: p.name,
      in: "path",
      type: p.type,
      required: true,
      constraints,
      ...(p.type === "string" ? { metacharacters: p.metacharacters } : {}),
    });
  }
  for (const q of grant.query) {
    const constraints: string[] = [...bounds(q.minimum, q.maximum)];
    if (q.minItems !== undefined) constraints.push(`at least ${q.minItems} items`);
    if (q.maxItems !== undefined) constraints.push(`at most ${q.maxItems} items`);
    constraints.push(...ruleWords(q));
    if (q.metacharacters === "allow") constraints.push("metacharacters allowed");
    inputs.push({
      name: q.name,
      in: "query",
      type: q.kind === "array" ? `${q.type}[]` : q.type,
      required: q.required,
      constraints,
      ...(q.wire !== q.name ? { sentAs: q.wire } : {}),
      metacharacters: q.metacharacters,
    });
  }
  const walk = (fields: Grant["body"], prefix: string) => {
    for (const f of fields) {
      const name = prefix + f.name;
      const type = f.type === "array"
        ? (f.raw ? "array (any)" : `${f.items ?? "string"}[]`)
        : f.raw
        ? "object (any)"
        : f.type;
      inputs.push({ name, in: "body", type, required: f.required, constraints: ruleWords(f) });
      if (f.fields) walk(f.fields, `${name}.`);
    }
  };
  walk(grant.body, "");
  for (const m of grant.bodyMap) {
    inputs.push({
      name: m.source.join("."),
      in: "body map",
      type: "string",
      required: true,
      constraints: [],
      sentAs: m.target,
    });
  }
  for (const v of grant.graphql?.variables ?? []) {
    inputs.push({ name: v, in: "graphql", type: "any", required: false, constraints: [] });
  }
  grant.sql?.params.forEach((p, i) => {
    inputs.push({
      name: p.name,
      in: `sql $${i + 1}`,
      type: p.type,
      required: p.required,
      constraints: [],
    });
  });
  const restrictions = guardfile.restricts
    .filter((r) => grant.pathParams.includes(r.param))
    .map((r) => ({ param: r.param, allowed: r.globs }));
  const tool: DescribedTool = {
    name: grant.tool,
    kind: "grant",
    method: grant.method,
    path: grant.path,
    description: grant.describe,
    inputs,
    restrictions,
    destructive: grant.destructive,
    reads: grantReadsOnly(grant),
    scopes: grant.scopes,
    inputSchema: grantInputSchema(grant, guardfile.restricts),
  };
  if (grant.exclusive.length > 0) tool.exclusive = grant.exclusive;
  if (grant.set) tool.fixedBody = grant.set;
  const controls = guardfile.controls;
  const pins = controls.pins[grant.tool];
  if (pins) {
    tool.pins = pins.map((p) => ({
      query: p.name,
      from: sourceText(p.source.chain) +
        (p.fromQuery ? ` (its query parameter ${p.fromQuery})` : ""),
    }));
  }
  if (controls.cache[grant.tool] !== undefined) tool.cacheTtlMs = controls.cache[grant.tool];
  if (controls.rejectEmpty.includes(grant.tool)) tool.rejectEmpty = true;
  const blank = controls.rejectEmptyArguments[grant.tool];
  if (blank) tool.rejectBlank = blank;
  const extraction = guardfile.controls.extract[grant.tool];
  if (extraction) {
    tool.extract = extraction.as === "pdf-text"
      ? `PDF text, first ${extraction.max} pages`
      : `feed entries, first ${extraction.max}`;
  }
  if (Object.hasOwn(guardfile.controls.confirm, grant.tool)) {
    tool.confirm = guardfile.controls.confirm[grant.tool];
  }
  if (grant.graphql) tool.graphql = { document: grant.graphql.document };
  if (grant.sql) {
    const { statement, reads, maxRows } = grant.sql;
    tool.sql = { statement, reads, maxRows };
    delete tool.method;
    delete tool.path;
  }
  return tool;
}

function bounds(min: number | undefined, max: number | undefined): string[] {
  return min === undefined && max === undefined ? [] : [`${min ?? "-inf"}..${max ?? "inf"}`];
}

/** Value rules in words: `pattern ^[a-z]+$`, `length 1..40`, `one of "open", "closed"`. */
function ruleWords(rules: ValueRules): string[] {
  const out: string[] = [];
  if (rules.pattern !== undefined) out.push(`pattern ${rules.pattern}`);
  if (rules.minLength !== undefined || rules.maxLength !== undefined) {
    out.push(`length ${rules.minLength ?? 0}..${rules.maxLength ?? "inf"}`);
  }
  if (rules.enum) out.push(`one of ${rules.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  return out;
}

/** The surface as text. */
export function describeText(surface: Surface): string {
  const lines = [
    `server ${surface.server} (${surface.file})`,
    `upstream ${surface.upstream}`,
    `auth ${surface.auth}`,
    ...(surface.database ? [`database ${surface.database}`] : []),
    ...(surface.oauth
      ? [`oauth tokens from ${surface.oauth.issuer} for ${surface.oauth.resource}`]
      : []),
    ...(surface.rateLimit
      ? [
        `rate-limit ${surface.rateLimit.count} per ${surface.rateLimit.windowMs} ms (all grants)` +
        (surface.rateLimit.store ? `, ${surface.rateLimit.store}` : ""),
      ]
      : []),
    "",
  ];
  for (const t of surface.tools) {
    if (t.kind === "withheld") {
      lines.push(`${t.name}  WITHHELD`);
      lines.push(`  reason: ${t.reason}`);
      if (t.alternative) lines.push(`  instead: ${t.alternative}`);
    } else if (t.kind === "info") {
      lines.push(`${t.name}  (info tool)`, `  ${t.description}`);
    } else if (t.kind === "proxy") {
      lines.push(
        `${t.name}  MCP tool ${t.upstreamTool}${t.destructive ? "  [destructive]" : ""}`,
      );
      if (t.confirm) lines.push(`  confirm first: ${t.confirm}`);
      if (t.description) lines.push(`  ${t.description.replace(/\s+/g, " ").trim()}`);
      if (t.scopes?.length) lines.push(`  needs scope ${t.scopes.join(" ")}`);
      for (const i of t.inputs ?? []) {
        const extra = [
          i.required ? "required" : "optional",
          ...i.constraints,
          ...(i.sentAs ? [`sent as ${i.sentAs}`] : []),
        ];
        lines.push(`  argument ${i.name}: ${i.type} (${extra.join(", ")})`);
      }
      for (const p of t.pinnedArguments ?? []) {
        lines.push(`  pinned argument ${p.argument} from ${p.from}`);
      }
      for (const f of t.acceptedFindings ?? []) {
        lines.push(
          `  accepted finding ${f.id} in ${f.pointer}${f.reason ? `: ${f.reason}` : ""}`,
        );
      }
      if (t.interface) lines.push(`  interface ${t.interface}`);
      if (t.cacheTtlMs !== undefined) lines.push(`  cached for ${t.cacheTtlMs} ms`);
      if (t.rejectEmpty) lines.push(`  an empty answer is an error (reject-empty)`);
      if (t.rejectBlank) lines.push(`  refused when blank: ${t.rejectBlank.join(", ")}`);
    } else {
      const what = t.sql
        ? (t.sql.reads
          ? `SQL read (read-only transaction, at most ${t.sql.maxRows} rows)`
          : "SQL write (returns rows_affected)")
        : `${t.method} ${t.path}`;
      lines.push(`${t.name}  ${what}${t.destructive ? "  [destructive]" : ""}`);
      if (t.confirm) lines.push(`  confirm first: ${t.confirm}`);
      if (t.extract) lines.push(`  extract: ${t.extract}`);
      if (t.sql) lines.push(`  statement: ${t.sql.statement.replace(/\s+/g, " ").trim()}`);
      if (t.graphql) {
        lines.push(`  graphql document: ${t.graphql.document.replace(/\s+/g, " ").trim()}`);
      }
      if (t.description) lines.push(`  ${t.description}`);
      if (t.scopes?.length) lines.push(`  needs scope ${t.scopes.join(" ")}`);
      for (const i of t.inputs ?? []) {
        const extra = [
          i.required ? "required" : "optional",
          ...i.constraints,
          ...(i.sentAs ? [`sent as ${i.sentAs}`] : []),
        ];
        lines.push(`  ${i.in.padEnd(8)} ${i.name}: ${i.type} (${extra.join(", ")})`);
      }
      for (const r of t.restrictions ?? []) {
        lines.push(
          `  restrict ${r.param} matches ${r.allowed.map((g) => JSON.stringify(g)).join(" ")}`,
        );
      }
      for (const g of t.exclusive ?? []) lines.push(`  at most one of: ${g.join(", ")}`);
      if (t.fixedBody) lines.push(`  body is always ${JSON.stringify(t.fixedBody)}`);
      for (const p of t.pins ?? []) lines.push(`  pinned query ${p.query} from ${p.from}`);
      if (t.cacheTtlMs !== undefined) lines.push(`  cached for ${t.cacheTtlMs} ms`);
      if (t.rejectEmpty) lines.push(`  an empty answer is an error (reject-empty)`);
      if (t.rejectBlank) lines.push(`  refused when blank: ${t.rejectBlank.join(", ")}`);
    }
    lines.push("");
  }
  return lines.map(printable).join("\n").trimEnd();
}
