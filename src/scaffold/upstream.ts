/**
 * The upstream of a scaffolded guardfile: its `base-url` from the document's
 * `servers`, and its one `auth` from the security schemes the chosen
 * operations declare (OpenAPI 3.1 sections 4.8.1 Server Object and 4.8.27
 * Security Scheme Object).
 *
 * A guardfile sends one credential to one upstream. The scheme chosen is the
 * one the most chosen operations accept; an operation that accepts only
 * another scheme is still written, with a note that this file does not send
 * its credential.
 *
 * @module
 */
import { isObject, type Json, type OpenApiDocument, type Operation } from "./document.ts";
import { isCredentialHeader } from "../guardfile/header_inputs.ts";

/** How the scaffold authenticates to the upstream. */
export type AuthPlan =
  | { kind: "none"; scheme?: string; note: string }
  | { kind: "bearer"; scheme: string; env: string; note?: string }
  | { kind: "header"; scheme: string; header: string; prefix?: string; env: string; note?: string }
  | { kind: "query"; scheme: string; param: string; env: string; note?: string };

/** The base URL: a literal URL, or read from an environment variable when the document has none usable. */
export type BaseUrlPlan =
  | { kind: "literal"; url: string; note?: string }
  | { kind: "env"; env: string; note: string };

/** An environment variable name from the server name: `github` -> `GITHUB_TOKEN`. */
export function envName(server: string, suffix: string): string {
  const stem = server.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  return `${/^[A-Z]/.test(stem) ? stem : `API${stem ? "_" + stem : ""}`}_${suffix}`;
}

/**
 * The base URL of the document's first server, its variables at their defaults.
 * @returns a literal `http(s)` URL, or an environment variable when the URL is
 *   relative, missing, or has a variable without a default
 */
export function chooseBaseUrl(doc: OpenApiDocument, server: string): BaseUrlPlan {
  const env = envName(server, "BASE_URL");
  const first = doc.servers[0];
  if (!first || typeof first.url !== "string" || first.url.trim() === "") {
    return {
      kind: "env",
      env,
      note: `the document names no server: set ${env} to the API's base URL`,
    };
  }
  const vars = isObject(first.variables) ? first.variables : {};
  let missing = "";
  const url = first.url.replace(/\{([^{}]*)\}/g, (_, name: string) => {
    const v = vars[name];
    if (isObject(v) && typeof v.default === "string") return v.default;
    missing ||= name;
    return `{${name}}`;
  });
  if (missing) {
    return {
      kind: "env",
      env,
      note:
        `the document's server ${
          shownUrl(first.url)
        } has variable {${missing}} without a default: ` +
        `set ${env} to the API's base URL`,
    };
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    return {
      kind: "env",
      env,
      note:
        `the document's server ${
          JSON.stringify(shownUrl(first.url))
        } is not an absolute http(s) URL ` +
        `(a relative one is relative to wherever the document is served): set ${env} to the API's base URL`,
    };
  }
  if (parsed.username || parsed.password || parsed.search || parsed.hash) {
    return {
      kind: "env",
      env,
      note: `the document's server URL holds credentials, a query or a fragment, which ` +
        `base-url refuses: set ${env} to the API's base URL`,
    };
  }
  const literal = url.replace(/\/+$/, "");
  return doc.servers.length > 1
    ? {
      kind: "literal",
      url: literal,
      note: `the first of ${doc.servers.length} servers the document lists`,
    }
    : { kind: "literal", url: literal };
}

/**
 * A server URL as a note shows it: any userinfo (`user:password@`, RFC 3986
 * section 3.2.1) before the host is replaced, so a credential written into a
 * document is not copied into the guardfile.
 */
function shownUrl(url: string): string {
  return url.replace(/^([^/?#]*\/\/)[^/?#]*@/, "$1[redacted]@");
}

/**
 * Choose the one auth of the file.
 * @param doc the document
 * @param ops the operations that vote: the selected ones, or all when none is selected
 * @param server the server name (for environment variable names)
 */
export function chooseAuth(doc: OpenApiDocument, ops: Operation[], server: string): AuthPlan {
  const votes = new Map<string, number>();
  for (const op of ops) {
    for (const alternative of op.security) {
      const names = Object.keys(alternative);
      if (names.length === 1 && doc.securitySchemes[names[0]]) {
        votes.set(names[0], (votes.get(names[0]) ?? 0) + 1);
      }
    }
  }
  const order = Object.keys(doc.securitySchemes);
  const ranked = [...votes.entries()].sort((a, b) =>
    b[1] - a[1] || order.indexOf(a[0]) - order.indexOf(b[0])
  );
  if (ranked.length === 0) {
    const key = headerParameterKey(doc, ops, server);
    if (key) return key;
    return {
      kind: "none",
      note: Object.keys(doc.securitySchemes).length === 0
        ? `the document declares no security scheme; if the API needs a credential, write ` +
          `auth bearer { value env "${envName(server, "TOKEN")}"; } (docs/guardfile.md, "auth")`
        : `no chosen operation declares a security scheme weir can send`,
    };
  }
  for (const [name] of ranked) {
    const plan = authOfScheme(name, doc.securitySchemes[name], server);
    if (plan) return plan;
  }
  return {
    kind: "none",
    note: `the operations' security schemes (${ranked.map(([n]) => n).join(", ")}) are ` +
      `not ones weir sends (mutual TLS, HTTP digest, a cookie weir cannot name)`,
  };
}

/**
 * An API key the operations declare as a header parameter rather than a
 * security scheme (`api_key`, `X-API-Key`, `Authorization`): the parameter an
 * apiKey scheme names, or one named like a credential
 * (src/guardfile/header_inputs.ts `isCredentialHeader`), the one most
 * operations declare. It becomes the file's `auth header-token`, read from
 * the environment, so no agent chooses it.
 */
function headerParameterKey(
  doc: OpenApiDocument,
  ops: Operation[],
  server: string,
): AuthPlan | undefined {
  const schemeNames = new Map<string, string>();
  for (const [name, scheme] of Object.entries(doc.securitySchemes)) {
    if (scheme.type === "apiKey" && scheme.in === "header" && typeof scheme.name === "string") {
      schemeNames.set(scheme.name.toLowerCase(), name);
    }
  }
  const counts = new Map<string, { header: string; n: number }>();
  for (const op of ops) {
    for (const p of op.parameters) {
      if (p.in !== "header" || typeof p.name !== "string" || !HEADER_TOKEN.test(p.name)) continue;
      const lower = p.name.toLowerCase();
      if (!schemeNames.has(lower) && !isCredentialHeader(p.name) && lower !== "authorization") {
        continue;
      }
      if (RESERVED_HEADERS.has(lower)) continue;
      const seen = counts.get(lower) ?? { header: p.name, n: 0 };
      seen.n++;
      counts.set(lower, seen);
    }
  }
  const best = [...counts.entries()].sort((a, b) => b[1].n - a[1].n)[0];
  if (!best) return undefined;
  const [lower, { header, n }] = best;
  const env = envName(server, "API_KEY");
  return {
    kind: "header",
    scheme: schemeNames.get(lower) ?? "",
    header,
    env,
    note: `the API's key is the header parameter "${header}" of ${n} operation${
      n === 1 ? "" : "s"
    } (no security scheme says so): weir sends it from ${env}; no caller gives it`,
  };
}

const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function authOfScheme(name: string, scheme: Json, server: string): AuthPlan | undefined {
  const type = typeof scheme.type === "string" ? scheme.type : "";
  if (type === "http") {
    const s = typeof scheme.scheme === "string" ? scheme.scheme.toLowerCase() : "";
    if (s === "bearer") return { kind: "bearer", scheme: name, env: envName(server, "TOKEN") };
    if (s === "basic") {
      const env = envName(server, "BASIC_CREDENTIALS");
      return {
        kind: "header",
        scheme: name,
        header: "Authorization",
        prefix: "Basic ",
        env,
        note: `HTTP Basic: ${env} holds base64 of "user:password"`,
      };
    }
    return undefined;
  }
  if (type === "oauth2" || type === "openIdConnect") {
    const env = envName(server, "TOKEN");
    return {
      kind: "bearer",
      scheme: name,
      env,
      note: `${type}: weir does not run the flow; ${env} holds an access token it sends as Bearer`,
    };
  }
  if (type === "apiKey" && typeof scheme.name === "string" && scheme.name !== "") {
    const env = envName(server, "API_KEY");
    if (scheme.in === "header") {
      return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(scheme.name) &&
          !RESERVED_HEADERS.has(scheme.name.toLowerCase())
        ? { kind: "header", scheme: name, header: scheme.name, env }
        : undefined;
    }
    if (scheme.in === "query") return { kind: "query", scheme: name, param: scheme.name, env };
    if (scheme.in === "cookie" && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(scheme.name)) {
      return {
        kind: "header",
        scheme: name,
        header: "Cookie",
        prefix: `${scheme.name}=`,
        env,
        note: `the key is a cookie: sent as the Cookie header "${scheme.name}=<${env}>"`,
      };
    }
  }
  return undefined;
}

/** Headers `auth header-token` may not name (docs/guardfile.md, "header"); Authorization is allowed. */
const RESERVED_HEADERS = new Set([
  "proxy-authorization",
  "content-type",
  "content-length",
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
]);

/** Whether an operation accepts the file's credential (or needs none). */
export function acceptsAuth(op: Operation, auth: AuthPlan): boolean {
  if (op.security.length === 0) return true;
  return op.security.some((alt) => {
    const names = Object.keys(alt);
    return names.length === 0 ||
      (names.length === 1 && auth.kind !== "none" && names[0] === auth.scheme);
  });
}
