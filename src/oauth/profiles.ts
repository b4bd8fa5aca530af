/**
 * Identity-provider profiles: how real authorization servers depart from
 * the letter of the OAuth specs, as one table selected by one setting
 * (`oauth ... profile="entra"`, `--oauth-profile entra`). A profile says,
 * for the tokens callers bring (the resource server's side) and for the
 * token exchange weir makes on a caller's behalf:
 *
 * - which `iss` values a token may carry for the configured issuer
 *   ({@link IdentityProfile.issuers}): Entra ID issues v1 tokens
 *   (`https://sts.windows.net/<tenant>/`) and v2 tokens
 *   (`https://login.microsoftonline.com/<tenant>/v2.0`) from one tenant;
 * - which `aud` values name this server ({@link IdentityProfile.audiences}):
 *   the RFC 8707 resource, and the provider's own audience (`audience=`):
 *   Entra's application ID URI (`api://<GUID>`) and its GUID, Okta's
 *   authorization server audience, Auth0's API identifier, a Keycloak client;
 * - where the caller's scopes sit ({@link IdentityProfile.scopes}): `scope`
 *   (RFC 9068), `scp` (a list at Okta, a space-separated string at Entra),
 *   Entra's app `roles`, Auth0's RBAC `permissions`, Keycloak's realm and
 *   client roles;
 * - how a scope is written where a client asks for one
 *   ({@link IdentityProfile.requestScope}): Entra wants `api://<GUID>/name`;
 * - how the exchange is asked ({@link IdentityProfile.exchangeFields}):
 *   RFC 8693 token exchange with `resource`/`audience` (generic), without
 *   `resource` (Okta, Auth0, Keycloak: each takes `audience`; Auth0 needs a
 *   custom `subject_token_type`), or Entra's on-behalf-of flow (the RFC 7523
 *   JWT bearer grant with `requested_token_use=on_behalf_of`; Entra refuses
 *   RFC 8707 `resource` and RFC 8693 alike).
 *
 * Pure: no I/O.
 *
 * @module
 */

import {
  entraIssuers,
  exchangeProblem,
  type ExchangeProfileTarget,
  inboundProblem,
  isProfileName,
  PROFILE_NAMES,
  type ProfileName,
} from "../guardfile/idp_profiles.ts";

export { isProfileName, PROFILE_NAMES, type ProfileName };

/** What the operator configured for inbound tokens. */
export interface InboundSettings {
  /** The authorization server's issuer identifier, as discovery confirmed it. */
  issuer: string;
  /** This server's canonical URI (RFC 8707). */
  resource: string;
  /** The provider's audience for this server (an application ID URI, an API identifier, a client). */
  audience?: string;
}

/** What an exchanged token is asked for. */
export interface ExchangeTarget {
  /** The upstream's audience at the provider (a URI, an identifier, a client ID). */
  audience?: string;
  /** The upstream's RFC 8707 resource URI (generic profile only). */
  resource?: string;
  /** Scopes asked for (may be empty). */
  scopes: readonly string[];
  /** `subject_token_type` (default: an access token, RFC 8693 section 3). */
  subjectTokenType?: string;
}

/** RFC 8693 section 2.1 `grant_type`. */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
/** RFC 7523 section 2.1 `grant_type` (Entra's on-behalf-of flow uses it). */
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** RFC 8693 section 3: an OAuth 2.0 access token. */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/** One profile (see the module doc). */
export interface IdentityProfile {
  readonly name: ProfileName;
  /** The `iss` values a token may carry. */
  issuers(settings: InboundSettings): string[];
  /** The `aud` values that name this server (a token must carry one). */
  audiences(settings: InboundSettings): string[];
  /** The caller's scopes, from verified claims. */
  scopes(claims: Readonly<Record<string, unknown>>, settings: InboundSettings): string[];
  /** A scope as a client asks the provider for it (metadata, `WWW-Authenticate`). */
  requestScope(scope: string, settings: InboundSettings): string;
  /** The token request's fields besides client authentication. */
  exchangeFields(subjectToken: string, target: ExchangeTarget): [string, string][];
  /** weir's own token request (client credentials grant) besides client authentication. */
  clientCredentialsFields(target: OwnTokenTarget): [string, string][];
}

/** What weir's own token (client credentials) is asked for. */
export interface OwnTokenTarget {
  audience?: string;
  resource?: string;
  /** Scopes asked for (may be empty). */
  scopes: readonly string[];
}

/** RFC 6749 section 4.4.2 `grant_type`. */
export const CLIENT_CREDENTIALS_GRANT = "client_credentials";

/** RFC 6749 section 4.4.2, with the target fields the provider takes. */
function clientCredentials(
  target: OwnTokenTarget,
  take: { resource: boolean; audience: boolean },
): [string, string][] {
  const fields: [string, string][] = [["grant_type", CLIENT_CREDENTIALS_GRANT]];
  if (take.resource && target.resource) fields.push(["resource", target.resource]);
  if (take.audience && target.audience) fields.push(["audience", target.audience]);
  if (target.scopes.length > 0) fields.push(["scope", target.scopes.join(" ")]);
  return fields;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function strings(value: unknown): string[] {
  if (typeof value === "string") return value.split(" ").filter(Boolean);
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === "string");
  return [];
}

function roles(value: unknown): string[] {
  return typeof value === "object" && value !== null
    ? strings((value as { roles?: unknown }).roles)
    : [];
}

function unique(values: (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => v !== undefined && v !== ""))];
}

/** RFC 9068 `scope`, else `scp` (a list or a space-separated string). */
function standardScopes(claims: Readonly<Record<string, unknown>>): string[] {
  return typeof claims.scope === "string" ? strings(claims.scope) : strings(claims.scp);
}

/** RFC 8693 section 2.1: the request, with `resource` only where the provider takes it. */
function tokenExchange(
  subjectToken: string,
  target: ExchangeTarget,
  withResource: boolean,
): [string, string][] {
  const fields: [string, string][] = [
    ["grant_type", TOKEN_EXCHANGE_GRANT],
    ["subject_token", subjectToken],
    ["subject_token_type", target.subjectTokenType ?? ACCESS_TOKEN_TYPE],
    ["requested_token_type", ACCESS_TOKEN_TYPE],
  ];
  if (withResource && target.resource) fields.push(["resource", target.resource]);
  if (target.audience) fields.push(["audience", target.audience]);
  if (target.scopes.length > 0) fields.push(["scope", target.scopes.join(" ")]);
  return fields;
}

const GENERIC: IdentityProfile = {
  name: "generic",
  issuers: (s) => [s.issuer],
  audiences: (s) => unique([s.resource, s.audience]),
  scopes: standardScopes,
  requestScope: (scope) => scope,
  exchangeFields: (token, target) => tokenExchange(token, target, true),
  clientCredentialsFields: (target) =>
    clientCredentials(target, { resource: true, audience: true }),
};

/** An application ID URI and its GUID (`api://<GUID>` and `<GUID>` name the same app). */
function entraAudiences(audience: string | undefined): string[] {
  if (audience === undefined) return [];
  if (GUID.test(audience)) return [audience, `api://${audience}`];
  const guid = /^api:\/\/([^/]+)\/?$/.exec(audience)?.[1];
  return guid !== undefined && GUID.test(guid) ? [audience, guid] : [audience];
}

/** The URI an Entra scope is asked under: the application ID URI (a GUID becomes `api://<GUID>`). */
function entraAppUri(audience: string): string {
  return (GUID.test(audience) ? `api://${audience}` : audience).replace(/\/$/, "");
}

const ENTRA: IdentityProfile = {
  name: "entra",
  issuers: (s) => {
    const issuers = entraIssuers(s.issuer);
    return typeof issuers === "string" ? [s.issuer] : [issuers.v2, issuers.v1];
  },
  audiences: (s) => unique([s.resource, ...entraAudiences(s.audience)]),
  // Delegated permissions in `scp` (space-separated), application permissions in `roles`.
  scopes: (claims) => unique([...strings(claims.scp), ...strings(claims.roles)]),
  requestScope: (scope, s) =>
    s.audience === undefined || scope.includes("://")
      ? scope
      : `${entraAppUri(s.audience)}/${scope}`,
  // The on-behalf-of flow: RFC 7523's grant with Entra's requested_token_use; no resource.
  exchangeFields: (token, target) => {
    const uri = entraAppUri(target.audience ?? "");
    const scopes = target.scopes.length > 0
      ? target.scopes.map((s) => (s.includes("://") ? s : `${uri}/${s}`))
      : [`${uri}/.default`];
    return [
      ["grant_type", JWT_BEARER_GRANT],
      ["assertion", token],
      ["requested_token_use", "on_behalf_of"],
      ["scope", scopes.join(" ")],
    ];
  },
  // An application's own token carries the roles granted to it: only `.default` may be asked.
  clientCredentialsFields: (target) => [
    ["grant_type", CLIENT_CREDENTIALS_GRANT],
    ["scope", `${entraAppUri(target.audience ?? "")}/.default`],
  ],
};

const OKTA: IdentityProfile = {
  name: "okta",
  issuers: (s) => [s.issuer],
  audiences: (s) => unique([s.resource, s.audience]),
  // `scp` is a list at Okta.
  scopes: standardScopes,
  requestScope: (scope) => scope,
  exchangeFields: (token, target) => tokenExchange(token, target, false),
  clientCredentialsFields: (target) =>
    clientCredentials(target, { resource: false, audience: false }),
};

const AUTH0: IdentityProfile = {
  name: "auth0",
  issuers: (s) => [s.issuer],
  audiences: (s) => unique([s.resource, s.audience]),
  // RBAC puts the API's permissions in `permissions` beside `scope`.
  scopes: (claims) => unique([...standardScopes(claims), ...strings(claims.permissions)]),
  requestScope: (scope) => scope,
  exchangeFields: (token, target) => tokenExchange(token, target, false),
  clientCredentialsFields: (target) =>
    clientCredentials(target, { resource: false, audience: true }),
};

const KEYCLOAK: IdentityProfile = {
  name: "keycloak",
  issuers: (s) => [s.issuer],
  audiences: (s) => unique([s.resource, s.audience]),
  // Realm roles, and the roles of this server's client, count beside `scope`.
  scopes: (claims, s) => {
    const clients = claims.resource_access;
    const own = s.audience !== undefined && typeof clients === "object" && clients !== null
      ? roles((clients as Record<string, unknown>)[s.audience])
      : [];
    return unique([...standardScopes(claims), ...roles(claims.realm_access), ...own]);
  },
  requestScope: (scope) => scope,
  exchangeFields: (token, target) => tokenExchange(token, target, false),
  clientCredentialsFields: (target) =>
    clientCredentials(target, { resource: false, audience: false }),
};

/** What is wrong with inbound settings for a profile, or `null` (src/guardfile/idp_profiles.ts). */
export function checkInbound(profile: IdentityProfile, settings: InboundSettings): string | null {
  return inboundProblem(profile.name, settings);
}

/** What is wrong with an exchange target for a profile, or `null` (src/guardfile/idp_profiles.ts). */
export function checkTarget(
  profile: IdentityProfile,
  target: ExchangeTarget & ExchangeProfileTarget,
): string | null {
  return exchangeProblem(profile.name, target);
}

/** Every profile by name. */
export const PROFILES: Readonly<Record<ProfileName, IdentityProfile>> = {
  generic: GENERIC,
  entra: ENTRA,
  okta: OKTA,
  auth0: AUTH0,
  keycloak: KEYCLOAK,
};

/**
 * The profile of a name (default `generic`).
 *
 * @example
 * ```ts
 * import { profileOf } from "./profiles.ts";
 * const entra = profileOf("entra");
 * const settings = {
 *   issuer: "https://login.microsoftonline.com/7f0d3e9a-4c55-4c36-9a8b-2b9d8f1c0a11/v2.0",
 *   resource: "https://mcp.example.com/mcp",
 *   audience: "api://0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
 * };
 * // v1 tokens of the same tenant pass too, and the GUID names the same API.
 * if (!entra.issuers(settings).includes("https://sts.windows.net/7f0d3e9a-4c55-4c36-9a8b-2b9d8f1c0a11/")) {
 *   throw new Error("v1 issuer");
 * }
 * if (!entra.audiences(settings).includes("0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0")) {
 *   throw new Error("GUID audience");
 * }
 * ```
 */
export function profileOf(name: ProfileName | undefined): IdentityProfile {
  return PROFILES[name ?? "generic"];
}
