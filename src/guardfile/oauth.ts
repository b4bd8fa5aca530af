/**
 * `oauth issuer="<URL>" resource="<URL>" [profile="entra|okta|auth0|keycloak|generic"]
 * [audience="<aud>"]`: serve as an OAuth 2.1 resource
 * server (the MCP authorization spec), the guardfile's equivalent of
 * `weir serve --oauth-issuer URL --oauth-resource URL` (the flags win when both
 * are given). A sibling of `wrap`, at most once. Both URLs are absolute,
 * `https` (plain `http` only on a loopback host); `resource` carries no query
 * or fragment (RFC 8707 section 2). Pure: no discovery here, `serve` does that.
 *
 * @module
 */
import type { OAuthSetting } from "./model.ts";
import { type NodeReader, onlyOnce, suggest } from "./nodes.ts";
import { inboundProblem, isProfileName, PROFILE_NAMES } from "./idp_profiles.ts";

function loopback(url: URL): boolean {
  const h = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** What is wrong with one of the URLs, or `null`. */
function urlProblem(text: string, resource: boolean): string | null {
  if (!URL.canParse(text)) return "is not an absolute URL";
  const url = new URL(text);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback(url))) {
    return "must be https (http only on a loopback host)";
  }
  if (resource && (url.hash || text.includes("#"))) {
    return "must not carry a #fragment (RFC 8707 section 2)";
  }
  if (resource && url.search) return "must not carry a ?query";
  return null;
}

/**
 * Read the `oauth` sibling, if any.
 * @returns the setting, or `undefined` when absent or broken (after reporting)
 */
export function readOAuth(top: NodeReader[]): OAuthSetting | undefined {
  const node = onlyOnce(top, "oauth");
  if (!node) return undefined;
  node.onlyProperties(["issuer", "resource", "profile", "audience"]);
  node.noChildren();
  if (node.node.values.length > 0) {
    node.error(
      `"oauth" takes issuer= and resource= properties, not arguments; write oauth issuer="https://..." resource="https://..."`,
    );
    return undefined;
  }
  const issuer = node.stringProp("issuer");
  const resource = node.stringProp("resource");
  if (issuer === undefined || resource === undefined) {
    if (!("issuer" in node.node.properties) || !("resource" in node.node.properties)) {
      node.error(
        `"oauth" needs both issuer= and resource=, e.g. ` +
          `oauth issuer="https://id.example.com" resource="https://mcp.example.com/mcp"`,
      );
    }
    return undefined;
  }
  let ok = true;
  for (const [key, value] of [["issuer", issuer], ["resource", resource]] as const) {
    const problem = urlProblem(value, key === "resource");
    if (problem) {
      node.error(`oauth ${key}=${JSON.stringify(value)} ${problem}`);
      ok = false;
    }
  }
  const profile = node.stringProp("profile");
  const audience = node.stringProp("audience");
  if (profile !== undefined && !isProfileName(profile)) {
    node.error(
      `oauth profile=${JSON.stringify(profile)} is not a profile weir knows` +
        `${suggest(profile, PROFILE_NAMES)}; use one of ${PROFILE_NAMES.join(", ")}`,
    );
    return undefined;
  }
  if (!ok || ("profile" in node.node.properties && profile === undefined)) return undefined;
  if ("audience" in node.node.properties && audience === undefined) return undefined;
  const problem = inboundProblem(profile ?? "generic", { issuer, audience });
  if (problem) {
    node.error(problem);
    return undefined;
  }
  return {
    issuer,
    resource,
    ...(profile === undefined ? {} : { profile }),
    ...(audience === undefined ? {} : { audience }),
    position: node.node.position,
  };
}
