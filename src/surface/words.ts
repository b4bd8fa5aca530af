/**
 * The surface model's values in words, for `weir describe` and `weir diff`:
 * where a value comes from (never a literal's text), what a tool sends, a
 * credential, a rate limit's state. Pure.
 *
 * @module
 */
import { CONCEALED_TEXT } from "./concealed.ts";
import type {
  Credential,
  ExchangeCredential,
  Operation,
  RateLimitSurface,
  RateState,
  SentValue,
  SourceStep,
  Surface,
  Upstream,
} from "./model.ts";

/** Sources in words: `env GITHUB_TOKEN, else a literal`. */
export function sourceWords(chain: readonly SourceStep[]): string {
  return chain.map((c) => ("literal" in c ? "a literal" : `${c.provider} ${c.address}`)).join(
    ", else ",
  );
}

/** A sent value in words: the text when it is shown, else where it is read. */
export function sentWords(value: SentValue | undefined): string {
  if (value === undefined) return "none";
  return "shown" in value ? value.shown : `resolved at call time from ${sourceWords(value.from)}`;
}

/** Where the upstream is, in words. */
export function upstreamWords(upstream: Upstream | undefined): string {
  if (upstream === undefined) return "none";
  switch (upstream.kind) {
    case "http":
      return sentWords(upstream.baseUrl);
    case "none":
      return "none";
    case "mcp-http":
      return `MCP server ${upstream.endpoint} (Streamable HTTP)`;
    case "mcp-stdio":
      return `MCP server "${[upstream.command, ...upstream.args].join(" ")}" (stdio)`;
    case "aws":
      return `AWS ${upstream.service} in ${upstream.region}: ${upstream.endpoint}`;
  }
}

/** One credential in words: `Authorization: Bearer from env X`. */
export function credentialWords(c: Credential): string {
  if (c.exchange) return exchangeWords(c, c.exchange);
  return `${c.sentAs}${c.prefix ? ` (prefix "${c.prefix}")` : ""} from ${
    "shown" in c.value ? CONCEALED_TEXT : sourceWords(c.value.from)
  }`;
}

/**
 * A token exchange in words: `Authorization: Bearer exchanged per caller
 * (RFC 8693) for audience X, scopes of each tool, client weir
 * (client_secret_basic secret from env S)`.
 */
function exchangeWords(c: Credential, e: ExchangeCredential): string {
  const upstream = [
    e.audience && `audience ${e.audience}`,
    e.resource && `resource ${e.resource}`,
  ].filter(Boolean).join(", ");
  const secret = "shown" in c.value ? CONCEALED_TEXT : sourceWords(c.value.from);
  const how = e.method === "private_key_jwt"
    ? `private_key_jwt${e.alg ? ` ${e.alg}` : ""} key from ${secret}`
    : `${e.method} secret from ${secret}`;
  return `${c.sentAs} exchanged per caller (RFC 8693) for ${upstream}` +
    `, scopes ${e.scopes ? e.scopes.join(" ") : "of each tool"}` +
    (e.subjectTokenType ? `, subject token type ${e.subjectTokenType}` : "") +
    `, client ${e.clientId} (${how})` +
    (e.tokenEndpoint ? ` at ${e.tokenEndpoint}` : "") +
    (e.clientCredentials
      ? `; weir's own requests (handshake, listings) with its own token (client credentials` +
        `${
          e.clientCredentials.scopes.length > 0
            ? `, scopes ${e.clientCredentials.scopes.join(" ")}`
            : ""
        })`
      : "");
}

/**
 * How callers' OAuth tokens are checked, beyond issuer and resource:
 * `profile entra, audience api://...` (empty for a generic profile with no audience).
 */
export function oauthProfileWords(o: { profile?: string; audience?: string }): string {
  return [o.profile && `profile ${o.profile}`, o.audience && `audience ${o.audience}`]
    .filter(Boolean).join(", ");
}

/** How weir authenticates upstream, in words (`none` when it sends no credential). */
export function authWords(surface: Pick<Surface, "credentials" | "upstream">): string {
  if (surface.credentials.length === 0) {
    return surface.upstream.kind === "mcp-stdio"
      ? "none sent by weir (a stdio MCP server reads its own credentials from the environment)"
      : "none";
  }
  return surface.credentials.map(credentialWords).join("; ");
}

/** What a tool sends, in words: `GET /items/{id}`, `sql read: SELECT ...`, `MCP tool echo`. */
export function operationWords(op: Operation | undefined, reads?: boolean): string {
  if (op === undefined) return "nothing";
  switch (op.kind) {
    case "http":
      return op.form
        ? `${op.method} ${op.path} (form body, arrays=${op.form.arrays})`
        : `${op.method} ${op.path}`;
    case "graphql":
      return `${op.method} ${op.path} (graphql)`;
    case "sql":
      return reads === undefined
        ? `sql: ${oneLine(op.statement)}`
        : `sql ${reads ? "read" : "write"}: ${oneLine(op.statement)}`;
    case "mcp":
      return `MCP tool ${op.tool}`;
    case "aws":
      return `${op.action} ${op.scope}`;
  }
}

/**
 * A sql grant's kind in words, for describe and the review page: a read
 * (proven, or on the guardfile's word), one named as a read that runs
 * read-only but is not proven to read, or a write.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sqlKindWords } from "./words.ts";
 * const op = { kind: "sql" as const, statement: "SELECT report()", maxRows: 50, readOnlyTransaction: true };
 * assert.equal(sqlKindWords(op, false), "SQL, not proven to read (read-only transaction, at most 50 rows)");
 * ```
 */
export function sqlKindWords(op: Extract<Operation, { kind: "sql" }>, reads: boolean): string {
  if (!op.readOnlyTransaction) return "SQL write (returns rows_affected)";
  const how = `read-only transaction, at most ${op.maxRows} rows`;
  return reads ? `SQL read (${how})` : `SQL, not proven to read (${how})`;
}

/** A rate limit in words: `60 per 60000 ms`. */
export function rateWords(r: Pick<RateLimitSurface, "count" | "windowMs">): string {
  return `${r.count} per ${r.windowMs} ms`;
}

/** Where a rate limit's state lives, in words. */
export function rateStateWords(state: RateState | undefined): string {
  if (state === undefined || state.where === "process") {
    return "in each process (N replicas allow N times the calls)";
  }
  return `shared in redis (URL from ${
    sentWords(state.url).replace(/^resolved at call time from /, "")
  }, bucket ${state.bucket})`;
}

/** Whitespace runs as one space, trimmed. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
