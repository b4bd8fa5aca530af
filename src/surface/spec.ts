/**
 * The surface model of a spec-mode guardfile (grants of an HTTP API or a
 * database): {@link surfaceOfGuardfile}. Reads only the checked model the
 * one loader gives (src/guardfile/load.ts) and the input schemas the guard
 * advertises (src/surface/input_schema.ts), so what it says is what is
 * served. Pure.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import {
  type Auth,
  type Grant,
  type Guardfile,
  HEADER_VALUE_MAX_LENGTH,
  type InboundToken,
  type OAuthSetting,
  type PromptTemplate,
  type RateLimit,
  type StaticResource,
  type SurfaceSettings,
  type TokenExchangeSetting,
  type ValueRules,
  type ValueSource,
} from "../guardfile/model.ts";
import { forTool } from "../guardfile/model.ts";
import { grantAccess } from "../guardfile/reads.ts";
import { Concealed } from "./concealed.ts";
import { grantInputSchema } from "./input_schema.ts";
import type {
  Argument,
  ArgumentRules,
  Callers,
  Credential,
  Operation,
  RateLimitSurface,
  SentValue,
  SettingsSurface,
  SourceStep,
  Surface,
  Texts,
  Tool,
  ToolControls,
} from "./model.ts";

/** The text the info tool is described with in every form. */
export const INFO_TOOL_WORDS = "read-only: lists what this server serves; reaches nothing upstream";

/**
 * What an agent can do with a spec-mode guardfile.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseGuardfile } from "../guardfile/load.ts";
 * import { surfaceOfGuardfile } from "./spec.ts";
 * const { guardfile } = parseGuardfile(
 *   `wrap ward mcp t {\n  base-url "https://api.example"\n  auth none\n  can get item { path "/items/{id}" }\n}`,
 *   "t.mcp.kdl",
 * );
 * const surface = surfaceOfGuardfile(guardfile!);
 * const tool = surface.tools.find((t) => t.name === "get_item")!;
 * assert.ok(tool.access.reads);
 * assert.equal(tool.arguments[0].encoding?.slashes, "refuse");
 * ```
 */
export function surfaceOfGuardfile(guardfile: Guardfile): Surface {
  const tools: Tool[] = guardfile.grants.map((g) => grantSurface(g, guardfile));
  for (const w of guardfile.withholds) tools.push(withheldSurface(w.tool, w.reason, w.alternative));
  if (guardfile.infoTool) tools.push(infoSurface(guardfile.infoTool));
  sortByName(tools);
  const surface: Surface = {
    form: "spec",
    server: guardfile.name,
    file: guardfile.file,
    upstream: guardfile.baseUrl === ""
      ? { kind: "none" }
      : { kind: "http", baseUrl: sentValue(guardfile.baseUrl) },
    credentials: credentialsOf(guardfile.auth),
    headers: guardfile.headers.map(([name, text]) => ({
      name: name.toLowerCase(),
      text: new Concealed(text),
    })),
    callers: callersOf(guardfile.inboundTokens ?? [], guardfile.oauth),
    settings: settingsOf(guardfile.surface),
    texts: textsOf(guardfile),
    readableResources: [],
    tools,
  };
  if (guardfile.database) {
    surface.database = {
      driver: guardfile.database.driver,
      dsn: sourceSteps(guardfile.database.dsn),
    };
  }
  const limit = rateLimitOf(guardfile.controls.rateLimit, guardfile.name);
  if (limit) surface.rateLimit = limit;
  return surface;
}

/** A withheld stub's surface. */
export function withheldSurface(name: string, reason: string, alternative?: string): Tool {
  return {
    ...emptyTool(name, "withheld"),
    access: { reads: true, why: "a withheld stub refuses every call and reaches nothing" },
    withheld: alternative === undefined ? { reason } : { reason, alternative },
  };
}

/** The info tool's surface. */
export function infoSurface(name: string): Tool {
  return {
    ...emptyTool(name, "info"),
    access: { reads: true, why: "the info tool reaches nothing upstream" },
    description: INFO_TOOL_WORDS,
  };
}

/** A tool with nothing in it yet. */
export function emptyTool(name: string, kind: Tool["kind"]): Tool {
  return {
    name,
    kind,
    access: { reads: false, why: "" },
    destructive: false,
    arguments: [],
    exclusive: [],
    pins: [],
    controls: { rejectEmpty: false, rejectBlank: [], rawResponse: false },
    scopes: [],
    acceptedFindings: [],
  };
}

/** Sort tools (or anything named) by name, in place. */
export function sortByName<T extends { name: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A guardfile's `ValueSource` as source steps (literals concealed). */
export function sourceSteps(source: ValueSource): SourceStep[] {
  return source.chain.map((c) =>
    c.provider === "literal"
      ? { provider: "literal", literal: new Concealed(c.address) }
      : { provider: c.provider, address: c.address }
  );
}

function sentValue(value: string | ValueSource): SentValue {
  return typeof value === "string" ? { shown: value } : { from: sourceSteps(value) };
}

function credentialsOf(auth: Auth): Credential[] {
  switch (auth.scheme) {
    case "none":
      return [];
    case "bearer":
      return [{
        scheme: "bearer",
        sentAs: "Authorization: Bearer",
        prefix: "",
        value: { from: sourceSteps(auth.value) },
      }];
    case "header-token":
      return [{
        scheme: "header-token",
        sentAs: `header ${auth.header}`,
        prefix: auth.prefix,
        value: { from: sourceSteps(auth.value) },
      }];
    case "query-param":
      return auth.params.map((p) => ({
        scheme: "query-param",
        sentAs: `query ${p.name}`,
        prefix: "",
        value: { from: sourceSteps(p.value) },
      }));
    case "token-exchange":
      return [exchangeCredential(auth.exchange)];
  }
}

/** A token exchange as a credential: weir's own secret or key, and what it asks for. */
export function exchangeCredential(setting: TokenExchangeSetting): Credential {
  const c = setting.client;
  return {
    scheme: "token-exchange",
    sentAs: "Authorization: Bearer",
    prefix: "",
    value: { from: sourceSteps(c.method === "private_key_jwt" ? c.key : c.secret) },
    exchange: {
      ...(setting.audience === undefined ? {} : { audience: setting.audience }),
      ...(setting.resource === undefined ? {} : { resource: setting.resource }),
      ...(setting.scopes === undefined ? {} : { scopes: [...setting.scopes] }),
      ...(setting.tokenEndpoint === undefined ? {} : { tokenEndpoint: setting.tokenEndpoint }),
      ...(setting.subjectTokenType === undefined
        ? {}
        : { subjectTokenType: setting.subjectTokenType }),
      clientId: setting.clientId,
      method: c.method,
      ...(c.method === "private_key_jwt" && c.alg !== undefined ? { alg: c.alg } : {}),
      ...(setting.clientCredentials
        ? { clientCredentials: { scopes: [...setting.clientCredentials.scopes] } }
        : {}),
    },
  };
}

/** Who may call: the inbound tokens and OAuth of a guardfile of any form. */
export function callersOf(tokens: InboundToken[], oauth: OAuthSetting | undefined): Callers {
  const callers: Callers = {
    inboundTokens: sortByName(tokens.map((t) => ({
      name: t.name,
      token: sourceSteps(t.source),
      tools: [...t.tools].sort(),
    }))),
  };
  if (oauth) {
    callers.oauth = {
      issuer: oauth.issuer,
      resource: oauth.resource,
      ...(oauth.profile === undefined ? {} : { profile: oauth.profile }),
      ...(oauth.audience === undefined ? {} : { audience: oauth.audience }),
    };
  }
  return callers;
}

/** A `rate-limit` and where its state lives. */
export function rateLimitOf(
  limit: RateLimit | undefined,
  server: string,
): RateLimitSurface | undefined {
  if (!limit) return undefined;
  const store = limit.store;
  return {
    count: limit.count,
    windowMs: limit.windowMs,
    state: store
      ? {
        where: "redis",
        url: store.url.provider === "literal"
          ? { from: [{ provider: "literal", literal: new Concealed(store.url.address) }] }
          : { from: [{ provider: store.url.provider, address: store.url.address }] },
        bucket: store.bucket ?? server,
      }
      : { where: "process" },
  };
}

/** The `surface` node's settings, with the defaults said. */
export function settingsOf(settings: SurfaceSettings): SettingsSurface {
  const out: SettingsSurface = {
    readOnly: settings.readOnly === true,
    schemaProfile: settings.schemaProfile ?? "full",
  };
  if (settings.maxTokens !== undefined) out.maxTokens = settings.maxTokens;
  if (settings.maxToolTokens !== undefined) out.maxToolTokens = settings.maxToolTokens;
  return out;
}

/** Instructions, resources, prompts and icons of a guardfile of any form. */
export function textsOf(file: {
  instructions?: string;
  resources: StaticResource[];
  prompts: PromptTemplate[];
  icons: { src: string }[];
}): Texts {
  const json = (v: unknown) => JSON.stringify(v, (k, x) => (k === "position" ? undefined : x));
  const texts: Texts = {
    resources: sortByName(file.resources.map((r) => ({ name: r.name, content: json(r) }))),
    prompts: sortByName(file.prompts.map((p) => ({ name: p.name, content: json(p) }))),
    icons: file.icons.map((i) => i.src),
  };
  if (file.instructions !== undefined) texts.instructions = file.instructions;
  return texts;
}

function sqlOperation(sql: NonNullable<Grant["sql"]>): Operation {
  const op: Operation = {
    kind: "sql",
    statement: sql.statement,
    maxRows: sql.maxRows,
    readOnlyTransaction: sql.reads,
  };
  if (sql.onlyReads?.length) op.onlyReads = [...sql.onlyReads].sort();
  return op;
}

function grantSurface(grant: Grant, guardfile: Guardfile): Tool {
  const tool = emptyTool(grant.tool, "grant");
  tool.access = grantAccess(grant);
  tool.operation = grant.sql
    ? sqlOperation(grant.sql)
    : grant.graphql
    ? { kind: "graphql", method: grant.method, path: grant.path, document: grant.graphql.document }
    : grant.form
    ? { kind: "http", method: grant.method, path: grant.path, form: { ...grant.form } }
    : { kind: "http", method: grant.method, path: grant.path };
  tool.destructive = grant.destructive;
  // As the grant's listing says them (src/guard/tools.ts grantTool).
  tool.hints = {
    idempotent: tool.access.reads ||
      (!grant.sql && (grant.method === "PUT" || grant.method === "DELETE")),
    openWorld: true,
  };
  if (grant.describe !== undefined) tool.description = grant.describe;
  tool.inputSchema = grantInputSchema(grant, guardfile.restricts);
  tool.arguments = grantArguments(grant, guardfile, tool.inputSchema);
  tool.exclusive = grant.exclusive.map((g) => [...g]);
  if (grant.set) tool.fixedBody = structuredClone(grant.set) as Tool["fixedBody"];
  tool.scopes = [...grant.scopes];
  const controls = guardfile.controls;
  tool.pins = (forTool(controls.pins, grant.tool) ?? []).map((p) => {
    const pin: Tool["pins"][number] = {
      name: p.name,
      in: "query",
      value: { from: sourceSteps(p.source) },
      // A from="query:<p>" pin reads a URL-valued secret: always redacted.
      secret: p.secret === true || p.fromQuery !== undefined,
    };
    if (p.fromQuery !== undefined) pin.fromQuery = p.fromQuery;
    return pin;
  });
  const c: ToolControls = {
    rejectEmpty: controls.rejectEmpty.includes(grant.tool),
    rejectBlank: [...(forTool(controls.rejectEmptyArguments, grant.tool) ?? [])].sort(),
    rawResponse: grant.rawResponse,
  };
  if (Object.hasOwn(controls.confirm, grant.tool)) c.confirm = controls.confirm[grant.tool];
  const ttl = forTool(controls.cache, grant.tool);
  if (ttl !== undefined) c.cacheTtlMs = ttl;
  const extraction = forTool(controls.extract, grant.tool);
  if (extraction) c.extract = { as: extraction.as, max: extraction.max };
  if (grant.failWhen !== undefined) c.failWhen = grant.failWhen;
  tool.controls = c;
  return tool;
}

/** Value rules as the model holds them. */
export function rulesOf(
  rules: ValueRules & { minimum?: number; maximum?: number; minItems?: number; maxItems?: number },
): ArgumentRules {
  const out: ArgumentRules = {};
  for (
    const key of [
      "minimum",
      "maximum",
      "minLength",
      "maxLength",
      "minItems",
      "maxItems",
      "pattern",
    ] as const
  ) {
    if (rules[key] !== undefined) (out as Record<string, unknown>)[key] = rules[key];
  }
  if (rules.enum) out.enum = [...rules.enum];
  return out;
}

function grantArguments(grant: Grant, guardfile: Guardfile, schema: JsonObject): Argument[] {
  const out: Argument[] = [];
  // An untyped input admits integers only when its string rules let decimal text through:
  // its type is the advertised schema's (src/surface/untyped.ts).
  const properties = schema.properties as Record<string, JsonObject>;
  const untyped = (name: string) => {
    const t = properties[name]?.type;
    const types = (Array.isArray(t) ? t : [t]).filter((x) => x !== "null");
    return types.join("|");
  };
  for (const p of grant.params) {
    // A path value is never empty: its least length is 1.
    const rules = rulesOf(p);
    if (p.type === "string") rules.minLength = Math.max(rules.minLength ?? 0, 1);
    out.push({
      name: p.name,
      in: "path",
      sentAs: p.name,
      type: p.untyped ? untyped(p.name) : p.type,
      required: true,
      rules,
      restrict: guardfile.restricts.filter((r) => r.param === p.name).map((r) => [...r.globs]),
      encoding: { slashes: p.slashes, metacharacters: p.metacharacters },
      served: true,
    });
  }
  for (const q of grant.query) {
    out.push({
      name: q.name,
      in: "query",
      sentAs: q.wire,
      type: q.kind === "array" ? `${q.type}[]` : q.untyped ? untyped(q.name) : q.type,
      required: q.required,
      rules: rulesOf(q),
      restrict: [],
      encoding: { metacharacters: q.metacharacters },
      served: true,
    });
  }
  for (const h of grant.headers) {
    // A header value is never empty: its least length is 1 (and at most 1024).
    const rules = rulesOf(h);
    if (h.type === "string") {
      rules.minLength = Math.max(rules.minLength ?? 0, 1);
      rules.maxLength = Math.min(
        rules.maxLength ?? HEADER_VALUE_MAX_LENGTH,
        HEADER_VALUE_MAX_LENGTH,
      );
    }
    out.push({
      name: h.name,
      in: "header",
      sentAs: h.wire,
      type: h.type,
      required: h.required,
      rules,
      restrict: [],
      encoding: { metacharacters: h.metacharacters },
      served: true,
    });
  }
  const walk = (fields: Grant["body"], prefix: string) => {
    for (const f of fields) {
      const name = prefix + f.name;
      const type = f.type === "array"
        ? (f.raw ? "array (any)" : `${f.items ?? "string"}[]`)
        : f.raw
        ? "object (any)"
        : f.untyped && prefix === ""
        ? untyped(name)
        : f.type;
      out.push({
        name,
        in: "body",
        sentAs: name,
        type,
        required: f.required,
        rules: rulesOf(f),
        restrict: [],
        served: true,
      });
      if (f.fields) walk(f.fields, `${name}.`);
    }
  };
  walk(grant.body, "");
  for (const m of grant.bodyMap) {
    out.push({
      name: m.source.join("."),
      in: "body map",
      sentAs: m.target,
      type: "string",
      required: true,
      rules: {},
      restrict: [],
      served: true,
    });
  }
  for (const v of grant.graphql?.variables ?? []) {
    out.push({
      name: v,
      in: "graphql",
      sentAs: v,
      type: "any",
      required: false,
      rules: {},
      restrict: [],
      served: true,
    });
  }
  grant.sql?.params.forEach((p, i) => {
    out.push({
      name: p.name,
      in: "sql",
      sentAs: `$${i + 1}`,
      type: p.untyped ? untyped(p.name) : p.type,
      required: p.required,
      rules: {},
      restrict: [],
      served: true,
    });
  });
  return out;
}
