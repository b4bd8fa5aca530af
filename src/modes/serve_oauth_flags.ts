/**
 * The OAuth flags of `weir serve` and `weir serve-upstream`
 * (`--oauth-issuer`, `--oauth-resource`, `--oauth-introspection-client-id`,
 * `--oauth-introspection-secret-env`, `--oauth-profile`, `--oauth-audience`), checked before anything is served. A
 * static inbound token and OAuth are never combined: asking for both is a
 * usage error.
 *
 * @module
 */
import { lazy } from "../ops/lazy.ts";
import type { OAuthServeOptions } from "./serve.ts";
import { FlagError as UsageError } from "../ops/flags.ts";
import {
  inboundProblem,
  isProfileName,
  PROFILE_NAMES,
  type ProfileName,
} from "../guardfile/idp_profiles.ts";

/** The flag definitions, for `parseFlags`. */
export const OAUTH_FLAGS = {
  "oauth-issuer": { type: "string" },
  "oauth-resource": { type: "string" },
  "oauth-introspection-client-id": { type: "string" },
  "oauth-introspection-secret-env": { type: "string" },
  "oauth-profile": { type: "string" },
  "oauth-audience": { type: "string" },
} as const;

/**
 * The OAuth settings the flags ask for, or `undefined` when none is given.
 * @param values parsed flags (the OAuth ones, `stdio`, `inbound-token-env`)
 * @throws {FlagError} (a usage error: exit 2) when the flags cannot work: one of issuer/resource
 *   alone, with `--stdio` or `--inbound-token-env`, a resource that is not a
 *   canonical URI, a non-https issuer beyond loopback, half of the
 *   introspection pair, or an unset secret variable
 */
export async function oauthSettings(values: {
  stdio?: boolean;
  "inbound-token-env"?: string;
  "tool-token-env"?: string[];
  "oauth-issuer"?: string;
  "oauth-resource"?: string;
  "oauth-introspection-client-id"?: string;
  "oauth-introspection-secret-env"?: string;
  "oauth-profile"?: string;
  "oauth-audience"?: string;
}): Promise<OAuthServeOptions | undefined> {
  const issuer = values["oauth-issuer"];
  const resource = values["oauth-resource"];
  const clientId = values["oauth-introspection-client-id"];
  const secretVar = values["oauth-introspection-secret-env"];
  const profile = values["oauth-profile"];
  const audience = values["oauth-audience"];
  if (issuer === undefined && resource === undefined) {
    if (clientId !== undefined || secretVar !== undefined) {
      throw new UsageError("--oauth-introspection-* needs --oauth-issuer and --oauth-resource");
    }
    if (profile !== undefined || audience !== undefined) {
      throw new UsageError(
        `--oauth-${profile !== undefined ? "profile" : "audience"} needs --oauth-issuer and ` +
          `--oauth-resource`,
      );
    }
    return undefined;
  }
  if (issuer === undefined || resource === undefined) {
    throw new UsageError("--oauth-issuer and --oauth-resource go together: give both");
  }
  if (values.stdio) throw new UsageError("--oauth-issuer applies to --http only");
  if (values["inbound-token-env"] !== undefined) {
    throw new UsageError(
      "--inbound-token-env and --oauth-issuer cannot be combined: choose the static token or OAuth",
    );
  }
  if (values["tool-token-env"] !== undefined) {
    throw new UsageError(
      "--tool-token-env and --oauth-issuer cannot be combined: choose static tokens or OAuth " +
        "(limit OAuth callers with each tool's scope)",
    );
  }
  // The resource server's module is loaded only when OAuth is asked for.
  const { isAcceptableIssuerUrl, resourceProblem } = await lazy<
    typeof import("../oauth/resource_server.ts")
  >("oauth_resource_server");
  const problem = resourceProblem(resource);
  if (problem) throw new UsageError(`--oauth-resource ${resource} ${problem}`);
  if (!URL.canParse(issuer) || !isAcceptableIssuerUrl(new URL(issuer))) {
    throw new UsageError(`--oauth-issuer ${issuer} must be an https URL (http only on loopback)`);
  }
  if ((clientId === undefined) !== (secretVar === undefined)) {
    throw new UsageError(
      "--oauth-introspection-client-id and --oauth-introspection-secret-env go together",
    );
  }
  if (profile !== undefined && !isProfileName(profile)) {
    throw new UsageError(
      `--oauth-profile must be one of ${PROFILE_NAMES.join(", ")}, not ${profile}`,
    );
  }
  if (audience !== undefined && audience.trim() === "") {
    throw new UsageError("--oauth-audience must not be empty");
  }
  const mismatch = inboundProblem((profile as ProfileName | undefined) ?? "generic", {
    issuer,
    audience,
  });
  if (mismatch) throw new UsageError(`--oauth-issuer/--oauth-profile: ${mismatch}`);
  let introspection: OAuthServeOptions["introspection"];
  if (clientId !== undefined) {
    const clientSecret = Deno.env.get(secretVar!);
    if (!clientSecret) {
      throw new UsageError(
        `--oauth-introspection-secret-env ${secretVar}: the variable is not set or empty`,
      );
    }
    introspection = { clientId, clientSecret };
  }
  return {
    issuer,
    resource,
    introspection,
    ...(profile === undefined ? {} : { profile: profile as ProfileName }),
    ...(audience === undefined ? {} : { audience }),
  };
}
