/**
 * `weir verify` of a file that sends each caller's identity upstream (spec
 * mode's `auth token-exchange`, `token-exchange` in `mcp-server http`). Its
 * calls need callers with OAuth access tokens and an identity provider that
 * exchanges them; without them every call would be refused before the
 * upstream and verify would prove nothing. So verify starts a stand-in
 * identity provider (src/verify/idp.ts) and serves the file as
 * `weir serve --http` serves it with OAuth: the same resource server and
 * exchange client (`oauthFor`), the file's issuer, resource, profile and
 * audience, its metadata pointing at the stand-in's keys and token endpoint,
 * the exchange's secret or key a generated stand-in.
 *
 * The callers: `alice` and `bob`, whose tokens carry every scope of the file
 * (who may call is not what verify checks), take turns; one call in ten is
 * `mallory`'s, whose exchange the provider refuses; a call over stdio carries
 * no token at all. Each request that reaches the upstream must carry the
 * token exchanged for its own caller with its tool's scopes, and no caller's
 * own token; a call whose caller's identity cannot go upstream must reach
 * nothing and ask no one.
 *
 * @module
 */
import type { OAuthSetting, TokenExchangeSetting } from "../guardfile/model.ts";
import type { Logger } from "../mcp/server.ts";
import { oauthFor, type OAuthSetup } from "./serve.ts";
import type { StandInValues } from "./verify_values.ts";
import type { Caller } from "../verify/run.ts";
import type { Via } from "../verify/cases.ts";
import { checkIdentity, type ExchangeRules, standInKey, startStandInIdp } from "../verify/idp.ts";

/** The callers and the stand-in provider of one verify run. */
export interface StandInIdentity {
  /** The resource server and per-call credential, as serve builds them. */
  oauth: OAuthSetup;
  /** The exchange setting as served (the stand-in's endpoint, secret or key). */
  setting: TokenExchangeSetting;
  /** `Authorization` of a caller allowed every tool (for the listing). */
  listing: string;
  callerOf(index: number, via: Via): Caller;
  /** What is wrong with the identity a request that reached the upstream carries. */
  check(headers: readonly [string, string][], rest: string, caller: Caller, tool: string): string[];
  /** The provider's findings since last asked (the issued tokens join the secrets). */
  findings(): string[];
  notes: string[];
  stop(): Promise<void>;
}

const CALLERS = ["alice", "bob"];
const REFUSED = "mallory";

/**
 * Start the stand-in provider and build the file's OAuth against it.
 * @param oauth the file's `oauth` node (absent: the stand-in is the issuer)
 * @param toolScopes each served tool's scopes
 * @param values the run's stand-in values: the callers' tokens and every token issued join its secrets
 * @throws {Error} as `oauthFor` (a setting serve would refuse)
 */
export async function standInIdentity(
  oauth: OAuthSetting | undefined,
  given: TokenExchangeSetting,
  toolScopes: ReadonlyMap<string, readonly string[]>,
  values: StandInValues,
  log: Logger,
): Promise<StandInIdentity> {
  const setting: TokenExchangeSetting = structuredClone(given);
  const profile = oauth?.profile ?? "generic";
  const rules: ExchangeRules = {
    profile,
    clientId: setting.clientId,
    method: setting.client.method,
    ...(setting.audience === undefined ? {} : { audience: setting.audience }),
    ...(setting.resource === undefined ? {} : { resource: setting.resource }),
    ...(setting.subjectTokenType === undefined
      ? {}
      : { subjectTokenType: setting.subjectTokenType }),
    ...(setting.scopes === undefined ? {} : { scopes: setting.scopes }),
    ...(setting.clientCredentials ? { clientCredentials: setting.clientCredentials } : {}),
  };
  if (setting.client.method === "private_key_jwt") {
    const key = await standInKey(setting.client.alg);
    setting.client.key = values.source("token exchange private key", true, key.pem).source;
    rules.publicKey = key.publicKey;
  } else {
    const s = values.source("token exchange client secret", true);
    setting.client.secret = s.source;
    rules.secret = s.value;
  }
  const idp = await startStandInIdp(rules);
  const notes = [
    `callers: ${CALLERS.join(" and ")} (access tokens with every scope, from a stand-in ` +
    `identity provider), one call in ten ${REFUSED}'s (the provider refuses to exchange it), ` +
    `and calls over stdio (no token): each request upstream must carry its own caller's ` +
    `exchanged token`,
  ];
  if (setting.tokenEndpoint !== undefined) {
    notes.push(`the token endpoint is the stand-in's (the file names ${setting.tokenEndpoint})`);
  }
  setting.tokenEndpoint = idp.tokenEndpoint;
  if (!oauth) notes.push("the OAuth issuer is the stand-in (the file names none)");
  const issuer = oauth?.issuer ?? idp.url;
  const resource = oauth?.resource ?? "http://127.0.0.1:8080/mcp";
  let setup: OAuthSetup;
  try {
    setup = await oauthFor(
      () => toolScopes,
      {
        issuer,
        resource,
        ...(oauth?.profile === undefined ? {} : { profile: oauth.profile }),
        ...(oauth?.audience === undefined ? {} : { audience: oauth.audience }),
      },
      log,
      setting,
      {
        metadata: {
          issuer,
          jwks_uri: idp.jwksUri,
          token_endpoint: idp.tokenEndpoint,
          source: `${idp.url} (verify's stand-in identity provider)`,
        },
        resolver: values.resolver(),
      },
    );
  } catch (error) {
    await idp.stop();
    throw error;
  }
  const every = [...new Set([...toolScopes.values()].flat())].join(" ");
  const tokens = new Map<string, string>();
  for (const sub of [...CALLERS, REFUSED]) {
    const token = await idp.callerToken({
      iss: issuer,
      sub,
      aud: resource,
      scope: every,
      scp: every,
    });
    tokens.set(sub, token);
    values.secrets.push([`${sub}'s access token`, token]);
  }
  idp.refuse.add(REFUSED);
  return {
    oauth: setup,
    setting,
    listing: `Bearer ${tokens.get(CALLERS[0])}`,
    callerOf: (index, via) => {
      if (via === "stdio 2025-11-25") {
        return { name: "a stdio session", refused: "it carries no OAuth access token" };
      }
      if (index % 10 === 9) {
        return {
          name: REFUSED,
          authorization: `Bearer ${tokens.get(REFUSED)}`,
          refused: "the identity provider refuses to exchange its token",
        };
      }
      const name = CALLERS[index % CALLERS.length];
      return { name, authorization: `Bearer ${tokens.get(name)}` };
    },
    check: (headers, rest, caller, tool) =>
      checkIdentity(idp, headers, rest, caller.name, expectedScopes(rules, toolScopes, tool)),
    findings: () => {
      for (const token of idp.takeIssued()) values.secrets.push(["exchanged token", token]);
      return idp.take();
    },
    notes,
    stop: () => idp.stop(),
  };
}

/** The scopes a call of `tool` asks for (docs/oauth.md): the setting's, else the tool's. */
function expectedScopes(
  rules: ExchangeRules,
  toolScopes: ReadonlyMap<string, readonly string[]>,
  tool: string,
): readonly string[] {
  const scopes = rules.scopes ?? toolScopes.get(tool) ?? [];
  // Entra is asked for the API's `.default` when no scope is named.
  return scopes.length === 0 && rules.profile === "entra" ? [".default"] : scopes;
}
