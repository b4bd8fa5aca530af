/**
 * The typed form of a guardfile: what the loader produces and the guard
 * serves. Field names follow the guardfile grammar (`docs/guardfile.md`);
 * nothing here does I/O.
 *
 * @module
 */
import type { SourcePosition } from "./kdl.ts";

/** HTTP methods a grant may use. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";

/** JSON scalar types a typed input may declare. */
export type ScalarType = "string" | "boolean" | "integer" | "number";

/** Where a secret or setting comes from, resolved at call time: first non-empty source wins. */
export interface ValueSource {
  chain: { provider: string; address: string }[];
}

/** How weir authenticates to the upstream (never a caller's credential to weir). */
export type Auth =
  | { scheme: "header-token"; header: string; prefix: string; value: ValueSource }
  | { scheme: "bearer"; value: ValueSource }
  | { scheme: "query-param"; params: { name: string; value: ValueSource }[] }
  | { scheme: "none" };

/** `restrict <param> matches "<glob>"...`: one node; globs are OR'd, nodes are AND'd. */
export interface Restrict {
  param: string;
  globs: string[];
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
  maxLength?: number;
  /** The only values allowed (`enum "open" "closed"` in the input's block). */
  enum?: (string | number)[];
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
  name: string;
  /** `string` (default) or `integer` (sent in decimal). */
  type: "string" | "integer";
  slashes: Slashes;
  metacharacters: Metacharacters;
  /** Integer bounds (inclusive). */
  minimum?: number;
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
  required: boolean;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  metacharacters: Metacharacters;
}

/** One body field of a grant (nested for objects). Body values are never metacharacter-gated. */
export interface BodyField extends ValueRules {
  name: string;
  type: ScalarType | "array" | "object";
  required: boolean;
  /** Array item type (arrays without `raw`). */
  items?: ScalarType;
  /** `raw=#true`: any JSON object/array, passed through unchecked inside. */
  raw?: boolean;
  /** Nested fields of a non-raw object. */
  fields?: BodyField[];
}

/** `map "<a.b.c>" to="<key>"`: a required nested string sent as top-level `key`. */
export interface BodyMapping {
  source: string[];
  target: string;
}

/** A GraphQL grant: an authored document with declared variables. */
export interface GraphqlSpec {
  document: string;
  variables: string[];
}

/** One `param` of a `sql` grant: the input bound to `$<position>`. */
export interface SqlParam {
  name: string;
  type: ScalarType;
  required: boolean;
}

/** A `sql` grant: an authored statement with positional parameters. */
export interface SqlSpec {
  /** The statement, sent as written; inputs go as bind parameters `$1..$N`. */
  statement: string;
  /** In placeholder order: `params[0]` is `$1`. */
  params: SqlParam[];
  /** Rows a read returns at most (more -> `truncated`). */
  maxRows: number;
  /** The verb maps to GET: run in a read-only transaction, return rows. Else: rows_affected. */
  reads: boolean;
}

/** `database pgx { value ... }`: where `sql` grants connect (a PostgreSQL DSN). */
export interface Database {
  driver: string;
  /** The DSN, resolved at call time like a credential. */
  dsn: ValueSource;
  position?: SourcePosition;
}

/** One `can <verb> <resource>` grant: one tool, one endpoint. */
export interface Grant {
  verb: string;
  resource: string;
  /** `<verb>_<resource>`. */
  tool: string;
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
  query: QueryInput[];
  /** `mutually-exclusive` groups: at most one name of each may be supplied. */
  exclusive: string[][];
  body: BodyField[];
  bodyMap: BodyMapping[];
  /** `set`: the exact body sent (caller body inputs are not allowed beside it). */
  set?: Record<string, unknown>;
  describe?: string;
  failWhen?: string;
  rawResponse: boolean;
  graphql?: GraphqlSpec;
  /** A database grant: no HTTP request; `path` is empty and `method` is the verb's. */
  sql?: SqlSpec;
  /**
   * `scope "<scope>"...`: OAuth scopes (RFC 6749 section 3.3 scope-tokens) a
   * caller's access token must all carry to see and call this tool when weir
   * serves as an OAuth resource server. Empty: any valid token may.
   */
  scopes: string[];
  position?: SourcePosition;
}

/** `withhold "<tool>" { reason; alternative }`: a listed stub that refuses. */
export interface Withhold {
  tool: string;
  reason: string;
  alternative?: string;
  position?: SourcePosition;
}

/** `resource "<name>" uri= ...`: a static text resource served by `resources/read`. */
export interface StaticResource {
  name: string;
  uri: string;
  mimeType: string;
  title?: string;
  description?: string;
  /** 0..1 */
  priority?: number;
  audience?: ("assistant" | "user")[];
  text: string;
  position?: SourcePosition;
}

/** `prompt "<name>" { argument ...; text ... }`: a message template for `prompts/get`. */
export interface PromptTemplate {
  name: string;
  title?: string;
  description?: string;
  arguments: { name: string; title?: string; description?: string; required: boolean }[];
  /** Message text; `{arg}` is replaced by the argument's value (missing optional: empty). */
  text: string;
}

/** `icon "<src>" [mime=] [sizes=]`: an icon of the server. */
export interface ServerIcon {
  src: string;
  mimeType?: string;
  sizes?: string[];
}

/** `pin "<tool>" { query "<name>" <provider> "<source>" [from="query:<p>"] }`. */
export interface QueryPin {
  /** Query key sent upstream. */
  name: string;
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
  count: number;
  windowMs: number;
  /** Absent: an in-process bucket. Present: a bucket every replica shares. */
  store?: RateStore;
}

/** `store redis env|literal "<url>"` (+ `bucket`): where a shared bucket lives. */
export interface RateStore {
  driver: "redis";
  /** Where the store URL comes from (`env` is read when the server is built). */
  url: { provider: "env" | "literal"; address: string };
  /** Bucket key (default: the server name). */
  bucket?: string;
  position?: SourcePosition;
}

/** `extract "<tool>" as="pdf-text"|"feed-entries" [max-pages=] [max-items=]`. */
export interface Extraction {
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
  auth: Auth;
  /** Static headers sent on every request (`header "<Name>" "<value>"`). */
  headers: [string, string][];
  restricts: Restrict[];
  grants: Grant[];
  withholds: Withhold[];
  /** Guardfile text of `instructions`, if any (the server adds its preamble). */
  instructions?: string;
  /** The read-only info tool (`weir_info` unless renamed or `disabled`). */
  infoTool: string | null;
  resources: StaticResource[];
  prompts: PromptTemplate[];
  icons: ServerIcon[];
  controls: Controls;
  /** `oauth issuer=... resource=...`: serve as an OAuth 2.1 resource server. */
  oauth?: OAuthSetting;
}

/** `oauth issuer="<URL>" resource="<URL>"` (see `oauth.ts`). */
export interface OAuthSetting {
  /** The authorization server's issuer identifier. */
  issuer: string;
  /** This server's canonical URI: the audience tokens must carry (RFC 8707). */
  resource: string;
  position?: SourcePosition;
}
