/**
 * The typed form of a guardfile: what the loader produces and the guard
 * serves. Field names follow the guardfile grammar (`docs/guardfile.md`);
 * nothing here does I/O.
 *
 * @module
 */
import type { SourcePosition } from "./kdl.ts";
import type { ProfileName } from "./idp_profiles.ts";

/** HTTP methods a grant may use. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";

/** JSON scalar types a typed input may declare. */
export type ScalarType = "string" | "boolean" | "integer" | "number";

/** Drivers `database` may name: the reference's `pgx`, or plainly `postgres`. */
export const SQL_DRIVERS: readonly string[] = ["pgx", "postgres"];

/** Where a secret or setting comes from, resolved at call time: first non-empty source wins. */
export interface ValueSource {
  /** The sources in order (`env "X"`, `file "/path"`, `literal "..."`); the first non-empty one is used. */
  chain: { provider: string; address: string }[];
}

/** How weir authenticates to the upstream (never a caller's credential to weir). */
export type Auth =
  | { scheme: "header-token"; header: string; prefix: string; value: ValueSource }
  | { scheme: "bearer"; value: ValueSource }
  | { scheme: "query-param"; params: { name: string; value: ValueSource }[] }
  | { scheme: "token-exchange"; exchange: TokenExchangeSetting }
  | { scheme: "none" };

/**
 * `token-exchange { ... }` (spec mode's `auth token-exchange`, the
 * `mcp-server http` block's `token-exchange`): each call sends the upstream a
 * token exchanged from the caller's own (RFC 8693), never the caller's token
 * (src/guardfile/token_exchange.ts).
 */
export interface TokenExchangeSetting {
  /** The upstream at the identity provider (`audience`). */
  audience?: string;
  /** The upstream's RFC 8707 resource URI (`resource`, profile generic). */
  resource?: string;
  /** Scopes always asked for; absent: the called tool's scopes. */
  scopes?: string[];
  /** The token endpoint; absent: the OAuth issuer's metadata `token_endpoint`. */
  tokenEndpoint?: string;
  /** RFC 8693 `subject_token_type`; absent: an access token. */
  subjectTokenType?: string;
  /** weir's client ID at the provider. */
  clientId: string;
  /** How weir authenticates to the token endpoint. */
  client:
    | { method: "client_secret_basic" | "client_secret_post"; secret: ValueSource }
    | { method: "private_key_jwt"; key: ValueSource; alg?: string; kid?: string; x5t?: string };
  /**
   * `client-credentials` (the wrap form only): weir's own connection to the
   * MCP server carries a token of weir's own, by the client credentials grant
   * (RFC 6749 section 4.4) as the same client, asking for `scopes`.
   */
  clientCredentials?: { scopes: string[]; position?: SourcePosition };
  /** Where the block starts in the guardfile; absent when unknown. */
  position?: SourcePosition;
}

/** `restrict <param> matches "<glob>"...`: one node; globs are OR'd, nodes are AND'd. */
export interface Restrict {
  /** The path parameter restricted. */
  param: string;
  /** Glob patterns (`*` within a segment); the value must match one. */
  globs: string[];
  /** Where the node starts in the guardfile; absent when unknown. */
  position?: SourcePosition;
}

/**
 * The shell-metacharacter gate of a path or query value: `refuse` (the
 * default) refuses `` ` $ ; & | < > ( ) { } \ ``; `allow` (stated per input
 * with `metacharacters="allow"`) lets them through, percent-encoded.
 * Control characters are refused either way; body values are never gated.
 */
export type Metacharacters = "refuse" | "allow";

/**
 * Constraints on a value, each advertised in the input schema and enforced by
 * it (JSON Schema 2020-12 `pattern`, `minLength`, `maxLength`, `enum`). For an
 * array input they apply to each item.
 */
export interface ValueRules {
  /** ECMA-262 regular expression (unanchored, as JSON Schema reads it); strings only. */
  pattern?: string;
  /** In Unicode code points; strings only. */
  minLength?: number;
  /** In Unicode code points; strings only. */
  maxLength?: number;
  /** The only values allowed (`enum "open" "closed"` in the input's block). */
  enum?: (string | number)[];
  /**
   * Declared without `type=` (a path parameter with no `param type=`, a bare
   * `query "name"` or `body "name"`): a string, or an integer (models send
   * numbers for ids) sent as its decimal text and held to the same rules.
   */
  untyped?: boolean;
}

/**
 * How a path parameter treats `/`: `refuse` (default: a value with `/` or
 * `\`, raw or percent-encoded, is refused), `segments` (the value is a
 * relative path: each `/`-separated segment encoded on its own; empty, `.`
 * and `..` segments refused), `encoded` (the value stays one segment with `/`
 * sent as `%2F`, for APIs such as GitLab's `/projects/{id}`).
 */
export type Slashes = "refuse" | "segments" | "encoded";

/** One path parameter: from the template, refined by an optional `param` node. */
export interface PathParam extends ValueRules {
  /** The parameter name, as in the path template `{name}`. */
  name: string;
  /** `string` (default) or `integer` (sent in decimal). */
  type: "string" | "integer";
  /** How a `/` in the value is treated. */
  slashes: Slashes;
  /** Whether shell metacharacters are refused (the default) or allowed. */
  metacharacters: Metacharacters;
  /** Integer bounds (inclusive). */
  minimum?: number;
  /** Integer upper bound (inclusive). */
  maximum?: number;
}

/** One query input of a grant. */
export interface QueryInput extends ValueRules {
  /** Argument name in the tool's schema. */
  name: string;
  /** Key sent upstream (`upstream=` alias, else `name`). */
  wire: string;
  /** `field` (one value) or `array` (repeated keys in caller order). */
  kind: "field" | "array";
  /** Scalar type (of the items, for an array). */
  type: ScalarType;
  /** Whether the caller must give it. */
  required: boolean;
  /** Numeric lower bound (inclusive). */
  minimum?: number;
  /** Numeric upper bound (inclusive). */
  maximum?: number;
  /** Fewest items of an array input. */
  minItems?: number;
  /** Most items of an array input. */
  maxItems?: number;
  /** Whether shell metacharacters are refused (the default) or allowed. */
  metacharacters: Metacharacters;
}

/** One body field of a grant (nested for objects). Body values are never metacharacter-gated. */
export interface BodyField extends ValueRules {
  /** The key in the JSON body (and the argument name). */
  name: string;
  /** The JSON type of the value. */
  type: ScalarType | "array" | "object";
  /** Whether the caller must give it. */
  required: boolean;
  /** Array item type (arrays without `raw`). */
  items?: ScalarType;
  /** `raw=#true`: any JSON object/array, passed through unchecked inside. */
  raw?: boolean;
  /** Nested fields of a non-raw object. */
  fields?: BodyField[];
}

/**
 * **weir.** `header "<Name>" ...` in a grant: a request header the caller
 * supplies, held to the value rules of a query input (no control characters,
 * printable ASCII, at most {@link HEADER_VALUE_MAX_LENGTH} characters, the
 * metacharacter gate, optional `pattern`/`enum`).
 */
export interface HeaderInput extends ValueRules {
  /** Argument name in the tool's schema (`input=`, else the header name in snake case). */
  name: string;
  /** The header sent upstream, as written (RFC 9110 token). */
  wire: string;
  /** Scalar type of the value; a number or boolean is sent as JSON writes it. */
  type: ScalarType;
  /** Whether the caller must give it. */
  required: boolean;
  /** Numeric lower bound (inclusive). */
  minimum?: number;
  /** Numeric upper bound (inclusive). */
  maximum?: number;
  /** Whether shell metacharacters are refused (the default) or allowed. */
  metacharacters: Metacharacters;
}

/** The longest header value a caller may supply, in characters (printable ASCII only). */
export const HEADER_VALUE_MAX_LENGTH = 1024;

/**
 * **weir.** `form arrays="..."` in a grant: the body is sent as
 * `application/x-www-form-urlencoded` (WHATWG URL "urlencoded serializer")
 * instead of JSON. Nested objects are written `a[b]=c`; arrays by `arrays`:
 * `repeat` (`a=x&a=y`, the default), `brackets` (`a[]=x&a[]=y`) or `indexed`
 * (`a[0]=x&a[1]=y`).
 */
export interface FormEncoding {
  /** How an array is written. */
  arrays: "repeat" | "brackets" | "indexed";
}

/** `map "<a.b.c>" to="<key>"`: a required nested string sent as top-level `key`. */
export interface BodyMapping {
  /** The argument path, one key per nesting level. */
  source: string[];
  /** The top-level body key it is sent as. */
  target: string;
}

/** A GraphQL grant: an authored document with declared variables. */
export interface GraphqlSpec {
  /** The GraphQL document sent, exactly as written. */
  document: string;
  /** The variable names callers give, each an input of the tool. */
  variables: string[];
}

/** One `param` of a `sql` grant: the input bound to `$<position>`. */
export interface SqlParam {
  /** The input name in the tool schema. */
  name: string;
  /** The JSON scalar type of the input. */
  type: ScalarType;
  /** Whether the caller must give it (absent optional: SQL NULL). */
  required: boolean;
  /**
   * Declared without `type=`: a string, or an integer (models send numbers
   * for ids) bound as its decimal text, as untyped path, query and body
   * inputs are.
   */
  untyped?: boolean;
}

/** A `sql` grant: an authored statement with positional parameters. */
export interface SqlSpec {
  /** The statement, sent as written; inputs go as bind parameters `$1..$N`. */
  statement: string;
  /** In placeholder order: `params[0]` is `$1`. */
  params: SqlParam[];
  /** Rows a read returns at most (more -> `truncated`). */
  maxRows: number;
  /**
   * Run in a read-only transaction and return rows: the verb names a read, or
   * the statement is proven to read (src/guardfile/reads.ts). Else: rows_affected.
   * Whether the grant counts as a read (`--read-only`, describe, diff,
   * `readOnlyHint`) is `sqlAccess` there: its statement proven to read.
   */
  reads: boolean;
  /**
   * `only-reads "<function>" ...`: functions the statement calls that weir
   * cannot prove read, stated by the guardfile to only read (so the statement
   * may be counted as a read). Absent when none is stated.
   */
  onlyReads?: string[];
}

/** `database pgx { value ... }`: where `sql` grants connect (a PostgreSQL DSN). */
export interface Database {
  /** The driver named in the guardfile (`pgx`: PostgreSQL). */
  driver: string;
  /** The DSN, resolved at call time like a credential. */
  dsn: ValueSource;
  /** Where the node starts in the guardfile; absent when unknown. */
  position?: SourcePosition;
}

/** One `can <verb> <resource>` grant: one tool, one endpoint. */
export interface Grant {
  /** The verb as written (`get`, `create`, ...). */
  verb: string;
  /** The resource as written (`issue`, `pull-request`, ...). */
  resource: string;
  /** `<verb>_<resource>`. */
  tool: string;
  /** The HTTP method sent (from the verb table or `method`). */
  method: HttpMethod;
  /** The verb was not in the table and fell through to POST (lint warns). */
  methodInferred: boolean;
  /** Verb `delete` or stated `method "DELETE"`. */
  destructive: boolean;
  /** Path template, e.g. `/repos/{owner}/{repo}`. */
  path: string;
  /** Path parameter names in template order (required inputs). */
  pathParams: string[];
  /** The same parameters with their rules (`param` nodes; defaults otherwise), in template order. */
  params: PathParam[];
  /** Query inputs, in declaration order. */
  query: QueryInput[];
  /** `mutually-exclusive` groups: at most one name of each may be supplied. */
  exclusive: string[][];
  /** Body fields, in declaration order. */
  body: BodyField[];
  /** `map` nodes: nested arguments sent as top-level body keys. */
  bodyMap: BodyMapping[];
  /** `header` nodes: request headers the caller supplies, in declaration order. */
  headers: HeaderInput[];
  /** `form`: the body is form-encoded; absent: JSON. */
  form?: FormEncoding;
  /** `set`: the exact body sent (caller body inputs are not allowed beside it). */
  set?: Record<string, unknown>;
  /** `describe "<text>"`: the tool description. */
  describe?: string;
  /** `fail-when "<JMESPath>"`: an answer it matches is a tool error. */
  failWhen?: string;
  /** `raw-response`: the upstream body returned as text, not parsed JSON. */
  rawResponse: boolean;
  /** A GraphQL grant: the document and its variables. */
  graphql?: GraphqlSpec;
  /** A database grant: no HTTP request; `path` is empty and `method` is the verb's. */
  sql?: SqlSpec;
  /**
   * `scope "<scope>"...`: OAuth scopes (RFC 6749 section 3.3 scope-tokens) a
   * caller's access token must all carry to see and call this tool when weir
   * serves as an OAuth resource server. Empty: any valid token may.
   */
  scopes: string[];
  /** Where the node starts in the guardfile; absent when unknown. */
  position?: SourcePosition;
}

/** `withhold "<tool>" { reason; alternative }`: a listed stub that refuses. */
export interface Withhold {
  /** The tool name listed as a refusing stub. */
  tool: string;
  /** Why it is withheld, shown to callers. */
  reason: string;
  /** What to use instead, if anything. */
  alternative?: string;
  /** Where the node starts in the guardfile; absent when unknown. */
  position?: SourcePosition;
}

/** `resource "<name>" uri= ...`: a static text resource served by `resources/read`. */
export interface StaticResource {
  /** The resource name. */
  name: string;
  /** Its URI (RFC 3986), what `resources/read` is asked for. */
  uri: string;
  /** The media type of `text`. */
  mimeType: string;
  /** A human-readable title. */
  title?: string;
  /** What the resource is for. */
  description?: string;
  /** 0..1 */
  priority?: number;
  /** Who the content is meant for. */
  audience?: ("assistant" | "user")[];
  /** The content served. */
  text: string;
  /** Where the node starts in the guardfile; absent when unknown. */
  position?: SourcePosition;
}

/** `prompt "<name>" { argument ...; text ... }`: a message template for `prompts/get`. */
export interface PromptTemplate {
  /** The prompt name. */
  name: string;
  /** A human-readable title. */
  title?: string;
  /** What the prompt is for. */
  description?: string;
  /** The declared arguments, in order. */
  arguments: { name: string; title?: string; description?: string; required: boolean }[];
  /** Message text; `{arg}` is replaced by the argument's value (missing optional: empty). */
  text: string;
}

/** `icon "<src>" [mime=] [sizes=]`: an icon of the server. */
export interface ServerIcon {
  /** An `https:` or `data:` URI of the image. */
  src: string;
  /** The image media type. */
  mimeType?: string;
  /** Sizes as in HTML `sizes` (`48x48`, `any`). */
  sizes?: string[];
}

/** `pin "<tool>" { query "<name>" <provider> "<source>" [from="query:<p>"] }`. */
export interface QueryPin {
  /** Query key sent upstream. */
  name: string;
  /** Where the value comes from, resolved at call time. */
  source: ValueSource;
  /** Take one query parameter out of a URL-valued secret (`from="query:<p>"`). */
  fromQuery?: string;
  /**
   * `secret=#true`: redact the value from results like a credential. A pin is
   * policy, not a secret, so by default its value is not redacted; a
   * `from="query:<p>"` pin reads a URL-valued secret and is always redacted.
   */
  secret?: boolean;
}

/** The controls beside `wrap`, by tool name. */
export interface Controls {
  /** `extract "<tool>" as=`: project a raw PDF or feed answer into text or entries. */
  extract: Record<string, Extraction>;
  /** `confirm "<tool>" message=`: a person confirms each call first (tool -> message). */
  confirm: Record<string, string>;
  /** `cache "<tool>" ttl=`: milliseconds a successful answer is reused. */
  cache: Record<string, number>;
  /** `reject-empty "<tool>"`: an empty upstream answer is a tool error. */
  rejectEmpty: string[];
  /** `reject-empty-argument "<tool>" field=`: a present but blank argument is refused. */
  rejectEmptyArguments: Record<string, string[]>;
  /** `pin "<tool>" { query ... }`: server-side query parameters. */
  pins: Record<string, QueryPin[]>;
  /** `rate-limit "<n>/<duration>"`: an outbound token bucket shared by every grant. */
  rateLimit?: RateLimit;
}

/** `rate-limit "<n>/<duration>" [{ store redis env|literal "<url>"; bucket "<key>" }]`. */
export interface RateLimit {
  /** Calls allowed per window (also the burst). */
  count: number;
  /** The window in milliseconds. */
  windowMs: number;
  /** Absent: an in-process bucket. Present: a bucket every replica shares. */
  store?: RateStore;
}

/** `store redis env|literal "<url>"` (+ `bucket`): where a shared bucket lives. */
export interface RateStore {
  /** The store kind; only Redis. */
  driver: "redis";
  /** Where the store URL comes from (`env` is read when the server is built). */
  url: { provider: "env" | "literal"; address: string };
  /** Bucket key (default: the server name). */
  bucket?: string;
  /** Where the node starts in the guardfile; absent when unknown. */
  position?: SourcePosition;
}

/** `extract "<tool>" as="pdf-text"|"feed-entries" [max-pages=] [max-items=]`. */
export interface Extraction {
  /** What the raw answer becomes: PDF text or feed entries. */
  as: "pdf-text" | "feed-entries";
  /** Pages (pdf-text) or entries (feed-entries) kept at most. */
  max: number;
}

/** A loaded, checked guardfile. */
export interface Guardfile {
  /** Path it was read from (for messages). */
  file: string;
  /** Server name: the last argument of `wrap`. */
  name: string;
  /** All arguments of `wrap`. */
  wrapPath: string[];
  /**
   * Upstream root, `https://` added when no scheme was given; no trailing `/`.
   * `""` when every grant is `sql` and no base-url was written.
   */
  baseUrl: string | ValueSource;
  /** `database <driver> { value ... }`, required by `sql` grants. */
  database?: Database;
  /** How weir authenticates to the upstream. */
  auth: Auth;
  /** Static headers sent on every request (`header "<Name>" "<value>"`). */
  headers: [string, string][];
  /** `restrict` rules, applied to every grant with that parameter. */
  restricts: Restrict[];
  /** The grants, one tool each, sorted by tool name. */
  grants: Grant[];
  /** The withheld tools. */
  withholds: Withhold[];
  /** Guardfile text of `instructions`, if any (the server adds its preamble). */
  instructions?: string;
  /** The read-only info tool (`weir_info` unless renamed or `disabled`). */
  infoTool: string | null;
  /** Static resources. */
  resources: StaticResource[];
  /** Prompt templates. */
  prompts: PromptTemplate[];
  /** Icons of the server. */
  icons: ServerIcon[];
  /** The controls beside `wrap`. */
  controls: Controls;
  /** `oauth issuer=... resource=...`: serve as an OAuth 2.1 resource server. */
  oauth?: OAuthSetting;
  /** `surface ...`: read-only, schema profile, token budget (`{}` when absent). */
  surface: SurfaceSettings;
  /** `inbound-token`: static tokens, each limited to some tools (src/guardfile/inbound_tokens.ts). */
  inboundTokens?: InboundToken[];
}

/** A schema profile's name (the core's `SchemaProfile`: src/mcp/schema_profile.ts). */
export type SurfaceSchemaProfile = "full" | "gemini" | "openai-strict";

/** What a `surface` node says (every field absent when not written; see `surface.ts`). */
export interface SurfaceSettings {
  /** `read-only=#true`: serve only what changes nothing. */
  readOnly?: boolean;
  /** `schema-profile=`: the listed schema dialect. */
  schemaProfile?: SurfaceSchemaProfile;
  /** `max-tokens=`: budget for all listed tools together, in o200k tokens. */
  maxTokens?: number;
  /** `max-tool-tokens=`: budget for any one listed tool, in o200k tokens. */
  maxToolTokens?: number;
  /** Where the node starts; absent when there is none. */
  position?: SourcePosition;
}

/** `oauth issuer="<URL>" resource="<URL>"` (see `oauth.ts`). */
export interface OAuthSetting {
  /** The authorization server's issuer identifier. */
  issuer: string;
  /** This server's canonical URI: the audience tokens must carry (RFC 8707). */
  resource: string;
  /** `profile=`: the identity provider's profile (src/guardfile/idp_profiles.ts); absent: generic. */
  profile?: ProfileName;
  /** `audience=`: the provider's own audience for this server (see the profile). */
  audience?: string;
  /** Where the node starts in the guardfile; absent when unknown. */
  position?: SourcePosition;
}

/**
 * `inbound-token "<caller>" { value env "<VAR>"; tools "<tool>"... }`: a
 * static bearer token that may see and call only the tools listed
 * (src/guardfile/inbound_tokens.ts).
 */
export interface InboundToken {
  /** The caller's name: audit lines name it as the subject. */
  name: string;
  /** Where the token is read when serving starts (`env` or `file`; several tokens allowed). */
  source: ValueSource;
  /** The served tools this caller may see and call, in file order. */
  tools: string[];
  /** Where the node starts. */
  position?: SourcePosition;
}

/**
 * The entry a per-tool record (`confirm`, `cache`, `pins`, ...) holds for
 * `tool`, never one it inherits: a served tool may be named `toString` or
 * `constructor`.
 */
export function forTool<T>(record: Readonly<Record<string, T>>, tool: string): T | undefined {
  return Object.hasOwn(record, tool) ? record[tool] : undefined;
}
