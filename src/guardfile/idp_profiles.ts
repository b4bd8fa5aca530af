/**
 * What each identity-provider profile requires of its settings, as plain
 * checks on strings, so the loader, serve's flags and the token checks
 * (src/oauth/profiles.ts, which holds the rest of each profile) all refuse
 * the same settings in the same words. Pure: no I/O.
 *
 * @module
 */

/** An identity provider's profile, by the name `profile=` and `--oauth-profile` take. */
export type ProfileName = "generic" | "entra" | "okta" | "auth0" | "keycloak";

/** Every {@link ProfileName}, in the order messages list them. */
export const PROFILE_NAMES: readonly ProfileName[] = [
  "generic",
  "entra",
  "okta",
  "auth0",
  "keycloak",
];

/** Whether a string names a profile. */
export function isProfileName(name: string): name is ProfileName {
  return (PROFILE_NAMES as readonly string[]).includes(name);
}

/** Entra's v1 issuer host per v2 (login) host: the public cloud, US government, China. */
const ENTRA_V1_HOSTS: Readonly<Record<string, string>> = {
  "login.microsoftonline.com": "sts.windows.net",
  "login.microsoftonline.us": "sts.windows.net",
  "login.chinacloudapi.cn": "sts.chinacloudapi.cn",
  "login.partner.microsoftonline.cn": "sts.chinacloudapi.cn",
};
const ENTRA_MULTI_TENANT = new Set(["common", "organizations", "consumers"]);

/**
 * The v1 and v2 issuers of one Entra tenant, given either form
 * (`https://login.microsoftonline.com/<tenant>/v2.0` or
 * `https://sts.windows.net/<tenant>/`), or what is wrong with the issuer.
 */
export function entraIssuers(issuer: string): { v1: string; v2: string } | string {
  const url = new URL(issuer);
  const v2 = /^\/([^/]+)\/v2\.0\/?$/.exec(url.pathname);
  const v1 = /^\/([^/]+)\/?$/.exec(url.pathname);
  const tenant = v2?.[1] ?? (url.hostname.startsWith("sts.") ? v1?.[1] : undefined);
  if (!tenant) {
    return `profile entra needs the tenant's issuer, e.g. ` +
      `https://login.microsoftonline.com/<tenant-id>/v2.0 (not ${issuer})`;
  }
  if (ENTRA_MULTI_TENANT.has(tenant.toLowerCase())) {
    return `profile entra needs one tenant's issuer, not "${tenant}" (a multi-tenant ` +
      `endpoint names no single issuer): use https://login.microsoftonline.com/<tenant-id>/v2.0`;
  }
  if (v2) {
    const sts = ENTRA_V1_HOSTS[url.hostname] ?? "sts.windows.net";
    return { v2: issuer, v1: `https://${sts}/${tenant}/` };
  }
  const login = Object.entries(ENTRA_V1_HOSTS).find(([, sts]) => sts === url.hostname)?.[0] ??
    "login.microsoftonline.com";
  return { v1: issuer, v2: `https://${login}/${tenant}/v2.0` };
}

/** What a profile asks of the inbound settings. */
export interface InboundProfileSettings {
  issuer: string;
  audience?: string;
}

/** What a profile's exchange target must name. */
export interface ExchangeProfileTarget {
  audience?: string;
  resource?: string;
  subjectTokenType?: string;
  /** weir's own token for its connection (client credentials grant), when asked for. */
  clientCredentials?: { scopes: readonly string[] };
}

/** What each profile's `aud` is, for the message when `audience` is missing. */
const AUDIENCE_IS: Readonly<Record<Exclude<ProfileName, "generic">, string>> = {
  entra: "the API's application ID URI (api://<GUID>) or its application (client) ID",
  okta: "the authorization server's audience (e.g. api://default)",
  auth0: "the API identifier",
  keycloak: "the client ID that Keycloak's audience mapper puts in aud",
};

/**
 * What is wrong with inbound settings for a profile, or `null`.
 *
 * @example
 * ```ts
 * import { inboundProblem } from "./idp_profiles.ts";
 * const problem = inboundProblem("entra", { issuer: "https://login.microsoftonline.com/common/v2.0" });
 * if (problem === null || !problem.includes("one tenant")) throw new Error(String(problem));
 * ```
 */
export function inboundProblem(
  profile: ProfileName,
  settings: InboundProfileSettings,
): string | null {
  if (profile === "generic") return null;
  if (profile === "entra") {
    const issuers = entraIssuers(settings.issuer);
    if (typeof issuers === "string") return issuers;
  }
  if (profile === "keycloak" && !/\/realms\/[^/]+\/?$/.test(new URL(settings.issuer).pathname)) {
    return `profile keycloak needs the realm's issuer, https://<host>/realms/<realm> ` +
      `(not ${settings.issuer})`;
  }
  if (profile === "auth0" && !settings.issuer.endsWith("/")) {
    return `profile auth0: Auth0's issuer ends with "/" (write ${settings.issuer}/)`;
  }
  if (settings.audience === undefined) {
    return `profile ${profile} needs audience: ${AUDIENCE_IS[profile]}, which ${profile} ` +
      `puts in aud instead of the resource URI`;
  }
  return null;
}

/**
 * What is wrong with `client-credentials` (weir's own token) for a profile, or `null`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ownTokenProblem } from "./idp_profiles.ts";
 * assert.match(ownTokenProblem("okta", { scopes: [] })!, /add scope under client-credentials/);
 * assert.equal(ownTokenProblem("generic", { scopes: [] }), null);
 * ```
 */
export function ownTokenProblem(
  profile: ProfileName,
  own: { scopes: readonly string[] },
): string | null {
  if (profile === "entra" && own.scopes.length > 0) {
    return "profile entra: an application's own token (client credentials) is asked for " +
      "<application ID URI>/.default and carries the application roles granted to weir's " +
      "client: remove the scopes under client-credentials (--token-exchange-client-" +
      "credentials-scope) and grant the roles in Entra";
  }
  if (profile === "okta" && own.scopes.length === 0) {
    return "profile okta: Okta's client credentials grant needs at least one custom scope of " +
      "the authorization server: add scope under client-credentials " +
      "(--token-exchange-client-credentials-scope)";
  }
  return null;
}

/** Auth0 reserves these namespaces for its own token types (custom token exchange). */
const AUTH0_RESERVED = /^(https?:\/\/(www\.)?(auth0|okta)\.com|urn:(ietf|auth0|okta))(\/|:|$)/i;

/**
 * What is wrong with a token exchange's target for a profile, or `null`.
 *
 * @example
 * ```ts
 * import { exchangeProblem } from "./idp_profiles.ts";
 * if (exchangeProblem("okta", { audience: "api://tickets" }) !== null) throw new Error("okta");
 * if (exchangeProblem("okta", { resource: "https://api.example.com" }) === null) throw new Error("no audience");
 * ```
 */
export function exchangeProblem(
  profile: ProfileName,
  target: ExchangeProfileTarget,
): string | null {
  if (profile === "generic") {
    return target.audience || target.resource
      ? null
      : "say which upstream the exchanged token is for: set audience or resource (RFC 8693)";
  }
  const own = target.clientCredentials && ownTokenProblem(profile, target.clientCredentials);
  if (own) return own;
  if (!target.audience) {
    return `profile ${profile} exchanges for an audience, not a resource URI: set audience to ` +
      `the upstream's ${
        profile === "entra" ? "application ID URI (api://<GUID>) or application ID" : "identifier"
      } at ${profile}`;
  }
  if (target.resource) {
    return `profile ${profile} takes no resource (the provider refuses RFC 8707's parameter ` +
      `in a token exchange): remove it and keep audience`;
  }
  if (
    profile === "auth0" &&
    !(target.subjectTokenType && !AUTH0_RESERVED.test(target.subjectTokenType))
  ) {
    return "profile auth0: custom token exchange needs subject-token-type, a URI of your own " +
      "(not urn:ietf, urn:auth0, urn:okta or an auth0.com/okta.com URL) that the exchange's " +
      "profile at Auth0 names";
  }
  return null;
}
