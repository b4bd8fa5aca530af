/**
 * The two RFC 6570 expressions a resource template may use, and nothing more.
 *
 * - `{var}` (simple expansion, RFC 6570 section 3.2.2) matches one non-empty
 *   run of characters with no `/`, `?` or `#`: one path segment.
 * - `{+var}` (reserved expansion, section 3.2.3) matches one or more of any
 *   character, across segments.
 *
 * Any other operator (`{#x}`, `{?x}`, `{/x}`, ...), a modifier (`{x*}`,
 * `{x:3}`), a list of variables (`{x,y}`) or a brace outside an expression is
 * refused when the template is parsed, so a template cannot claim more than
 * this module matches. A matched value that is a dot segment (`.` or `..`,
 * also percent-encoded) never matches, so a template cannot be used to walk
 * out of the tree it names.
 *
 * @module
 */

/** A parsed template that can tell whether a URI is one of its expansions. */
export interface UriTemplate {
  /** The template exactly as written. */
  readonly template: string;
  /** Variable names in order of appearance. */
  readonly variables: readonly string[];
  /**
   * Match a concrete URI against the template.
   * @returns the variable values (still percent-encoded, as in the URI) or `null`
   */
  match(uri: string): Record<string, string> | null;
}

/**
 * A template that uses something this module does not claim to match.
 *
 * @example An expression this module does not claim to match
 * ```ts
 * import { parseUriTemplate, UriTemplateError } from "./uri_template.ts";
 * let refused: unknown;
 * try {
 *   parseUriTemplate("docs://{?q}");
 * } catch (error) {
 *   refused = error;
 * }
 * if (!(refused instanceof UriTemplateError)) throw new Error(`expected a UriTemplateError: ${refused}`);
 * ```
 */
export class UriTemplateError extends Error {
  /**
   * Make the error.
   * @param message which expression is unsupported and why
   */
  constructor(message: string) {
    super(message);
    this.name = "UriTemplateError";
  }
}

const VARNAME = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Parse a resource template.
 *
 * @param template an RFC 6570 template using only `{var}` and `{+var}`
 * @throws {UriTemplateError} naming the offending expression or brace
 *
 * @example A resource template matched
 * ```ts
 * import { parseUriTemplate } from "./uri_template.ts";
 * const template = parseUriTemplate("docs://{name}");
 * if (template.match("docs://intro")?.name !== "intro") throw new Error("no match");
 * if (template.match("other://intro") !== null) throw new Error("matched another scheme");
 * ```
 */
export function parseUriTemplate(template: string): UriTemplate {
  let pattern = "^";
  const variables: string[] = [];
  const reserved: boolean[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf("{", i);
    const close = template.indexOf("}", i);
    if (close !== -1 && (open === -1 || close < open)) {
      throw new UriTemplateError(`unmatched "}" at offset ${close} in ${JSON.stringify(template)}`);
    }
    if (open === -1) {
      pattern += escapeRegExp(template.slice(i));
      break;
    }
    pattern += escapeRegExp(template.slice(i, open));
    if (close === -1) {
      throw new UriTemplateError(`unclosed "{" at offset ${open} in ${JSON.stringify(template)}`);
    }
    const expression = template.slice(open + 1, close);
    const plus = expression.startsWith("+");
    const name = plus ? expression.slice(1) : expression;
    if (!VARNAME.test(name)) {
      throw new UriTemplateError(
        `expression {${expression}} in ${JSON.stringify(template)} is not supported; ` +
          `use {name} for one path segment or {+name} across segments`,
      );
    }
    if (variables.includes(name)) {
      throw new UriTemplateError(`variable "${name}" appears twice in ${JSON.stringify(template)}`);
    }
    variables.push(name);
    reserved.push(plus);
    pattern += plus ? "(.+)" : "([^/?#]+)";
    i = close + 1;
  }
  const regex = new RegExp(pattern + "$", "s");
  return {
    template,
    variables,
    match(uri: string) {
      const m = regex.exec(uri);
      if (!m) return null;
      const values: Record<string, string> = {};
      for (let v = 0; v < variables.length; v++) {
        const value = m[v + 1];
        const segments = reserved[v] ? value.split("/") : [value];
        if (segments.some((s) => DOT_SEGMENT.test(s))) return null;
        values[variables[v]] = value;
      }
      return values;
    },
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
