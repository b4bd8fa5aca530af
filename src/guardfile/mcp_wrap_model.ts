/**
 * The typed form of a guardfile that wraps an MCP server (the guardfile form
 * of `serve-upstream`), as src/guardfile/mcp_wrap.ts reads it. Field names
 * follow the grammar (`docs/wrapping-mcp-servers.md`); nothing here does I/O.
 *
 * @module
 */
import type { SourcePosition } from "./kdl.ts";
import type { Diagnostic } from "./diagnostics.ts";
import type {
  InboundToken,
  OAuthSetting,
  PromptTemplate,
  RateLimit,
  ServerIcon,
  StaticResource,
  SurfaceSettings,
  TokenExchangeSetting,
  ValueRules,
  ValueSource,
  Withhold,
} from "./model.ts";

/** Where the MCP server is: a Streamable HTTP endpoint, or a command run as a stdio child. */
export type McpServerTarget =
  | {
    transport: "http";
    /** The MCP endpoint (`http:` or `https:`, no credentials, no fragment). */
    url: string;
    /** Headers sent with every request, values resolved per request. */
    headers: McpServerHeader[];
    /** `token-exchange { ... }`: each call carries a token exchanged from its caller's. */
    exchange?: TokenExchangeSetting;
  }
  | {
    transport: "stdio";
    /** The program. */
    command: string;
    /** Its arguments. */
    args: string[];
  };

/**
 * `header "<Name>" "<text>"` (a fixed value) or
 * `header "<Name>" { prefix "<text>"; value <provider> "<address>" }` (a secret,
 * read at every request, never logged or echoed).
 */
export interface McpServerHeader {
  /** The header name as written. */
  name: string;
  /** Text sent before the value (`Bearer `); empty for none. */
  prefix: string;
  /** The value: fixed text, or where it is read from. */
  value: { text: string } | { source: ValueSource };
}

/** The connection settings in the `mcp-server` block; absent ones take the flags' defaults. */
export interface McpServerSettings {
  /** `connect-timeout`: how long start-up keeps retrying the first connection, in ms. */
  connectTimeoutMs?: number;
  /** `request-timeout`: bound on each request to the MCP server, in ms (0: none). */
  requestTimeoutMs?: number;
  /** `max-response-bytes`: the largest answer accepted, in bytes. */
  maxResponseBytes?: number;
  /**
   * `max-staleness`: the oldest a verified copy of the MCP server's tool
   * definitions may be when a call is forwarded, in ms (0: verify before
   * every call).
   */
  maxStalenessMs?: number;
}

/** Tool annotations a `proxy` states (MCP `ToolAnnotations` hints). */
export interface AnnotationOverrides {
  /** `read-only=`: the tool does not change its environment. */
  readOnlyHint?: boolean;
  /** `destructive=`: the tool may destroy or overwrite. */
  destructiveHint?: boolean;
  /** `idempotent=`: calling again with the same arguments changes nothing more. */
  idempotentHint?: boolean;
  /** `open-world=`: the tool reaches outside entities (the web, other systems). */
  openWorldHint?: boolean;
}

/**
 * `argument "<served name>" [upstream="<name>"] [hide=#true] [rules...]`: one
 * argument of a proxied tool, renamed, hidden or narrowed. Every rule narrows
 * what the MCP server's own schema admits; whether it does is checked against
 * that schema when it is known.
 */
export interface ArgumentRule extends ValueRules {
  /** The name callers use. */
  name: string;
  /** The MCP server's name for it (`upstream=`; default: `name`). */
  upstream: string;
  /** `hide=#true`: not served; it must then be pinned or optional. */
  hide: boolean;
  /** Numeric lower bound (inclusive). */
  minimum?: number;
  /** Numeric upper bound (inclusive). */
  maximum?: number;
  /** `restrict "<glob>"...`: the value must match one (strings; `docs/guardfile.md` globs). */
  restrict?: string[];
  /** Where the node starts. */
  position?: SourcePosition;
}

/** `proxy "<served name>" { ... }`: one tool of the MCP server, served. */
export interface ProxyTool {
  /** The name weir serves it under. */
  name: string;
  /** The MCP server's tool name (`upstream "<name>"`; default: `name`). */
  upstream: string;
  /** `title "<text>"`: replaces the tool's title. */
  title?: string;
  /** `describe "<text>"`: replaces the tool's description. */
  description?: string;
  /** `annotations read-only=#true ...`: replace these hints. */
  annotations?: AnnotationOverrides;
  /** `scope "<scope>"...`: OAuth scopes a caller's token must all carry. */
  scopes: string[];
  /** Argument rules, in file order. */
  arguments: ArgumentRule[];
  /**
   * `accept-finding "<id>" [reason="..."]`: findings of the tool-poisoning
   * scan the operator reviewed and accepts (the tool is served with them).
   */
  accept: FindingAcceptance[];
  /** Where the node starts. */
  position?: SourcePosition;
}

/** One accepted finding of the definition scan: its id, and why (for reviewers and describe). */
export interface FindingAcceptance {
  /** `<rule>:<16 hex digits>`, as `weir lint-upstream` prints it. */
  id: string;
  /** Why the operator accepts it (`reason=`), shown by describe and the review page. */
  reason?: string;
}

/** `pin "<tool>" { argument "<name>" <provider> "<source>" }`: a value weir supplies. */
export interface ArgumentPin {
  /** The MCP server's argument name (a pinned argument is not served, so it has no other). */
  name: string;
  /**
   * A KDL-typed literal (`argument "limit" literal 10`), or where the text
   * comes from (read at every call; converted to the argument's JSON type).
   */
  value: { literal: string | number | boolean } | { source: ValueSource };
  /** `secret=#true`: redact the value from answers like a credential. */
  secret: boolean;
}

/** The controls beside `wrap`, by served tool name. */
export interface McpWrapControls {
  /** `confirm "<tool>" message=`: a person confirms each call first (tool -> question). */
  confirm: Record<string, string>;
  /** `cache "<tool>" ttl=`: milliseconds a successful answer is reused. */
  cache: Record<string, number>;
  /** `reject-empty "<tool>"`: an empty result is a tool error. */
  rejectEmpty: string[];
  /** `reject-empty-argument "<tool>" field=`: a present but blank argument (served name) is refused. */
  rejectEmptyArguments: Record<string, string[]>;
  /** `pin "<tool>" { argument ... }`: arguments weir supplies (and does not serve). */
  pins: Record<string, ArgumentPin[]>;
  /** `rate-limit`: one bucket for every forwarded call. */
  rateLimit?: RateLimit;
}

/** A checked guardfile that wraps an MCP server. */
export interface McpWrap {
  /** Tells this model from a spec-mode `Guardfile` (src/guardfile/model.ts). */
  kind: "mcp-wrap";
  /** Path it was read from (for messages). */
  file: string;
  /** Server name: the last argument of `wrap`. */
  name: string;
  /** All arguments of `wrap`. */
  wrapPath: string[];
  /** The MCP server. */
  server: McpServerTarget;
  /** Its connection settings. */
  settings: McpServerSettings;
  /** The tools served, sorted by served name. */
  proxies: ProxyTool[];
  /** `proxy-resource "<uri>"`: resources of the MCP server readable beyond those served tools reference. */
  resourceUris: string[];
  /** Withheld stubs. */
  withholds: Withhold[];
  /** `instructions` text, if any. */
  instructions?: string;
  /** The read-only info tool (`weir_info` unless renamed or `disabled`). */
  infoTool: string | null;
  /** Static resources of the file (`resource`). */
  resources: StaticResource[];
  /** Prompt templates (`prompt`). */
  prompts: PromptTemplate[];
  /** Icons (`icon`). */
  icons: ServerIcon[];
  /** The controls beside `wrap`. */
  controls: McpWrapControls;
  /** `oauth issuer= resource=`. */
  oauth?: OAuthSetting;
  /** `inbound-token`: static tokens, each limited to some tools. */
  inboundTokens: InboundToken[];
  /** `surface ...`: read-only, schema profile, token budget (`{}` when absent). */
  surface: SurfaceSettings;
  /** Where `wrap` starts. */
  position?: SourcePosition;
}

/** The outcome of reading an MCP wrap. */
export interface McpWrapResult {
  /** The model; absent when any diagnostic is an error. */
  wrap?: McpWrap;
  /** Every error and warning. */
  diagnostics: Diagnostic[];
}
