/**
 * Glob matching for `restrict`, with the semantics of Go's `path/filepath.Match`
 * on a `/`-separated system (what the reference uses): `*` matches any run of
 * characters except `/`, `?` one character except `/`, `[a-z]`/`[^x]`
 * character classes, and `\` escapes the next character. The whole value must
 * match. One addition: `**` matches any run of characters including `/`, for
 * path parameters that take several segments (`slashes="segments"` or
 * `"encoded"`); a one-segment value never contains `/`, so there `**` and `*`
 * agree. See `docs/guardfile.md`.
 *
 * @module
 */

/** Thrown by {@link compileGlob} for a malformed pattern. */
export class GlobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GlobError";
  }
}

/**
 * Compile a glob into a matcher.
 *
 * @throws {GlobError} for an unclosed class, an empty class or a trailing `\`
 *   (Go reports `ErrBadPattern`; weir refuses such a pattern when loading)
 */
export function compileGlob(pattern: string): (value: string) => boolean {
  const regex = new RegExp(globSource(pattern), "u");
  return (value) => regex.test(value);
}

/**
 * A glob as an anchored ECMA-262 regular expression source (`^...$`) with the
 * same meaning, valid with the `u` flag and without `s`: what a JSON Schema
 * `pattern` holds (JSON Schema 2020-12 section 6.3.3).
 *
 * @throws {GlobError} as {@link compileGlob}
 */
export function globSource(pattern: string): string {
  let source = "^";
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === "*" && chars[i + 1] === "*") {
      while (chars[i + 1] === "*") i++;
      source += "[\\s\\S]*";
    } else if (c === "*") {
      source += "[^/]*";
    } else if (c === "?") {
      source += "[^/]";
    } else if (c === "\\") {
      if (i + 1 >= chars.length) {
        throw new GlobError(`pattern ${JSON.stringify(pattern)} ends in "\\"`);
      }
      source += escape(chars[++i]);
    } else if (c === "[") {
      let j = i + 1;
      let negate = false;
      if (chars[j] === "^") {
        negate = true;
        j++;
      }
      let body = "";
      let count = 0;
      while (j < chars.length && chars[j] !== "]") {
        let lo = chars[j];
        if (lo === "\\") {
          if (++j >= chars.length) break;
          lo = chars[j];
        }
        j++;
        if (chars[j] === "-" && chars[j + 1] !== undefined && chars[j + 1] !== "]") {
          let hi = chars[j + 1];
          j += 2;
          if (hi === "\\") hi = chars[j++];
          if (hi === undefined || hi < lo) {
            throw new GlobError(`pattern ${JSON.stringify(pattern)} has a bad range`);
          }
          body += `${escapeInClass(lo)}-${escapeInClass(hi)}`;
        } else {
          body += escapeInClass(lo);
        }
        count++;
      }
      if (j >= chars.length) {
        throw new GlobError(`pattern ${JSON.stringify(pattern)} has an unclosed "["`);
      }
      if (count === 0) throw new GlobError(`pattern ${JSON.stringify(pattern)} has an empty "[]"`);
      source += negate ? `[^/${body}]` : `[${body}]`;
      i = j;
    } else {
      source += escape(c);
    }
  }
  return source + "$";
}

function escape(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

function escapeInClass(c: string): string {
  return /[\\\]\[^-]/.test(c) ? `\\${c}` : c;
}
