/**
 * Keeping secrets out of what goes back to the caller. Every value resolved
 * from the environment or a file for one call (credentials, pins) is redacted
 * from the result and from error messages, in each form an upstream could
 * echo it: as is, percent-encoded (either hex case, `+` for space) and
 * JSON-escaped (with or without `\/`). `literal` values are written in the
 * guardfile itself and are not secret.
 *
 * A credential shorter than {@link MIN_SECRET_LENGTH} characters is refused
 * before it is sent: a value that short cannot be redacted without mangling
 * ordinary text, so weir could not keep its promise for it.
 *
 * @module
 */
export { nestsDeeperThan } from "../mcp/depth.ts";
import { isRawJson } from "../mcp/text.ts";

/** Shortest secret weir will send and redact. */
export const MIN_SECRET_LENGTH = 8;

/** How deep a decoded upstream answer may nest (deeper: refused, not walked). */
export const MAX_ANSWER_DEPTH = 256;

const REDACTED = "[redacted]";

/** The secrets of one call, and the functions that redact them. */
export class Redactor {
  readonly #forms = new Set<string>();

  /** Register a secret value (ignored when shorter than {@link MIN_SECRET_LENGTH}). */
  add(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH) return;
    const encoded = encodeURIComponent(secret);
    const json = JSON.stringify(secret).slice(1, -1);
    for (
      const form of [
        secret,
        encoded,
        encoded.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
        encoded.replaceAll("%20", "+"),
        json,
        json.replaceAll("/", "\\/"),
      ]
    ) this.#forms.add(form);
  }

  /** Whether any secret is registered. */
  get active(): boolean {
    return this.#forms.size > 0;
  }

  /** Redact every form of every secret in `text`. */
  text(text: string): string {
    let out = text;
    for (const form of this.#forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  }

  /**
   * Redact every string and object key inside a decoded JSON value. The value
   * must already be known to nest at most {@link MAX_ANSWER_DEPTH} levels.
   */
  deep(value: unknown): unknown {
    if (!this.active) return value;
    const walk = (v: unknown): unknown => {
      if (typeof v === "string") return this.text(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === "object" && !isRawJson(v)) {
        const out: Record<string, unknown> = {};
        for (const [k, child] of Object.entries(v)) {
          Object.defineProperty(out, this.text(k), {
            value: walk(child),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return out;
      }
      return v;
    };
    return walk(value);
  }
}
