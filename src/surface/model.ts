/**
 * The surface model: one typed value that says what an agent can do with a
 * guardfile, for every form of file (spec mode's grants, a wrapped MCP
 * server, the AWS policies). `weir describe` (text, JSON, OpenAPI, HTML),
 * `weir diff`, `--read-only` and lint's budgets read it (the advertised input
 * schema is built beside it from the grant: src/surface/input_schema.ts);
 * builders: `surfaceOfGuardfile` (src/surface/spec.ts),
 * `surfaceOfWrap` (src/surface/wrap.ts), `describeAws` (src/modes/serve_aws.ts).
 *
 * Every field declares how a change to it moves what an agent can do (wider,
 * narrower, or either) in src/diff/declarations.ts, whose type requires a
 * declaration for every field here: adding a field without one does not
 * compile, and tests/surface/declarations_test.ts walks real surfaces for
 * any key that slipped past.
 *
 * No value here is a secret: a literal written in the file is held as a
 * {@link Concealed}, which compares exactly and prints as "a literal (not
 * shown)". Pure types.
 *
 * @module
 */
import type { JsonObject } from "../mcp/jsonrpc.ts";
import type { Concealed } from "./concealed.ts";

export type { Concealed };

/** Which form of guardfile a surface was built from. */
export type SurfaceForm = "spec" | "mcp-wrap" | "aws";

/** What an agent can do with one guardfile. */
export interface Surface {
  /** The form of file: grants of an HTTP API or a database, a wrapped MCP server, an AWS policy. */
  form: SurfaceForm;
  /** The server's name (the last argument of `wrap`). */
  server: string;
  /** The file it was read from (for messages). */
  file: string;
  /** Where weir sends what the agent asks for. */
  upstream: Upstream;
  /** `database`: where sql grants connect. */
  database?: DatabaseTarget;
  /** How weir authenticates to the upstream: each credential and where it is read. */
  credentials: Credential[];
  /** Fixed headers weir sends on every request (their text is concealed). */
  headers: FixedHeader[];
  /** Who may call: inbound tokens and OAuth (per-tool scopes are on each tool). */
  callers: Callers;
  /** `rate-limit`: the budget every call spends, and where its state lives. */
  rateLimit?: RateLimitSurface;
  /** The connection to a wrapped MCP server (`mcp-server` settings); absent in other forms. */
  connection?: ConnectionSettings;
  /** `surface`: read-only, schema profile, token budgets. */
  settings: SettingsSurface;
  /** Text the model reads beside the tools: instructions, resources, prompts. */
  texts: Texts;
  /** Resources of a wrapped MCP server readable through weir (`proxy-resource`), sorted. */
  readableResources: string[];
  /** AWS policy details (region, bucket, parameters) for the AWS forms; absent otherwise. */
  aws?: AwsScope;
  /** Every listed tool (grants, proxied tools, withheld stubs, the info tool), sorted by name. */
  tools: Tool[];
}

/** Where weir sends requests. */
export type Upstream =
  | {
    /** An HTTP API: every grant's path is below `baseUrl`. */
    kind: "http";
    /** The base URL, written plainly (shown) or read at call time. */
    baseUrl: SentValue;
  }
  | {
    /** Nothing over HTTP: every grant is sql. */
    kind: "none";
  }
  | {
    /** A wrapped MCP server over Streamable HTTP. */
    kind: "mcp-http";
    /** Its origin and path (what is shown; never a query or credential). */
    endpoint: string;
    /** The exact URL as written, compared and never printed. */
    url: Concealed;
  }
  | {
    /** A wrapped MCP server run as a stdio child. */
    kind: "mcp-stdio";
    /** The program. */
    command: string;
    /** Its arguments. */
    args: string[];
  }
  | {
    /** An AWS service, SigV4-signed. */
    kind: "aws";
    /** `SSM` or `S3`. */
    service: string;
    /** The region. */
    region: string;
    /** Where the endpoint comes from, in words. */
    endpoint: string;
  };

/**
 * A value weir sends or connects with: written plainly in the file and not
 * secret (`shown`), or read at call time from a chain of sources (`from`).
 */
export type SentValue = { shown: string } | { from: SourceStep[] };

/**
 * One source of a value: a provider and its address (`env` `GITHUB_TOKEN`,
 * `file` `/run/secrets/x`), or a literal written in the file (concealed).
 * The first non-empty source of a chain wins.
 */
export type SourceStep =
  | { provider: string; address: string }
  | { provider: "literal"; literal: Concealed };

/** `database <driver> { value ... }`. */
export interface DatabaseTarget {
  /** The driver as written (`pgx`: PostgreSQL). */
  driver: string;
  /** Where the DSN is read, never its value. */
  dsn: SourceStep[];
}

/** One credential weir sends upstream. */
export interface Credential {
  /**
   * `bearer`, `header-token`, `query-param` (spec mode), `mcp-header` (a
   * wrapped server), `sigv4`, `token-exchange` (each caller's own, exchanged).
   */
  scheme: string;
  /** Where it goes: `Authorization: Bearer`, `header X-Api-Key`, `query key`. */
  sentAs: string;
  /** Text sent before the value (`token `); empty for none. */
  prefix: string;
  /** Where the value is read (`token-exchange`: weir's client secret or key). */
  value: SentValue;
  /** `token-exchange`: the caller's token exchanged per call for one for the upstream. */
  exchange?: ExchangeCredential;
}

/** What a token exchange asks the identity provider for, and as whom (RFC 8693). */
export interface ExchangeCredential {
  /** The upstream at the provider. */
  audience?: string;
  /** The upstream's RFC 8707 resource URI. */
  resource?: string;
  /** Scopes always asked for; absent: each tool's scopes. */
  scopes?: string[];
  /** The token endpoint as written; absent: the issuer's metadata. */
  tokenEndpoint?: string;
  /** `subject_token_type`, when not an access token. */
  subjectTokenType?: string;
  /** weir's client ID at the provider. */
  clientId: string;
  /** `client_secret_basic`, `client_secret_post` or `private_key_jwt`. */
  method: string;
  /** `private_key_jwt`: the algorithm, when written. */
  alg?: string;
  /**
   * `client-credentials`: weir's own requests to the MCP server (handshake,
   * listings) carry weir's own token from the same provider (RFC 6749
   * section 4.4), asked for these scopes.
   */
  clientCredentials?: { scopes: string[] };
}

/** `header "<Name>" "<text>"`: a header sent on every request. */
export interface FixedHeader {
  /** The header name, lower-cased. */
  name: string;
  /** Its text (may be a key: concealed). */
  text: Concealed;
}

/** Who may call which tools. */
export interface Callers {
  /** `inbound-token`: static bearer tokens, each limited to some tools. */
  inboundTokens: InboundCaller[];
  /**
   * `oauth`: callers need an access token from `issuer` for `resource`
   * (or, per `profile`, for the provider's `audience`).
   */
  oauth?: { issuer: string; resource: string; profile?: string; audience?: string };
}

/** One `inbound-token` caller. */
export interface InboundCaller {
  /** The caller's name (audit lines name it). */
  name: string;
  /** Where its token is read when serving starts. */
  token: SourceStep[];
  /** The tools it may see and call, sorted. */
  tools: string[];
}

/** `rate-limit "<n>/<duration>" [{ store ... }]`: one bucket every call spends. */
export interface RateLimitSurface {
  /** Calls per window (also the burst). */
  count: number;
  /** The window, in milliseconds. */
  windowMs: number;
  /** Where the bucket lives: each process (N replicas allow N times the calls) or one shared store. */
  state: RateState;
}

/** Where a rate limit's state lives. */
export type RateState =
  | { where: "process" }
  | {
    where: "redis";
    /** Where the store's URL comes from. */
    url: SentValue;
    /** The bucket's key (default: the server name). */
    bucket: string;
  };

/** The `mcp-server` block's connection settings (absent: the defaults). */
export interface ConnectionSettings {
  /** `connect-timeout`, ms. */
  connectTimeoutMs?: number;
  /** `request-timeout`, ms (0: none). */
  requestTimeoutMs?: number;
  /** `max-response-bytes`. */
  maxResponseBytes?: number;
  /** `max-staleness`: how old a verified copy of the tool definitions may be, ms. */
  maxStalenessMs?: number;
}

/** What a `surface` node (and the command line) says. */
export interface SettingsSurface {
  /** Only operations that change nothing are served; writes are withheld stubs. */
  readOnly: boolean;
  /** The schema dialect tools are listed in (`full` when not stated). */
  schemaProfile: string;
  /** `max-tokens`: budget for all listed tools, o200k tokens. */
  maxTokens?: number;
  /** `max-tool-tokens`: budget for any one tool, o200k tokens. */
  maxToolTokens?: number;
}

/** Text the model reads beside the tools. */
export interface Texts {
  /** `instructions`. */
  instructions?: string;
  /** Static resources, by name. */
  resources: NamedText[];
  /** Prompt templates, by name. */
  prompts: NamedText[];
  /** Icons of the server (their sources). */
  icons: string[];
}

/** A static resource or a prompt: its name and what it says (the node, as JSON). */
export interface NamedText {
  /** The name. */
  name: string;
  /** Everything the node states, as compact JSON (positions left out). */
  content: string;
}

/** The AWS policy's scope. */
export interface AwsScope {
  /** `aws-ssm` or `aws-s3`. */
  mode: string;
  /** Everything the policy states about what is reachable (region, bucket, prefix, parameters...). */
  policy: JsonObject;
}

/** Read or write: the one definition (src/guardfile/reads.ts). */
export interface Access {
  /** The operation changes nothing upstream. */
  reads: boolean;
  /** Why, in words (the rule that decided). */
  why: string;
  /**
   * A wrapped server's own `readOnlyHint` decides and was not read (the file
   * alone, the server held fixed): `reads` is MCP's default, false.
   */
  unknown?: boolean;
}

/** What a tool sends upstream. */
export type Operation =
  | {
    kind: "http";
    method: string;
    path: string;
    /** The body goes form-encoded (a grant's `form`), its arrays so written; absent: JSON. */
    form?: { arrays: "repeat" | "brackets" | "indexed" };
  }
  | { kind: "graphql"; method: string; path: string; document: string }
  | {
    kind: "sql";
    statement: string;
    maxRows: number;
    /**
     * Runs in a read-only transaction and answers rows (its verb names a read,
     * or its statement reads); else it may write and answers rows_affected.
     * Whether it counts as a read is `Tool.access`.
     */
    readOnlyTransaction: boolean;
    /** `only-reads`: functions it calls that the guardfile states only read (weir cannot prove it). */
    onlyReads?: string[];
  }
  | { kind: "mcp"; tool: string }
  | {
    kind: "aws";
    action: string;
    /** What it reaches, in words. */
    scope: string;
    /** What it reaches, by part (compared by `weir diff`). */
    within: AwsWithin;
  };

/** What one AWS tool reaches: an S3 bucket and key prefix, or SSM parameter names. */
export interface AwsWithin {
  /** The S3 bucket. */
  bucket?: string;
  /** The S3 key prefix every key is under (`""`: the whole bucket). */
  prefix?: string;
  /** The SSM parameters it may read. */
  parameters?: string[];
}

/** One listed tool. */
export interface Tool {
  /** The tool's name as listed. */
  name: string;
  /** `grant` (spec mode, AWS), `proxy` (a wrapped MCP server's tool), `withheld` (a refusing stub), `info`. */
  kind: "grant" | "proxy" | "withheld" | "info";
  /** Read or write, and why. */
  access: Access;
  /** What it sends; absent for stubs and the info tool. */
  operation?: Operation;
  /** Marked destructive (`delete` verbs, `DELETE`, the upstream's `destructiveHint`). */
  destructive: boolean;
  /**
   * A wrapped server's own `destructiveHint` decides and was not read (the
   * file alone, the server held fixed): `destructive` is MCP's default, true.
   */
  destructiveUnknown?: boolean;
  /**
   * The other hints a client is shown (MCP `ToolAnnotations` `idempotentHint`,
   * `openWorldHint`), when the tool's listing says them.
   */
  hints?: { idempotent?: boolean; openWorld?: boolean };
  /** A display title, when one is listed. */
  title?: string;
  /** The description listed. */
  description?: string;
  /** Every argument, flattened (nested body fields as `a.b`), with where it goes and its rules. */
  arguments: Argument[];
  /** The input schema advertised and enforced (absent: not known offline). */
  inputSchema?: JsonObject;
  /** A proxied tool's `outputSchema`. */
  outputSchema?: JsonObject;
  /** `mutually-exclusive` groups, as written. */
  exclusive: string[][];
  /** `set`: the exact body sent. */
  fixedBody?: JsonObject;
  /** Values weir supplies (`pin`). */
  pins: Pin[];
  /** What happens around each call. */
  controls: ToolControls;
  /** OAuth scopes a caller's token must all carry, as written. */
  scopes: string[];
  /** A proxied tool's MCP Apps interface resource (`_meta.ui.resourceUri`). */
  interface?: string;
  /**
   * A proxied tool's findings of the definition scan the file accepts
   * (`accept-finding`): the tool is served with them. `pointer` says where in
   * the definition, when the definition was read.
   */
  acceptedFindings: AcceptedFinding[];
  /** Why a stub refuses. */
  withheld?: { reason: string; alternative?: string };
}

/** One accepted finding of the definition scan. */
export interface AcceptedFinding {
  /** `<rule>:<16 hex digits>`, as `weir lint-upstream` prints it. */
  id: string;
  /** Where in the definition (a JSON pointer), when it was read. */
  pointer?: string;
  /** The file's reason, when it gives one. */
  reason?: string;
}

/** Where an argument goes. */
export type ArgumentPlace =
  | "path"
  | "query"
  | "header"
  | "body"
  | "body map"
  | "graphql"
  | "sql"
  | "argument";

/** One argument of a tool. */
export interface Argument {
  /** The name an agent uses (`a.b` for a nested body field). */
  name: string;
  /** Where it goes. */
  in: ArgumentPlace;
  /** The name upstream reads: a query key, a body key, `$1`, a wrapped server's argument name. */
  sentAs: string;
  /** Its type in words (`string`, `integer[]`, `string|integer`, `any`). */
  type: string;
  /** Whether an agent must give it. */
  required: boolean;
  /** Value rules (each also in the advertised input schema). */
  rules: ArgumentRules;
  /** `restrict`: globs; the value must match one glob of every node (nodes AND, globs OR). */
  restrict: string[][];
  /** How a URL value is encoded and gated (path and query values only). */
  encoding?: Encoding;
  /** Whether it is listed for agents (`hide=#true`: not served). */
  served: boolean;
}

/** Value rules of an argument (of each item, for arrays). */
export interface ArgumentRules {
  /** Numeric lower bound, inclusive. */
  minimum?: number;
  /** Numeric upper bound, inclusive. */
  maximum?: number;
  /** Least length, code points. */
  minLength?: number;
  /** Greatest length, code points. */
  maxLength?: number;
  /** Fewest items. */
  minItems?: number;
  /** Most items. */
  maxItems?: number;
  /** ECMA-262 pattern (unanchored). */
  pattern?: string;
  /** The only values allowed. */
  enum?: (string | number | boolean | null)[];
}

/** How a path or query value is placed in the URL. */
export interface Encoding {
  /** A path value's `/`: refused, sent as %2F (one segment), or several segments. */
  slashes?: "refuse" | "encoded" | "segments";
  /** Shell metacharacters: refused (default) or allowed, percent-encoded. */
  metacharacters: "refuse" | "allow";
}

/** A value weir supplies (`pin`): never given by the agent. */
export interface Pin {
  /** The query key, or the wrapped server's argument name. */
  name: string;
  /** A query parameter (spec mode) or an argument (a wrapped server). */
  in: "query" | "argument";
  /** Where the value comes from. */
  value: SentValue;
  /** `from="query:<p>"`: one query parameter taken out of a URL-valued secret. */
  fromQuery?: string;
  /** Redacted from answers like a credential. */
  secret: boolean;
}

/** What weir does around each call of a tool. */
export interface ToolControls {
  /** `confirm`: the question a person answers before each call. */
  confirm?: string;
  /** `cache`: ms a successful answer is reused. */
  cacheTtlMs?: number;
  /** `reject-empty`: an empty answer is an error. */
  rejectEmpty: boolean;
  /** `reject-empty-argument`: arguments refused when blank, sorted. */
  rejectBlank: string[];
  /** `extract`: what a raw answer is projected into, and how much is kept. */
  extract?: { as: string; max: number };
  /** `fail-when`: a JMESPath an answer matching is an error. */
  failWhen?: string;
  /** `raw-response`: the answer is returned as text. */
  rawResponse: boolean;
}
