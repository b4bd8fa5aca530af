/**
 * Whether a regular expression a guardfile writes (a `pattern=`, the
 * expression a `restrict` glob becomes) can be used by the server weir
 * builds from it: the loader's half of "what lint accepts, serve can build".
 *
 * `new RegExp` only parses: the engine (V8) compiles an expression at its
 * first use, and only then refuses one that is too large or nests too deep
 * for it ("Regular expression too large", "Stack overflow"), which would
 * surface as an uncaught error at start-up or at a call. So a pattern is run
 * once here, and held to {@link MAX_PATTERN_LENGTH}: far below where the
 * engine gives up (about 13,000 characters of the cheapest constructs, less
 * on a deep stack), far above what real APIs write (the longest `pattern`
 * of GitHub's and ReadMe's OpenAPI documents is 153 characters).
 *
 * The MCP core runs a listed schema's `pattern` once too
 * (src/mcp/schema.ts); the guardfile room imports nothing, so the rule is
 * stated here, and tests/guardfile/pattern_test.ts holds the two together.
 *
 * @module
 */

/** The longest regular expression a guardfile may write, in UTF-16 code units. */
export const MAX_PATTERN_LENGTH = 4096;

/**
 * What keeps a regular expression from serving (ECMA-262 syntax, `u` flag),
 * as a phrase to follow its quoted source, or `undefined` when it compiles.
 * @param maxLength the bound on its length ({@link MAX_PATTERN_LENGTH}; the
 *   globs of one `restrict` joined as alternatives pass `Infinity`: each glob
 *   is bounded, and alternatives add width, not the depth the engine runs out of)
 *
 * @example
 * ```ts
 * import { patternProblem } from "./pattern.ts";
 * if (patternProblem("^[a-z]+$") !== undefined) throw new Error("refused a good pattern");
 * if (!patternProblem("a".repeat(5000))?.includes("shorten it")) throw new Error("too long");
 * ```
 */
export function patternProblem(
  source: string,
  maxLength: number = MAX_PATTERN_LENGTH,
): string | undefined {
  if (source.length > maxLength) {
    return `is ${source.length} characters long, over weir's ${maxLength} (the ` +
      `regular-expression engine may refuse a long one at its first use): shorten it`;
  }
  let regex: RegExp;
  try {
    regex = new RegExp(source, "u");
  } catch (error) {
    return `is not a valid regular expression (${engineWords(error)}): fix it (JavaScript ` +
      `syntax, "u" flag)`;
  }
  try {
    regex.test("");
  } catch (error) {
    return `does not compile (${engineWords(error)}): shorten or simplify it`;
  }
  return undefined;
}

/**
 * A regular expression as a message quotes it: JSON-quoted, cut to its
 * first 60 characters when longer (the message says how long it is).
 */
export function shownPattern(source: string): string {
  return source.length > 60 ? `${JSON.stringify(source.slice(0, 60))}...` : JSON.stringify(source);
}

/** The engine's reason without the expression it repeats (which may be long). */
function engineWords(error: unknown): string {
  const message = (error as Error).message;
  const colon = message.lastIndexOf(": ");
  return colon >= 0 ? message.slice(colon + 2) : message;
}
