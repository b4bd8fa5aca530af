/**
 * The URIs a guardfile gives the server to list (a `resource`'s `uri=`, an
 * `icon`'s source, a `proxy-resource`) held to the rule the MCP core holds
 * them to when it is built (src/mcp/wire_fields.ts, src/mcp/catalog.ts): the
 * schemas' `format: "uri"`, an absolute RFC 3986 URI, a scheme and then URI
 * characters only, every other character percent-encoded (`%XX`). The
 * guardfile room imports nothing, so the rule is stated here too;
 * tests/guardfile/uri_test.ts holds the two to the same answers.
 *
 * @module
 */

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const URI_TEXT = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#[\]]|%[0-9A-Fa-f]{2})*$/;

/**
 * What keeps `text` from being an absolute RFC 3986 URI, as a phrase to
 * follow the quoted text, or `undefined` when it is one.
 *
 * @example
 * ```ts
 * import { uriProblem } from "./uri.ts";
 * if (uriProblem("https://example.com/icon.png") !== undefined) throw new Error("refused");
 * if (uriProblem("https://example.com/é.png") === undefined) throw new Error("accepted");
 * ```
 */
export function uriProblem(text: string): string | undefined {
  if (!SCHEME.test(text)) {
    return `is not an absolute URI: start it with a scheme, e.g. "https://..." or "docs://..."`;
  }
  if (!URI_TEXT.test(text)) {
    return `is not an RFC 3986 URI: percent-encode anything but ASCII letters, digits and ` +
      `-._~:/?#[]@!$&'()*+,;= (a space as %20, é as %C3%A9), and write % only as %XX`;
  }
  return undefined;
}
