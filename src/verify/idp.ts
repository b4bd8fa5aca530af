/**
 * The stand-in identity provider `weir verify` serves a file against when
 * the file sends each caller's identity upstream (`auth token-exchange`, or
 * `token-exchange` in `mcp-server http`): on 127.0.0.1 only, it signs the
 * callers' access tokens (JWTs, its key in its JWKS) and answers weir's token
 * requests, and it holds each token request to what the file and
 * docs/oauth.md say weir asks, written from the docs and not from weir's
 * client (src/oauth/), so that a fault there shows as a difference:
 *
 * - weir's client authenticated as the file says: HTTP Basic with the client
 *   ID and secret form-encoded (RFC 6749 section 2.3.1), the form fields
 *   (`method="post"`), or a client assertion signed with the file's key
 *   (RFC 7523 section 2.2: `iss` and `sub` the client ID, `aud` the endpoint);
 * - the grant the profile uses: RFC 8693 token exchange with the caller's
 *   token as `subject_token` (its type the file's `subject-token-type`, else
 *   an access token), `audience` as the file says, `resource` only for the
 *   `generic` profile; Entra's on-behalf-of grant (RFC 7523's JWT bearer
 *   grant with `requested_token_use=on_behalf_of`, the caller's token as
 *   `assertion`, every scope under the API's URI);
 * - the subject token one of the callers' own;
 * - with `client-credentials`, weir's own token by RFC 6749 section 4.4's
 *   grant: the same client, `audience` (generic, auth0) and `resource`
 *   (generic) as the file says, the file's scopes, Entra's
 *   `<API URI>/.default`; never a caller's (it is no exchanged token, so
 *   {@link checkIdentity} finds it on a caller's request).
 *
 * A request that is not is a finding (and is refused as the provider would);
 * a caller in `refuse` is refused `invalid_grant`, as a provider refuses a
 * caller without consent. Every token it issues is recorded with its caller
 * and the scopes asked for, so a request that reaches the upstream can be
 * held to the caller who made the call ({@link checkIdentity}).
 *
 * @module
 */
import { exportJWK, exportPKCS8, generateKeyPair, type JWK, jwtVerify, SignJWT } from "jose";

/** What every token request must hold: the file's `token-exchange` setting and profile. */
export interface ExchangeRules {
  /** The identity-provider profile (`generic` when the file names none). */
  profile: string;
  clientId: string;
  method: "client_secret_basic" | "client_secret_post" | "private_key_jwt";
  /** The stand-in client secret (secret methods). */
  secret?: string;
  /** The public half of the stand-in key (`private_key_jwt`). */
  publicKey?: CryptoKey;
  audience?: string;
  resource?: string;
  subjectTokenType?: string;
  /** The setting's fixed scopes; absent: each call asks for its tool's. */
  scopes?: readonly string[];
  /** `client-credentials`: weir may ask its own token, for these scopes. */
  clientCredentials?: { scopes: readonly string[] };
}

/** A token the stand-in issued: for whom, with which scopes. */
export interface IssuedToken {
  subject: string;
  /** The scopes asked for, as the file writes them (Entra's API URI taken off). */
  scopes: string[];
}

/** A running stand-in identity provider. */
export interface StandInIdp {
  /** Its origin (`http://127.0.0.1:PORT`), the issuer when the file names none. */
  url: string;
  tokenEndpoint: string;
  jwksUri: string;
  /** Sign a caller's access token. */
  callerToken(claims: Record<string, unknown> & { sub: string; iss: string }): Promise<string>;
  /** Every caller token signed, with its subject. */
  callers: Map<string, string>;
  /** Every token issued by an exchange. */
  issued: Map<string, IssuedToken>;
  /** Subjects whose exchange is refused (`invalid_grant`). */
  refuse: Set<string>;
  /** Token requests not as the file says, not yet taken (see {@link StandInIdp.take}). */
  take(): string[];
  /** Tokens issued (to add to the secrets searched for), not yet taken. */
  takeIssued(): string[];
  stop(): Promise<void>;
}

/** RFC 8693 and RFC 7523 names. */
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Entra's API URI a scope is asked under (docs/oauth.md: `api://<GUID>/name`). */
export function entraApiUri(audience: string | undefined): string {
  const a = audience ?? "";
  return (GUID.test(a) ? `api://${a}` : a).replace(/\/$/, "");
}

/**
 * A key pair for the file's `private-key-jwt` (its `alg`, default RS256):
 * the private key as PKCS#8 PEM, for the file's stand-in key source.
 */
export async function standInKey(alg = "RS256"): Promise<{ pem: string; publicKey: CryptoKey }> {
  const pair = await generateKeyPair(alg, { extractable: true });
  return { pem: await exportPKCS8(pair.privateKey), publicKey: pair.publicKey };
}

/** The scopes of a `scope` field, as the file writes them. */
function scopesAsked(field: string | null, rules: ExchangeRules): string[] {
  const asked = (field ?? "").split(" ").filter(Boolean);
  if (rules.profile !== "entra") return asked;
  const uri = `${entraApiUri(rules.audience)}/`;
  return asked.map((s) => (s.startsWith(uri) ? s.slice(uri.length) : s));
}

/** What is wrong with a token request's grant fields, or `undefined`. */
function grantProblem(form: URLSearchParams, rules: ExchangeRules): string | undefined {
  const field = (name: string) => form.get(name) ?? undefined;
  const expect = (name: string, want: string | undefined) =>
    field(name) === want
      ? undefined
      : `${name} is ${JSON.stringify(field(name) ?? null)}, the file says ${
        JSON.stringify(want ?? null)
      }`;
  if (field("grant_type") === "client_credentials") {
    const own = rules.clientCredentials;
    if (!own) return "asked weir's own token (client credentials), which the file does not say";
    if (rules.profile === "entra") {
      return expect("scope", `${entraApiUri(rules.audience)}/.default`) ??
        expect("resource", undefined) ?? expect("audience", undefined);
    }
    const takes = { generic: [true, true], auth0: [false, true] }[rules.profile] ??
      [false, false];
    return expect("resource", takes[0] ? rules.resource : undefined) ??
      expect("audience", takes[1] ? rules.audience : undefined) ??
      expect("scope", own.scopes.length > 0 ? own.scopes.join(" ") : undefined);
  }
  if (rules.profile === "entra") {
    const scopes = field("scope")?.split(" ") ?? [];
    const uri = entraApiUri(rules.audience);
    return expect("grant_type", JWT_BEARER) ?? expect("requested_token_use", "on_behalf_of") ??
      expect("resource", undefined) ??
      (scopes.every((s) => s.startsWith(`${uri}/`) || s.includes("://"))
        ? undefined
        : `scope ${JSON.stringify(field("scope"))} is not asked under the API's URI ${uri}`);
  }
  return expect("grant_type", TOKEN_EXCHANGE) ??
    expect("subject_token_type", rules.subjectTokenType ?? ACCESS_TOKEN) ??
    expect("audience", rules.audience) ??
    expect("resource", rules.profile === "generic" ? rules.resource : undefined) ??
    (rules.scopes && scopesAsked(field("scope") ?? null, rules).join(" ") !== rules.scopes.join(" ")
      ? `scope ${JSON.stringify(field("scope") ?? null)} is not the file's fixed scopes`
      : undefined);
}

/** What is wrong with weir's client authentication, or `undefined`. */
async function clientProblem(
  request: Request,
  form: URLSearchParams,
  rules: ExchangeRules,
  endpoint: string,
): Promise<string | undefined> {
  const basic = /^Basic (.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (rules.method === "client_secret_basic") {
    if (form.has("client_secret")) return "the client secret was sent in the form, not Basic";
    let pair: string[] = [];
    try {
      pair = atob(basic ?? "").split(":").map((p) => decodeURIComponent(p.replaceAll("+", " ")));
    } catch { /* not Basic */ }
    return pair.length === 2 && pair[0] === rules.clientId && pair[1] === rules.secret
      ? undefined
      : "HTTP Basic does not carry the file's client ID and secret (RFC 6749 2.3.1)";
  }
  if (basic !== undefined) return "HTTP Basic was sent, and the file says another method";
  if (rules.method === "client_secret_post") {
    return form.get("client_id") === rules.clientId && form.get("client_secret") === rules.secret
      ? undefined
      : "client_id and client_secret are not the file's";
  }
  if (form.get("client_assertion_type") !== ASSERTION_TYPE) {
    return "client_assertion_type is not RFC 7523's";
  }
  try {
    const { payload } = await jwtVerify(form.get("client_assertion") ?? "", rules.publicKey!, {
      issuer: rules.clientId,
      subject: rules.clientId,
      audience: endpoint,
    });
    if (typeof payload.exp !== "number" || typeof payload.jti !== "string") {
      return "the client assertion has no exp or jti";
    }
  } catch (error) {
    return `the client assertion does not verify (${(error as Error).message})`;
  }
  return form.get("client_secret") === null ? undefined : "a client secret was sent too";
}

/** Start the stand-in identity provider (see the module doc). */
export async function startStandInIdp(rules: ExchangeRules): Promise<StandInIdp> {
  const signing = await generateKeyPair("ES256");
  const jwk: JWK = { ...(await exportJWK(signing.publicKey)), kid: "verify", alg: "ES256" };
  const callers = new Map<string, string>();
  const issued = new Map<string, IssuedToken>();
  const refuse = new Set<string>();
  let findings: string[] = [];
  let fresh: string[] = [];
  const refused = (status: number, error: string) => Response.json({ error }, { status });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
    const path = new URL(r.url).pathname;
    if (path === "/jwks") return Response.json({ keys: [jwk] });
    if (path !== "/token") return new Response(null, { status: 404 });
    const problem = (what: string, status: number, error: string) => {
      findings.push(`the token request ${what}`);
      return refused(status, error);
    };
    if (r.method !== "POST") return problem(`used ${r.method}, not POST`, 405, "invalid_request");
    if (!/^application\/x-www-form-urlencoded\b/.test(r.headers.get("content-type") ?? "")) {
      return problem("is not form-encoded", 400, "invalid_request");
    }
    const form = new URLSearchParams(await r.text());
    const client = await clientProblem(r, form, rules, endpoint);
    if (client) {
      return problem(`authenticated weir's client wrongly: ${client}`, 401, "invalid_client");
    }
    const grant = grantProblem(form, rules);
    if (grant) return problem(`is not as the file says: ${grant}`, 400, "invalid_request");
    if (form.get("grant_type") === "client_credentials") {
      // weir's own token: a secret to search for, never a caller's identity.
      const own = `wo-${crypto.randomUUID().replaceAll("-", "")}`;
      fresh.push(own);
      return Response.json({ access_token: own, token_type: "Bearer", expires_in: 300 });
    }
    const subjectToken = form.get(rules.profile === "entra" ? "assertion" : "subject_token") ?? "";
    const subject = callers.get(subjectToken);
    if (subject === undefined) {
      return problem("exchanged a token that is not a caller's own", 400, "invalid_grant");
    }
    if (refuse.has(subject)) return refused(400, "invalid_grant");
    const bytes = crypto.getRandomValues(new Uint8Array(18));
    const token = `wx-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}+/x=`;
    issued.set(token, { subject, scopes: scopesAsked(form.get("scope"), rules) });
    fresh.push(token);
    return Response.json({
      access_token: token,
      token_type: "Bearer",
      issued_token_type: ACCESS_TOKEN,
      expires_in: 300,
    });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const endpoint = `${url}/token`;
  return {
    url,
    tokenEndpoint: endpoint,
    jwksUri: `${url}/jwks`,
    callerToken: async (claims) => {
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", kid: "verify", typ: "at+jwt" })
        .setIssuedAt()
        .setJti(crypto.randomUUID())
        .setExpirationTime("1h")
        .sign(signing.privateKey);
      callers.set(token, claims.sub);
      return token;
    },
    callers,
    issued,
    refuse,
    take: () => {
      const taken = findings;
      findings = [];
      return taken;
    },
    takeIssued: () => {
      const taken = fresh;
      fresh = [];
      return taken;
    },
    stop: () => server.shutdown(),
  };
}

/**
 * What is wrong with the identity a request that reached the upstream
 * carries, for a call by `caller` of a tool asking `scopes`: its
 * `Authorization` must be a token the stand-in issued to that caller with
 * those scopes, and no caller's own token may be anywhere in it.
 * @param headers the request's header fields as received
 * @param rest everything else the request carried (target, body or arguments), as text
 */
export function checkIdentity(
  idp: StandInIdp,
  headers: readonly [string, string][],
  rest: string,
  caller: string,
  scopes: readonly string[],
): string[] {
  const problems: string[] = [];
  const authorization = headers.filter(([k]) => k.toLowerCase() === "authorization");
  const token = authorization.length === 1
    ? /^Bearer (\S+)$/.exec(authorization[0][1])?.[1]
    : undefined;
  const issued = token === undefined ? undefined : idp.issued.get(token);
  if (!issued) {
    problems.push(
      `the upstream got ${
        authorization.length === 0 ? "no Authorization" : "an Authorization"
      } that is not a token exchanged for the caller`,
    );
  } else if (issued.subject !== caller) {
    problems.push(`${caller}'s call carried the token exchanged for ${issued.subject}`);
  } else if ([...issued.scopes].sort().join(" ") !== [...scopes].sort().join(" ")) {
    problems.push(
      `${caller}'s call carried a token asked for scopes "${issued.scopes.join(" ")}", ` +
        `not the tool's "${scopes.join(" ")}"`,
    );
  }
  const all = headers.map(([k, v]) => `${k}: ${v}`).join("\n") + "\n" + rest;
  for (const [own, subject] of idp.callers) {
    if (all.includes(own)) problems.push(`${subject}'s own access token reached the upstream`);
  }
  return problems;
}
