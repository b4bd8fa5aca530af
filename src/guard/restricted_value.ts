/**
 * A value of an argument narrowed by `restrict` globs in a guardfile that
 * wraps an MCP server (`argument "path" { restrict "/data/**" }`), held to
 * what spec mode holds a restricted path value to (src/guard/request.ts):
 * the globs bound what the MCP server is given, and an MCP server is free to
 * read the value as a path, a URL piece or a file name. So, besides matching
 * a glob as written (the served schema's `pattern`, which the core checks):
 *
 * - no `.` or `..` piece between `/` or `\` (`/data/../etc`, `..;x`, `．．`),
 *   in the value or any form it decodes to (src/guardfile/decoded.ts:
 *   `%2e%2e`, `%252e`, `%C0%AE`, ...) or its Unicode compatibility form (NFKC);
 * - no `\` (a separator to some servers) and no control character, in any
 *   of those forms;
 * - every one of those forms matches one of the globs too (`acme-%2Fx`
 *   decodes to `acme-/x`, which `acme-*` does not match);
 * - a value still percent-encoded after {@link MAX_DECODING_ROUNDS} rounds is
 *   refused.
 *
 * Each refusal is `policy_denied` under its own audit rule (`dot_segment`,
 * `separator`, `control_character`, `encoded_too_deep`, `restrict`).
 *
 * @module
 */
import { compileGlob } from "../guardfile/glob.ts";
import {
  compatibilityForm,
  decodedForms,
  isDotPiece,
  MAX_DECODING_ROUNDS,
} from "../guardfile/decoded.ts";
import { type KindRule, WeirError } from "../errors/kinds.ts";

const CONTROL = /[\x00-\x1f\x7f-\x9f]/;

const matchers = new Map<string, (value: string) => boolean>();

function matcherOf(glob: string): (value: string) => boolean {
  let m = matchers.get(glob);
  if (!m) matchers.set(glob, m = compileGlob(glob));
  return m;
}

/**
 * Check one restricted value (see the module doc).
 * @param what names the argument in the message, e.g. `argument "path"`
 * @param value the value as the caller sent it (anything but a string is refused)
 * @param globs the argument's `restrict` globs (one must match every form)
 * @throws {WeirError} `policy_denied` with the audit rule of the refusal
 */
export function checkRestrictedValue(
  what: string,
  value: unknown,
  globs: readonly string[],
): void {
  const denied = (rule: KindRule, message: string) =>
    new WeirError("policy_denied", `${what} ${message}; nothing was sent`, { status: 403, rule });
  if (typeof value !== "string") {
    // null included: every value must match a glob, and only a string can.
    const kind = value === null
      ? "null"
      : Array.isArray(value)
      ? "an array"
      : typeof value === "object"
      ? "an object"
      : `a ${typeof value}`;
    throw denied("restrict", `is ${kind}: send a string that matches`);
  }
  const { forms, unsettled } = decodedForms(value);
  if (unsettled) {
    throw denied(
      "encoded_too_deep",
      `is still percent-encoded after ${MAX_DECODING_ROUNDS} rounds of decoding: send the ` +
        `value itself`,
    );
  }
  const seen = new Set<string>();
  for (const [i, decoded] of forms.entries()) {
    for (const form of [decoded, compatibilityForm(decoded)]) {
      if (seen.has(form)) continue;
      seen.add(form);
      const how = form === value
        ? ""
        : form === decoded
        ? " once the MCP server percent-decodes it"
        : i === 0
        ? " once the MCP server normalizes its Unicode (NFKC)"
        : " once the MCP server decodes and normalizes it";
      if (CONTROL.test(form)) {
        throw denied("control_character", `contains a control character${how}`);
      }
      if (form.includes("\\")) {
        throw denied(
          "separator",
          `contains "\\"${how}, a path separator to some servers; a restricted value may not`,
        );
      }
      const dot = form.split("/").find(isDotPiece);
      if (dot !== undefined) {
        throw denied(
          "dot_segment",
          `has a "${dot}" segment${how} (a dot segment, which climbs out of what the globs ` +
            `allow); dot segments are refused`,
        );
      }
      if (!globs.some((g) => matcherOf(g)(form))) {
        throw denied(
          "restrict",
          `is outside this server's policy${how} (allowed: ${
            globs.map((g) => JSON.stringify(g)).join(" or ")
          })`,
        );
      }
    }
  }
}
