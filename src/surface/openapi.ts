/**
 * `weir describe --format openapi`: the HTTP tool API of a served surface as
 * an OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0).
 *
 * One operation per served tool, `POST /api/<tool>`, whose request body schema
 * is the tool's input schema exactly as the server lists and enforces it
 * (JSON Schema 2020-12, OpenAPI 3.1's default dialect), and whose responses
 * are the statuses that route can answer (see `src/transport/tool_api.ts` and
 * the guard's refusals): 200 with the `CallToolResult`; 400 arguments refused
 * by the schema (or a body that is not one JSON object); 401 no valid OAuth
 * access token (with `--oauth-issuer`); 403 refused by policy, withheld, by the
 * inbound checks, or an OAuth token without the operation's scopes (listed in
 * its `security` and `x-weir.scopes`); 413 body too large; 415 not JSON; 429
 * rate-limited (only with a `rate-limit`); 500 a credential unset or refused;
 * 502 an upstream failure; 503 shutting down or the rate-limit store
 * unavailable; 504 the upstream deadline. Withheld stubs are `deprecated: true`
 * with their reason; a `confirm`-gated grant lists no 200 (the tool API cannot
 * ask a person, so it always refuses with 403). What `describe` knows beyond the schema (upstream method
 * and path, restrictions, pins, cache, fixed bodies, sql statements, confirm
 * messages, extraction, the gate opt-outs) is carried in `x-weir` extensions. Schemas are written inline (no
 * `$ref`), so each one can be validated on its own.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { Surface, Tool } from "./model.ts";
import {
  authWords,
  operationWords,
  rateStateWords,
  rateWords,
  sourceWords,
  upstreamWords,
} from "./words.ts";

/** What the caller knows that a {@link Surface} does not carry. */
export interface OpenApiOptions {
  /** weir's version, for `info.version`. */
  version: string;
  /** Output schema per tool name (the `structuredContent` of a 200), when the tool has one. */
  outputSchemas?: Record<string, JsonObject>;
  /** The guardfile names `inbound-token` callers: a bearer token is required. */
  inboundTokens?: boolean;
}

const STATUS_TEXT: Record<number, string> = {
  200: "The tool's result (CallToolResult).",
  400: "Refused before any upstream request: the body is not one JSON object, or the arguments " +
    "do not match the input schema (the message names the argument), or a blank argument.",
  401: "No valid access token, when weir serves as an OAuth resource server (--oauth-issuer): " +
    "WWW-Authenticate names the protected resource metadata and the scopes. Nothing was sent " +
    "upstream.",
  403: "Refused: by this server's policy (policy_denied: restrict, the metacharacter gate, " +
    "path rules), withheld (verb_withheld), by the inbound checks (Origin, Host, token), or an " +
    "OAuth token without the operation's scopes (insufficient_scope). Nothing was sent upstream.",
  404: "No tool of that name (or a path that names more than one segment).",
  405: "Not POST.",
  406: "The Accept header refuses application/json (RFC 9110 section 12.5.1).",
  408: "The request body did not arrive within the body deadline.",
  413: "The request body is larger than the server accepts.",
  415: "The request is not Content-Type: application/json.",
  429: "Rate-limited: no token of the shared rate limit became free before the deadline.",
  500: "The upstream credential or setting is unavailable (an unset variable, an unreadable " +
    "file, a credential too short to redact).",
  502: "The upstream failed: an error status, a redirect (never followed), a body that is not " +
    "JSON, fail-when matched, or an empty answer refused by reject-empty.",
  503: "The server is shutting down, or the shared rate-limit store is unavailable.",
  504: "The upstream did not answer before the deadline.",
};

const CONTENT: JsonObject = {
  type: "array",
  items: {
    type: "object",
    properties: { type: { type: "string" }, text: { type: "string" } },
    required: ["type"],
  },
};

const CALL_TOOL_RESULT: JsonObject = {
  type: "object",
  description: "An MCP CallToolResult.",
  properties: {
    content: CONTENT,
    structuredContent: { type: "object" },
    isError: { type: "boolean" },
  },
  required: ["content"],
};

const ERROR_BODY: JsonObject = {
  description: "Every answer of the tool API is a CallToolResult; a failure is an error result " +
    "(isError: true: the tool's own error result, or the message as one text block) that also " +
    "carries error: {code, message, status}, where code names the rule or the kind of failure " +
    "and message says what happened and what to do.",
  type: "object",
  properties: {
    content: CONTENT,
    isError: { const: true },
    structuredContent: { type: "object" },
    error: {
      type: "object",
      properties: {
        code: { type: "string", pattern: "^[a-z][a-z0-9_]*$" },
        message: { type: "string" },
        status: { type: "integer" },
      },
      required: ["code", "message", "status"],
    },
  },
  required: ["content", "isError", "error"],
};

/** The inbound and framing statuses every route can answer. */
const ALWAYS = [400, 401, 403, 405, 406, 408, 413, 415, 503];

/** The statuses one tool's route can answer. */
export function toolStatuses(tool: Tool, surface: Surface): number[] {
  if (tool.kind === "withheld") return ALWAYS;
  if (tool.kind === "info") return [200, ...ALWAYS];
  // A confirm-gated grant never runs over the tool API: nobody there can say yes.
  if (tool.controls.confirm !== undefined) return ALWAYS;
  const statuses = [200, ...ALWAYS, 500, 502, 504];
  if (surface.rateLimit) statuses.push(429);
  return statuses.sort((a, b) => a - b);
}

/**
 * Build the OpenAPI 3.1 document of a surface.
 *
 * @param surface what `describe` reports (same tool schemas as the server lists)
 * @returns a JSON-serializable OpenAPI 3.1.0 document
 */
export function openApiDocument(surface: Surface, options: OpenApiOptions): JsonObject {
  const paths: JsonObject = {};
  for (const tool of surface.tools) {
    paths[`/api/${tool.name}`] = { post: operation(tool, surface, options) };
  }
  const rate = surface.rateLimit
    ? ` Outbound calls share a rate limit of ${rateWords(surface.rateLimit)} (${
      rateStateWords(surface.rateLimit.state)
    }).`
    : "";
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: `${surface.server} (weir tool API)`,
      version: options.version,
      description:
        `The HTTP tool API of the weir server "${surface.server}" (${surface.file}): one ` +
        `POST /api/<tool> per served tool, the JSON arguments as the body, the MCP ` +
        `CallToolResult back. Upstream: ${upstreamWords(surface.upstream)}; weir's credential ` +
        `to it: ${authWords(surface)}.${rate} The same tools are served over MCP at POST /mcp.` +
        (options.inboundTokens || surface.callers.oauth
          ? ""
          : " The guardfile declares no inbound authentication: weir serve answers " +
            "loopback callers without a token unless started with --inbound-token-env VAR " +
            "(then send Authorization: Bearer <token>) or --oauth-issuer, one of which it " +
            "requires to listen beyond loopback."),
    },
    servers: [{
      url: "http://127.0.0.1:{port}",
      description: "weir serve FILE --http 127.0.0.1:PORT",
      variables: { port: { default: "8080", description: "the port given to --http" } },
    }],
    tags: [
      { name: "grants", description: "One upstream operation each, exactly as granted." },
      { name: "withheld", description: "Listed so an agent knows they exist; always refused." },
      { name: "info", description: "Describes this server; reaches nothing upstream." },
      {
        name: "proxied",
        description: "A tool of the wrapped MCP server, as the guardfile serves it.",
      },
    ],
    paths,
    ...security(surface, options),
  };
}

/**
 * The security the file itself declares, and only that: `oauth` when the guardfile has an
 * `oauth` node (or a grant needs scopes), `inboundToken` when it names `inbound-token`
 * callers. A file with neither is served on loopback with no inbound authentication by
 * default, so none is declared; serve's flags (--inbound-token-env, --oauth-issuer) add
 * one at run time, which the info description says.
 */
function security(surface: Surface, options: OpenApiOptions): JsonObject {
  const oauth = surface.callers.oauth !== undefined || surface.tools.some((t) => t.scopes.length);
  const schemes: JsonObject = {};
  if (options.inboundTokens) {
    schemes.inboundToken = {
      type: "http",
      scheme: "bearer",
      description: "A token of one of the guardfile's inbound-token callers (or of " +
        "--inbound-token-env VAR): each caller reaches only the tools its token names.",
    };
  }
  if (oauth) {
    schemes.oauth = {
      type: "http",
      scheme: "bearer",
      description: "An OAuth 2.1 access token issued for the resource (RFC 8707) by the " +
        "authorization server that GET /.well-known/oauth-protected-resource names " +
        "(RFC 9728). An operation's security lists the scopes its token must all carry.",
    };
  }
  const names = Object.keys(schemes);
  if (names.length === 0) return {};
  return {
    components: { securitySchemes: schemes },
    security: names.map((name) => ({ [name]: [] })),
  };
}

function operation(tool: Tool, surface: Surface, options: OpenApiOptions): JsonObject {
  const statuses = toolStatuses(tool, surface);
  const responses: JsonObject = {};
  for (const status of statuses) {
    const schema = status === 200 ? okSchema(tool, options) : ERROR_BODY;
    responses[String(status)] = {
      description: status === 403 && tool.kind === "withheld"
        ? `Always: this tool is withheld by policy. ${tool.withheld?.reason ?? ""}`.trim()
        : status === 403 && tool.controls.confirm !== undefined
        ? "Always over this API (confirmation_impossible): a person must confirm each call, " +
          "which only MCP can ask. Also: " + STATUS_TEXT[403]
        : STATUS_TEXT[status],
      content: { "application/json": { schema } },
    };
  }
  const op: JsonObject = {
    operationId: tool.name,
    summary: tool.kind === "withheld"
      ? `Withheld: ${tool.name}`
      : tool.kind === "info"
      ? "Server info"
      : operationWords(tool.operation),
    description: describeOperation(tool),
    tags: [tool.kind === "grant" ? "grants" : tool.kind === "proxy" ? "proxied" : tool.kind],
    requestBody: {
      required: true,
      content: { "application/json": { schema: inputSchema(tool) } },
    },
    responses,
  };
  if (tool.kind === "withheld") op.deprecated = true;
  // OpenAPI 3.1 lets a non-oauth2 scheme list the roles (here: OAuth scopes) it needs.
  if (tool.scopes.length > 0) op.security = [{ oauth: tool.scopes }];
  const extension = weirExtension(tool);
  if (Object.keys(extension).length > 0) op["x-weir"] = extension;
  return op;
}

function describeOperation(tool: Tool): string {
  if (tool.kind === "withheld") {
    return `NOT AVAILABLE: withheld by policy. ${tool.withheld?.reason ?? ""}` +
      (tool.withheld?.alternative ? ` Use ${tool.withheld.alternative} instead.` : "") +
      ` Every call is refused with 403 and reaches nothing.`;
  }
  if (tool.kind === "info") {
    return tool.description ?? "Describes this server; reaches nothing upstream.";
  }
  const parts = [
    tool.description ??
      (tool.operation?.kind === "mcp"
        ? `The MCP server's tool ${tool.operation.tool}.`
        : `${operationWords(tool.operation)} on the upstream.`),
  ];
  if (tool.destructive) parts.push("Destructive.");
  if (tool.controls.confirm !== undefined) {
    parts.push(
      `Confirm-gated: a person is asked "${tool.controls.confirm}" before each call, through MCP ` +
        "elicitation; over this HTTP tool API the call is always refused (403).",
    );
  }
  const ungated = tool.arguments.filter((i) => i.encoding?.metacharacters === "allow");
  if (ungated.length > 0) {
    parts.push(
      `Metacharacters allowed in: ${ungated.map((i) => i.name).join(", ")} (every other path ` +
        "and query value refuses ` $ ; & | < > ( ) { } \\).",
    );
  }
  return parts.join(" ");
}

function inputSchema(tool: Tool): JsonObject {
  if (tool.inputSchema) return tool.inputSchema;
  if (tool.kind === "info") return { type: "object", properties: {}, additionalProperties: false };
  return { type: "object", description: "Any object: the call is refused whatever it holds." };
}

function okSchema(tool: Tool, options: OpenApiOptions): JsonObject {
  const output = options.outputSchemas?.[tool.name];
  if (!output) return CALL_TOOL_RESULT;
  return {
    ...CALL_TOOL_RESULT,
    properties: { ...(CALL_TOOL_RESULT.properties as JsonObject), structuredContent: output },
  };
}

function weirExtension(tool: Tool): JsonObject {
  const x: JsonObject = {};
  const op = tool.operation;
  if (op?.kind === "http" || op?.kind === "graphql") {
    x.upstream = { method: op.method, path: op.path };
  }
  if (op?.kind === "aws") x.upstream = { action: op.action, scope: op.scope };
  if (op?.kind === "mcp") x.upstream = { mcpTool: op.tool };
  if (tool.kind === "grant" || tool.kind === "proxy") x.reads = tool.access.reads;
  if (tool.destructive) x.destructive = true;
  const renamed = tool.arguments.filter((i) => i.in === "argument" && i.sentAs !== i.name);
  if (renamed.length > 0) {
    x.renamedArguments = Object.fromEntries(renamed.map((i) => [i.name, i.sentAs]));
  }
  if (tool.interface) x.interface = tool.interface;
  if (tool.withheld) {
    x.withheld = { reason: tool.withheld.reason };
    if (tool.withheld.alternative) {
      (x.withheld as JsonObject).alternative = tool.withheld.alternative;
    }
  }
  const ungated = tool.arguments.filter((i) => i.encoding?.metacharacters === "allow");
  if (ungated.length > 0) x.metacharactersAllowed = ungated.map((i) => i.name);
  const restrictions = tool.arguments.flatMap((a) =>
    a.restrict.map((globs) => ({ param: a.name, allowed: globs }))
  );
  if (restrictions.length > 0) x.restrictions = restrictions;
  if (tool.exclusive.length > 0) x.mutuallyExclusive = tool.exclusive;
  if (tool.fixedBody) x.fixedBody = tool.fixedBody;
  if (tool.pins.length > 0) {
    x.pins = tool.pins.map((p) => ({
      [p.in]: p.name,
      from: "from" in p.value ? sourceWords(p.value.from) : "a literal",
      ...(p.secret ? { secret: true } : {}),
    }));
  }
  const c = tool.controls;
  if (c.cacheTtlMs !== undefined) x.cacheTtlMs = c.cacheTtlMs;
  if (c.rejectEmpty) x.rejectEmpty = true;
  if (c.rejectBlank.length > 0) x.rejectBlank = c.rejectBlank;
  if (op?.kind === "sql") {
    x.sql = {
      statement: op.statement,
      reads: tool.access.reads,
      readOnlyTransaction: op.readOnlyTransaction,
      maxRows: op.maxRows,
      ...(op.onlyReads ? { onlyReads: op.onlyReads } : {}),
    };
  }
  if (tool.scopes.length > 0) x.scopes = tool.scopes;
  if (c.confirm !== undefined) x.confirm = { message: c.confirm };
  if (c.extract) x.extract = `${c.extract.as}, first ${c.extract.max}`;
  return x;
}
