/**
 * The block that sends each caller's identity upstream by OAuth token
 * exchange (RFC 8693): spec mode's `auth token-exchange { ... }` and the
 * `token-exchange { ... }` block of `mcp-server http`. Its children:
 *
 * ```kdl
 * auth token-exchange {
 *     audience "https://tickets.example.com"        // the upstream at the identity provider
 *     resource "https://tickets.example.com/api"    // RFC 8707 (profile generic only)
 *     scope "tickets:read" "tickets:write"          // default: each called tool's scopes
 *     token-endpoint "https://id.example.com/token" // default: the OAuth issuer's metadata
 *     subject-token-type "urn:..."                  // default: an access token (Auth0 needs its own)
 *     client-id "weir"
 *     client-secret { value env "WEIR_CLIENT_SECRET"; }   // method="post" for form fields
 *     // or: private-key-jwt alg="ES256" kid="weir-1" { value file "/run/secrets/weir.pem"; }
 *     client-credentials { scope "mcp:connect"; }   // mcp-server only: weir's own token (below)
 * }
 * ```
 *
 * `client-credentials` (the `mcp-server http` block's only): weir's own
 * connection to the MCP server (the handshake, the listings, each
 * re-verification) carries a token of weir's own from the same identity
 * provider, by the client credentials grant (RFC 6749 section 4.4) as the
 * same client; its `scope` children are asked for (default: none). Without
 * it, weir's own requests carry the block's other headers only. Spec mode
 * makes no request of its own, so its `auth token-exchange` refuses it.
 *
 * Pure: names the secret's source, never reads it; a `literal` secret or key
 * is refused (it would be a secret in review). Which profile applies is the
 * `oauth` node's (or `--oauth-profile`'s): {@link checkExchangeProfile}
 * checks a block against it.
 *
 * @module
 */
import type { OAuthSetting, TokenExchangeSetting } from "./model.ts";
import type { Diagnostics } from "./diagnostics.ts";
import { type NodeReader, onlyOnce, show } from "./nodes.ts";
import { readValue } from "./value.ts";
import { exchangeProblem, ownTokenProblem } from "./idp_profiles.ts";

export type { TokenExchangeSetting };

/** RFC 6749 section 3.3 scope-token: printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const CHILDREN = [
  "audience",
  "resource",
  "scope",
  "token-endpoint",
  "subject-token-type",
  "client-id",
  "client-secret",
  "private-key-jwt",
  "client-credentials",
];
/**
 * Asymmetric JWS algorithms a `private_key_jwt` client assertion may use (RFC 7518, RFC 8037):
 * what `alg=` accepts, and what the exchange client signs with (src/oauth/token_exchange.ts).
 */
export const ASSERTION_ALGORITHMS: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

function loopback(url: URL): boolean {
  const h = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** One string argument of a child, once. */
function single(kids: NodeReader[], name: string, what: string): string | undefined {
  const node = onlyOnce(kids, name);
  if (!node) return undefined;
  node.onlyProperties();
  node.noChildren();
  return node.argCount(1, 1, what) ? node.stringArg(0, name) : undefined;
}

/** An absolute URL child: https, or http on loopback; no fragment. */
function urlChild(kids: NodeReader[], name: string, what: string): string | undefined {
  const text = single(kids, name, what);
  if (text === undefined) return undefined;
  const node = kids.find((k) => k.name === name)!;
  if (!URL.canParse(text)) {
    node.error(`${name} ${show(text)} is not an absolute URL: write ${what}`);
    return undefined;
  }
  const url = new URL(text);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback(url))) {
    node.error(`${name} ${show(text)} must be https (http only on a loopback host)`);
    return undefined;
  }
  if (url.hash || text.includes("#") || url.username || url.password) {
    node.error(`${name} ${show(text)} must carry no #fragment and no credentials`);
    return undefined;
  }
  return text;
}

/** A secret's source: `value env|file ...` inside the node; never `literal`. */
function secretSource(node: NodeReader, what: string, example: string) {
  const value = onlyOnce(node.onlyChildren(["value"]), "value");
  if (!value) {
    node.error(`${node.name} says not where ${what} is read: add ${example}`);
    return undefined;
  }
  const source = readValue(value);
  if (source?.chain.some((c) => c.provider === "literal")) {
    value.error(
      `${what} written in the guardfile is a secret in review: read it from env or file ` +
        `instead of literal`,
    );
    return undefined;
  }
  return source;
}

/**
 * Read a `token-exchange` block's children (`node` is `auth token-exchange`
 * or `token-exchange`).
 * @returns the setting, or `undefined` after reporting what is wrong
 */
export function readTokenExchange(
  node: NodeReader,
  options: { connection: boolean },
): TokenExchangeSetting | undefined {
  const kids = node.onlyChildren(CHILDREN);
  if (node.node.children.length === 0) {
    node.error(
      `token exchange needs a block: the upstream's audience, weir's client-id and its ` +
        `client-secret or private-key-jwt, e.g. { audience "https://api.example.com"; ` +
        `client-id "weir"; client-secret { value env "WEIR_CLIENT_SECRET"; } }`,
    );
    return undefined;
  }
  const audience = single(
    kids,
    "audience",
    `the upstream's audience, e.g. audience "api://tickets"`,
  );
  const resource = urlChild(kids, "resource", `the upstream's URI, e.g. https://api.example.com`);
  const tokenEndpoint = urlChild(
    kids,
    "token-endpoint",
    `the provider's token endpoint, e.g. https://id.example.com/oauth2/token`,
  );
  const subjectTokenType = single(
    kids,
    "subject-token-type",
    `the subject token type URI, e.g. subject-token-type "https://weir.example.com/mcp-token"`,
  );
  const clientId = single(
    kids,
    "client-id",
    `weir's client ID at the provider, e.g. client-id "weir"`,
  );
  const scopes = scopeList(onlyOnce(kids, "scope"));
  const ownNode = onlyOnce(kids, "client-credentials");
  let clientCredentials: TokenExchangeSetting["clientCredentials"];
  if (ownNode) {
    ownNode.onlyProperties();
    ownNode.argCount(0, 0, "no arguments (its scope goes in the block)");
    const own = ownNode.onlyChildren(["scope"]);
    clientCredentials = {
      scopes: scopeList(onlyOnce(own, "scope")) ?? [],
      position: ownNode.node.position,
    };
    if (!options.connection) {
      ownNode.error(
        `client-credentials gets weir a token of its own for its connection to a wrapped MCP ` +
          `server; spec mode sends nothing but the callers' calls, each with its caller's ` +
          `exchanged token: remove client-credentials`,
      );
    }
  }
  const secretNode = onlyOnce(kids, "client-secret");
  const keyNode = onlyOnce(kids, "private-key-jwt");
  let client: TokenExchangeSetting["client"] | undefined;
  if (secretNode) {
    secretNode.onlyProperties(["method"]);
    secretNode.argCount(0, 0, "no arguments (the secret's source goes in the block)");
    const method = secretNode.stringProp("method") ?? "basic";
    if (method !== "basic" && method !== "post") {
      secretNode.error(
        `client-secret method=${show(method)}: write method="basic" (HTTP Basic, the default) ` +
          `or method="post" (form fields)`,
      );
    }
    const secret = secretSource(secretNode, "the client secret", `value env "WEIR_CLIENT_SECRET"`);
    if (secret && (method === "basic" || method === "post")) {
      client = {
        method: method === "post" ? "client_secret_post" : "client_secret_basic",
        secret,
      };
    }
  }
  if (keyNode) {
    keyNode.onlyProperties(["alg", "kid", "x5t"]);
    keyNode.argCount(0, 0, "no arguments (the key's source goes in the block)");
    const alg = keyNode.stringProp("alg");
    const kid = keyNode.stringProp("kid");
    const x5t = keyNode.stringProp("x5t");
    let ok = true;
    if (alg !== undefined && !ASSERTION_ALGORITHMS.includes(alg)) {
      keyNode.error(
        `private-key-jwt alg=${show(alg)}: use an asymmetric algorithm (${
          ASSERTION_ALGORITHMS.join(", ")
        })`,
      );
      ok = false;
    }
    if (x5t !== undefined && !/^[A-Za-z0-9_-]{27,43}$/.test(x5t)) {
      keyNode.error(
        `private-key-jwt x5t=${show(x5t)}: the certificate's SHA-1 thumbprint, base64url ` +
          `(27 characters)`,
      );
      ok = false;
    }
    const key = secretSource(keyNode, "the private key", `value file "/run/secrets/weir-key.pem"`);
    if (key && ok) {
      client = {
        method: "private_key_jwt",
        key,
        ...(alg === undefined ? {} : { alg }),
        ...(kid === undefined ? {} : { kid }),
        ...(x5t === undefined ? {} : { x5t }),
      };
    }
  }
  if (secretNode && keyNode) {
    keyNode.error(
      `client-secret and private-key-jwt are two ways for weir to authenticate to the token ` +
        `endpoint: keep one`,
    );
    client = undefined;
  } else if (!secretNode && !keyNode) {
    node.error(
      `token exchange needs weir's client authentication: add client-secret { value env ` +
        `"WEIR_CLIENT_SECRET"; } or private-key-jwt { value file "/run/secrets/weir-key.pem"; }`,
    );
  }
  if (clientId === undefined && !kids.some((k) => k.name === "client-id")) {
    node.error(
      `token exchange needs client-id: add client-id "<id>", weir's client ID at the identity ` +
        `provider`,
    );
  }
  if (
    audience === undefined && resource === undefined &&
    !kids.some((k) => /^(audience|resource)$/.test(k.name))
  ) {
    node.error(
      `token exchange needs audience (or, profile generic, resource): which upstream the ` +
        `exchanged token is for, e.g. audience "https://api.example.com"`,
    );
  }
  if (!client || clientId === undefined || (audience === undefined && resource === undefined)) {
    return undefined;
  }
  return {
    clientId,
    client,
    ...(audience === undefined ? {} : { audience }),
    ...(resource === undefined ? {} : { resource }),
    ...(scopes === undefined ? {} : { scopes }),
    ...(tokenEndpoint === undefined ? {} : { tokenEndpoint }),
    ...(subjectTokenType === undefined ? {} : { subjectTokenType }),
    ...(clientCredentials === undefined ? {} : { clientCredentials }),
    position: node.node.position,
  };
}

/** A `scope "a" "b"` node's scopes (RFC 6749 section 3.3 tokens, each once), or `undefined`. */
function scopeList(scopeNode: NodeReader | undefined): string[] | undefined {
  if (!scopeNode) return undefined;
  scopeNode.onlyProperties();
  scopeNode.noChildren();
  if (!scopeNode.argCount(1, Infinity, `one or more scopes, e.g. scope "tickets:read"`)) {
    return undefined;
  }
  const scopes: string[] = [];
  for (let i = 0; i < scopeNode.node.values.length; i++) {
    const value = scopeNode.stringArg(i, "a scope");
    if (value === undefined) continue;
    if (!SCOPE_TOKEN.test(value)) {
      scopeNode.error(
        `scope ${JSON.stringify(value)} is not an OAuth scope (RFC 6749 section 3.3: ` +
          `printable ASCII without spaces, '"' or '\\'); write each as its own string`,
      );
    } else if (scopes.includes(value)) {
      scopeNode.error(`scope ${JSON.stringify(value)} is listed twice; keep one`);
    } else scopes.push(value);
  }
  return scopes;
}

/**
 * Check an exchange block against the file's `oauth` node's profile (the
 * flags may name another at serve time; serve checks again then).
 * @param path the block's node path, for the diagnostic
 */
export function checkExchangeProfile(
  exchange: TokenExchangeSetting | undefined,
  oauth: OAuthSetting | undefined,
  diags: Diagnostics,
  path: string,
): void {
  if (!exchange) return;
  const profile = oauth?.profile ?? "generic";
  const { clientCredentials: own, ...target } = exchange;
  const ownProblem = own && ownTokenProblem(profile, own);
  if (ownProblem) {
    diags.error({ path, position: own.position ?? exchange.position }, ownProblem);
  }
  const problem = exchangeProblem(profile, target);
  if (problem) diags.error({ path, position: exchange.position }, problem);
}
