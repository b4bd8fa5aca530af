/**
 * serve-upstream's flags for the caller's identity: per-tool OAuth scopes
 * (`--tool-scope TOOL=SCOPE[ SCOPE...]`, what the guardfile form's `scope`
 * says) and token exchange (`--token-exchange-*`, what the `token-exchange`
 * block of `mcp-server http` says), read into the guardfile's shapes so one
 * implementation serves both forms. Every mistake is a usage error (exit 2).
 *
 * @module
 */
import type { TokenExchangeSetting, ValueSource } from "../guardfile/model.ts";
import { FlagError as UsageError } from "../ops/flags.ts";
import { exchangeProblem, type ProfileName } from "../guardfile/idp_profiles.ts";
import { processValues, resolveValue } from "../guard/values.ts";
import { lazy } from "../ops/lazy.ts";

/** The flag definitions, for `parseArgs`. */
export const IDENTITY_FLAGS = {
  "tool-scope": { type: "string", multiple: true },
  "token-exchange-audience": { type: "string" },
  "token-exchange-resource": { type: "string" },
  "token-exchange-scope": { type: "string", multiple: true },
  "token-exchange-endpoint": { type: "string" },
  "token-exchange-client-id": { type: "string" },
  "token-exchange-secret-env": { type: "string" },
  "token-exchange-secret-file": { type: "string" },
  "token-exchange-secret-post": { type: "boolean" },
  "token-exchange-key-file": { type: "string" },
  "token-exchange-key-alg": { type: "string" },
  "token-exchange-key-id": { type: "string" },
  "token-exchange-subject-token-type": { type: "string" },
  "token-exchange-client-credentials": { type: "boolean" },
  "token-exchange-client-credentials-scope": { type: "string", multiple: true },
} as const;

/** RFC 6749 section 3.3 scope-token. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * `--tool-scope TOOL=SCOPE[ SCOPE...]` (repeatable, once per tool): the
 * scopes a caller's token must all carry to list and call the tool.
 * @param allowlist the served tools
 * @throws {FlagError} a malformed value, a tool not on the allowlist, a tool named twice
 */
export function toolScopesFlag(
  specs: readonly string[] | undefined,
  allowlist: readonly string[],
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const spec of specs ?? []) {
    const eq = spec.indexOf("=");
    const tool = eq < 0 ? "" : spec.slice(0, eq);
    const scopes = eq < 0 ? [] : spec.slice(eq + 1).split(" ").filter(Boolean);
    if (tool === "" || scopes.length === 0) {
      throw new UsageError(
        `--tool-scope ${JSON.stringify(spec)}: write TOOL=SCOPE (several scopes separated by ` +
          `spaces, all required), e.g. --tool-scope 'create_issue=issues:write'`,
      );
    }
    if (!allowlist.includes(tool)) {
      throw new UsageError(`--tool-scope names ${tool}, which is not on the allowlist (--tool)`);
    }
    if (out.has(tool)) {
      throw new UsageError(`--tool-scope names ${tool} twice: give its scopes once`);
    }
    const bad = scopes.find((s) => !SCOPE_TOKEN.test(s));
    if (bad !== undefined) {
      throw new UsageError(
        `--tool-scope ${tool}: ${JSON.stringify(bad)} is not an OAuth scope (RFC 6749 section ` +
          `3.3: printable ASCII without spaces, '"' or '\\')`,
      );
    }
    out.set(tool, [...new Set(scopes)]);
  }
  return out;
}

type Values = { [K in keyof typeof IDENTITY_FLAGS]?: unknown };

/**
 * The token exchange the flags ask for, or `undefined` when none is given.
 * @throws {FlagError} a half-given setting (naming what is missing)
 */
export function exchangeFlags(values: Values): TokenExchangeSetting | undefined {
  const given = Object.keys(IDENTITY_FLAGS).filter((k) =>
    k.startsWith("token-exchange-") && values[k as keyof Values] !== undefined
  );
  if (given.length === 0) return undefined;
  const text = (k: keyof Values) => values[k] as string | undefined;
  const clientId = text("token-exchange-client-id");
  const audience = text("token-exchange-audience");
  const resource = text("token-exchange-resource");
  if (clientId === undefined || clientId.trim() === "") {
    throw new UsageError(
      `--${given[0]} needs --token-exchange-client-id: weir's client ID at the identity provider`,
    );
  }
  if (!audience && !resource) {
    throw new UsageError(
      "token exchange needs --token-exchange-audience (or, profile generic, " +
        "--token-exchange-resource): which upstream the exchanged token is for",
    );
  }
  for (const k of ["token-exchange-resource", "token-exchange-endpoint"] as const) {
    const url = text(k);
    if (url !== undefined && !URL.canParse(url)) {
      throw new UsageError(`--${k} ${url} is not an absolute URL`);
    }
  }
  const secretEnv = text("token-exchange-secret-env");
  const secretFile = text("token-exchange-secret-file");
  const keyFile = text("token-exchange-key-file");
  const ways = [secretEnv, secretFile, keyFile].filter((v) => v !== undefined).length;
  if (ways !== 1) {
    throw new UsageError(
      `token exchange needs exactly one of --token-exchange-secret-env VAR, ` +
        `--token-exchange-secret-file PATH or --token-exchange-key-file PATH (private_key_jwt)`,
    );
  }
  const keyOnly = ["token-exchange-key-alg", "token-exchange-key-id"] as const;
  if (!keyFile && keyOnly.some((k) => values[k] !== undefined)) {
    throw new UsageError("--token-exchange-key-alg and -key-id go with --token-exchange-key-file");
  }
  if (keyFile && values["token-exchange-secret-post"]) {
    throw new UsageError("--token-exchange-secret-post goes with a client secret, not a key");
  }
  const source = (provider: string, address: string): ValueSource => ({
    chain: [{ provider, address }],
  });
  const alg = text("token-exchange-key-alg");
  const kid = text("token-exchange-key-id");
  const client: TokenExchangeSetting["client"] = keyFile
    ? {
      method: "private_key_jwt",
      key: source("file", keyFile),
      ...(alg === undefined ? {} : { alg }),
      ...(kid === undefined ? {} : { kid }),
    }
    : {
      method: values["token-exchange-secret-post"] ? "client_secret_post" : "client_secret_basic",
      secret: secretEnv !== undefined ? source("env", secretEnv) : source("file", secretFile!),
    };
  const scopes = values["token-exchange-scope"] as string[] | undefined;
  const ownScopes = values["token-exchange-client-credentials-scope"] as string[] | undefined;
  const own = values["token-exchange-client-credentials"] || ownScopes !== undefined;
  for (const scope of [...(scopes ?? []), ...(ownScopes ?? [])].flatMap((s) => s.split(" "))) {
    if (scope !== "" && !SCOPE_TOKEN.test(scope)) {
      throw new UsageError(
        `--token-exchange-*scope ${JSON.stringify(scope)} is not an OAuth scope (RFC 6749 ` +
          `section 3.3: printable ASCII without spaces, '"' or '\\')`,
      );
    }
  }
  const endpoint = text("token-exchange-endpoint");
  const subjectTokenType = text("token-exchange-subject-token-type");
  return {
    clientId,
    client,
    ...(audience ? { audience } : {}),
    ...(resource ? { resource } : {}),
    ...(scopes ? { scopes: scopes.flatMap((s) => s.split(" ").filter(Boolean)) } : {}),
    ...(endpoint === undefined ? {} : { tokenEndpoint: endpoint }),
    ...(subjectTokenType === undefined ? {} : { subjectTokenType }),
    ...(own
      ? {
        clientCredentials: {
          scopes: [...new Set((ownScopes ?? []).flatMap((s) => s.split(" ").filter(Boolean)))],
        },
      }
      : {}),
  };
}

/**
 * Why a token exchange cannot work as configured, checked before serving
 * (a usage error, exit 2), or `undefined`: no OAuth to take callers' tokens
 * from, a target the profile cannot ask for, a secret or key that cannot be
 * read (named by its source, never its value).
 * @param at where the setting was written (`file:line:col`, or the flags)
 */
export async function exchangeStartProblem(
  exchange: TokenExchangeSetting,
  oauth: { profile?: ProfileName } | undefined,
  at: string,
): Promise<string | undefined> {
  if (!oauth) {
    return `${at}: token exchange sends each caller's identity upstream by exchanging the ` +
      `caller's OAuth access token: serve over --http with --oauth-issuer and ` +
      `--oauth-resource (or an oauth node)`;
  }
  const problem = exchangeProblem(oauth.profile ?? "generic", exchange);
  if (problem) return `${at}: ${problem}`;
  const c = exchange.client;
  try {
    const what = c.method === "private_key_jwt" ? "the private key" : "the client secret";
    const text = (await resolveValue(
      c.method === "private_key_jwt" ? c.key : c.secret,
      processValues,
      `${what} of the token exchange`,
    )).value;
    if (c.method === "private_key_jwt") {
      // jose is loaded only when a token exchange is configured.
      const { importAssertionKey } = await lazy<typeof import("../oauth/token_exchange.ts")>(
        "oauth_token_exchange",
      );
      await importAssertionKey(text, c.alg);
    }
  } catch (error) {
    return `${at}: ${
      (error as Error).message.replace(/^[a-z_]+: /, "").replace(" (checked at every call)", "")
    }`;
  }
  return undefined;
}
