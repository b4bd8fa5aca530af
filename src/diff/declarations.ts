/**
 * How a change to each field of the surface model (src/surface/model.ts)
 * moves what an agent can do: {@link SURFACE_DECLARATIONS}. `weir diff`
 * derives every verdict from this table (src/diff/declare.ts walks it); its
 * type requires a declaration for every field of the model, nested ones
 * included, so a field added to the model without one does not compile, and
 * tests/surface/declarations_test.ts walks real surfaces for any that slipped
 * past. A change that lets one request through that was refused before is a
 * widening; when a rule cannot tell, it says widening.
 *
 * @module
 */
import type {
  Callers,
  ConnectionSettings,
  Credential,
  FixedHeader,
  InboundCaller,
  NamedText,
  RateLimitSurface,
  SettingsSurface,
  Surface,
  Texts,
} from "../surface/model.ts";
import { compareAwsScope } from "./aws_scope.ts";
import {
  changes,
  type Declared,
  type Fields,
  growthWidens,
  ignored,
  largerWidens,
  type List,
  prefix,
  rule,
  same,
  smallerWidens,
  trueNarrows,
  widens,
} from "./declare.ts";
import {
  authWords,
  rateStateWords,
  rateWords,
  sourceWords,
  upstreamWords,
} from "../surface/words.ts";

import { TOOLS } from "./tool_declarations.ts";

const RATE_LIMIT: Fields<RateLimitSurface> = {
  why: "one bucket every call spends",
  label: (at, o, n) =>
    `rate-limit ${rateWords(o ?? n!)}`.replace(/^/, at.label ? `${at.label} ` : ""),
  presence: rule(
    "either",
    "a rate limit added narrows; one removed widens",
    (o, n) =>
      n === undefined
        ? [{ effect: "widen", what: `rate-limit ${rateWords(o!)} removed` }]
        : [{ effect: "narrow", what: `rate-limit ${rateWords(n)} added` }],
  ),
  fields: {
    count: largerWidens("more calls per window (and a larger burst)", "calls per window"),
    windowMs: smallerWidens("a shorter window refills sooner", "window", " ms"),
    state: rule(
      "either",
      "a bucket in each process lets N replicas make N times the calls; another shared bucket starts full",
      (o, n, at) => {
        const words = `state ${rateStateWords(o)} -> ${rateStateWords(n)}`;
        if (n?.where === "process") return [{ effect: "widen", what: `${prefix(at)}${words}` }];
        if (o?.where === "process") return [{ effect: "narrow", what: `${prefix(at)}${words}` }];
        return [{
          effect: "widen",
          what: rateStateWords(o) === rateStateWords(n)
            ? `${prefix(at)}the shared store's literal URL changed (not shown)`
            : `${prefix(at)}${words}`,
        }];
      },
    ),
  },
};

const CALLER: Declared<InboundCaller> = {
  name: ignored("the key callers are matched by"),
  token: rule(
    "wider",
    "another variable holds another token: whoever holds that one becomes this caller",
    (o, n, at) => [{
      effect: "widen",
      what: sourceWords(o ?? []) === sourceWords(n ?? [])
        ? `${prefix(at)}its token's literal changed (not shown)`
        : `${prefix(at)}its token is now read from ${sourceWords(n ?? [])} (was ${
          sourceWords(o ?? [])
        })`,
    }],
  ),
  tools: growthWidens(
    "a tool a caller may call",
    (t) => `may now call ${t}`,
    (t) => `may no longer call ${t}`,
  ),
};

/** An `oauth` setting in words: issuer, resource, and the profile's audience when set. */
function oauthWords(o: NonNullable<Callers["oauth"]>): string {
  return `${o.issuer} for ${o.resource}` +
    (o.profile ? ` (profile ${o.profile}${o.audience ? `, audience ${o.audience}` : ""})` : "") +
    (!o.profile && o.audience ? ` (audience ${o.audience})` : "");
}

const CALLERS: Declared<Callers> = {
  inboundTokens: {
    why: "inbound-token callers by name",
    key: (c) => c.name,
    added: (
      c,
    ) => [{ effect: "widen", what: `inbound token ${c.name} added (tools ${c.tools.join(", ")})` }],
    removed: (c) => [{ effect: "narrow", what: `inbound token ${c.name} removed` }],
    // With an inbound-token a call without a token is refused; with none, a
    // server run without --inbound-token-env or OAuth answers every caller.
    emptied: (gone) => [{
      effect: "widen",
      what: `every inbound token removed (${gone.map((c) => c.name).join(", ")}): a server ` +
        `run without --inbound-token-env or OAuth now answers any caller, for every tool`,
    }],
    label: (c) => `inbound token ${c.name}`,
    each: CALLER,
  },
  oauth: rule(
    "either",
    "OAuth required narrows who may call; removed, or another issuer, resource, profile or " +
      "audience, widens",
    (o, n) =>
      n === undefined
        ? [{ effect: "widen", what: `oauth (tokens from ${o!.issuer}) removed` }]
        : o === undefined
        ? [{ effect: "narrow", what: `oauth (tokens from ${n.issuer}) required` }]
        : [{ effect: "widen", what: `oauth ${oauthWords(o)} -> ${oauthWords(n)}` }],
  ),
};

const NAMED_TEXTS = (what: string): List<NamedText> => ({
  why: `${what}s by name: text the model reads, reaching nothing`,
  key: (t) => t.name,
  added: (t) => [{ effect: "change", what: `${what} ${t.name} added` }],
  removed: (t) => [{ effect: "change", what: `${what} ${t.name} removed` }],
  label: (t) => `${what} ${t.name}`,
  each: {
    name: ignored("the key texts are matched by"),
    content: rule("neither", "words the model reads", (_o, _n, at) => [{
      effect: "change",
      what: `${at.label} changed`,
    }]),
  },
});

const TEXTS: Declared<Texts> = {
  instructions: rule("neither", "words the model reads; they grant nothing", (o, n) => [{
    effect: "change",
    what: `instructions ${o === undefined ? "added" : n === undefined ? "removed" : "changed"}`,
  }]),
  resources: NAMED_TEXTS("resource"),
  prompts: NAMED_TEXTS("prompt"),
  icons: changes("pictures a client shows", "icons"),
};

const HEADERS: List<FixedHeader> = {
  why: "fixed headers by name: a header may select a tenant, a version or a privilege",
  key: (h) => h.name,
  added: (h) => [{ effect: "widen", what: `header ${h.name} added` }],
  removed: (h) => [{ effect: "widen", what: `header ${h.name} removed` }],
  label: (h) => `header ${h.name}`,
  each: {
    name: ignored("the key headers are matched by"),
    text: rule("wider", "another header value may reach more", (_o, _n, at) => [{
      effect: "widen",
      what: `${at.label} changed`,
    }]),
  },
};

const CONNECTION: Declared<ConnectionSettings> = {
  connectTimeoutMs: changes(
    "how long start-up waits; nothing reachable changes",
    "connect-timeout",
  ),
  requestTimeoutMs: changes(
    "how long a call may take; nothing reachable changes",
    "request-timeout",
  ),
  maxResponseBytes: largerWidens("larger answers reach the agent", "max-response-bytes"),
  maxStalenessMs: largerWidens(
    "an older verified copy of the tool definitions may serve a tool that drifted",
    "max-staleness",
    " ms",
  ),
};

const SETTINGS: Declared<SettingsSurface> = {
  readOnly: trueNarrows(
    "read-only serves only what changes nothing",
    "read-only mode turned on",
    "read-only mode turned off: writes are served",
  ),
  schemaProfile: changes(
    "the dialect schemas are listed in (each enforces the same)",
    "schema-profile",
  ),
  maxTokens: changes("lint's budget for the listed surface", "max-tokens"),
  maxToolTokens: changes("lint's budget for one tool", "max-tool-tokens"),
};

/**
 * When the credentials differ only in a token exchange's `scope` list, and
 * NEW's is a part of OLD's: the exchanged tokens carry less. The words, or
 * `undefined` for any other change.
 */
function fewerExchangeScopes(o: Credential[], n: Credential[]): string | undefined {
  if (o.length !== n.length || o.length === 0) return undefined;
  const words: string[] = [];
  for (const [i, a] of o.entries()) {
    const b = n[i];
    const was = a.exchange?.scopes;
    const now = b.exchange?.scopes;
    const rest = (c: Credential) => ({ ...c, exchange: { ...c.exchange!, scopes: undefined } });
    if (same(a, b)) continue;
    if (!was || !now || !same(rest(a), rest(b))) return undefined;
    if (!now.every((s) => was.includes(s))) return undefined;
    words.push(`token exchange asks for scopes ${now.join(" ")} (was ${was.join(" ")})`);
  }
  return words.length > 0 ? words.join("; ") : undefined;
}

/**
 * The declarations of every field of {@link Surface}, nested ones included.
 * `weir diff` compares two surfaces with them (src/diff/surface_diff.ts).
 */
export const SURFACE_DECLARATIONS: Declared<Surface> = {
  form: widens("another form of file serves another kind of surface", "form"),
  server: changes(
    "the server's name (a shared rate-limit bucket's key is compared on its own)",
    "server",
  ),
  file: ignored("the path the file was read from"),
  upstream: rule("wider", "another upstream may be another system", (o, n) => {
    const a = upstreamWords(o);
    const b = upstreamWords(n);
    return [{
      effect: "widen",
      what: a === b
        ? `${o?.kind === "http" ? "base-url" : "upstream"}: its literal value changed (not shown)`
        : `upstream ${a} -> ${b}`,
    }];
  }),
  database: rule("wider", "another database may hold other data", (o, n) => {
    const w = (d: typeof o) =>
      d === undefined ? "none" : `${d.driver} (PostgreSQL), DSN from ${sourceWords(d.dsn)}`;
    return [{
      effect: "widen",
      what: w(o) === w(n)
        ? `database: its literal value changed (not shown)`
        : `database ${w(o)} -> ${w(n)}`,
    }];
  }),
  credentials: rule(
    "either",
    "another credential may reach more; a token exchange asking for fewer scopes reaches less",
    (o, n) => {
      const fewer = fewerExchangeScopes(o ?? [], n ?? []);
      if (fewer) return [{ effect: "narrow", what: fewer }];
      const a = authWords({ credentials: o ?? [], upstream: { kind: "none" } });
      const b = authWords({ credentials: n ?? [], upstream: { kind: "none" } });
      return [{
        effect: "widen",
        what: a === b
          ? `auth: its literal value changed (not shown; another credential may reach more)`
          : `auth ${a} -> ${b} (another credential may reach more)`,
      }];
    },
  ),
  headers: HEADERS,
  callers: { why: "who may call", fields: CALLERS },
  rateLimit: RATE_LIMIT,
  connection: { why: "the connection to a wrapped MCP server", fields: CONNECTION },
  settings: { why: "the surface node", fields: SETTINGS },
  texts: { why: "text beside the tools", fields: TEXTS },
  readableResources: growthWidens(
    "a resource of the wrapped server readable through weir",
    (r) => `proxy-resource ${r} now readable`,
    (r) => `proxy-resource ${r} no longer readable`,
  ),
  aws: rule(
    "either",
    "another region, bucket or mode reaches other data; a prefix under the old one, fewer " +
      "parameters or content types, a smaller max-bytes reach less (src/diff/aws_scope.ts)",
    compareAwsScope,
  ),
  tools: TOOLS,
};
