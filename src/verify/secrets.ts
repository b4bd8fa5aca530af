/**
 * The stand-in secrets of `weir verify` and the search for them in what comes
 * back. verify never reads a real credential: every value a guardfile reads
 * from the environment or a file is replaced by a generated one, and every
 * answer, log line and telemetry event is searched for each of those in the
 * forms an upstream could echo it, written independently of the guard's own
 * redaction (src/guard/secrets.ts) so a fault there cannot hide itself.
 *
 * @module
 */

const bytesOf = (text: string) => new TextEncoder().encode(text);
const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/**
 * A fresh stand-in secret: 30 characters, with `/`, `+` and `=` so that its
 * percent, JSON and base64 forms differ from it.
 * @param random 16 bytes of randomness (from the run's seed)
 */
export function standInSecret(random: Uint8Array): string {
  const hex = [...random].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 20);
  return `wv-${hex}+/=x`;
}

/** The forms of a secret searched for, by name (each at least the secret's length). */
export function secretForms(secret: string): Record<string, string> {
  const bytes = bytesOf(secret);
  const uri = encodeURIComponent(secret);
  const b64 = base64(bytes);
  return {
    "as sent": secret,
    "percent-encoded": uri,
    "percent-encoded (lower case)": uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    "form-encoded": new URLSearchParams({ k: secret }).toString().slice(2),
    "percent-encoded twice": encodeURIComponent(uri),
    "JSON-escaped": JSON.stringify(secret).slice(1, -1).replaceAll("/", "\\/"),
    base64: b64.replace(/=+$/, ""),
    base64url: b64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""),
    hex: [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(""),
  };
}

/**
 * Where a secret shows in a text: the name of the first form found, or
 * undefined. Also finds it inside a longer base64 text (`Basic user:secret`).
 *
 * @example
 * ```ts
 * import { findSecret } from "./secrets.ts";
 * const secret = "wv-0123456789abcdef0123+/=x";
 * if (findSecret(`{"echo":"${encodeURIComponent(secret)}"}`, secret) !== "percent-encoded") {
 *   throw new Error("a percent-encoded echo is found");
 * }
 * if (findSecret(`Basic ${btoa(`user:${secret}`)}`, secret) === undefined) throw new Error();
 * if (findSecret("nothing here", secret) !== undefined) throw new Error();
 * ```
 */
export function findSecret(text: string, secret: string): string | undefined {
  const lower = text.toLowerCase();
  for (const [name, form] of Object.entries(secretForms(secret))) {
    if (name === "hex" ? lower.includes(form) : text.includes(form)) return name;
  }
  const needle = String.fromCharCode(...bytesOf(secret));
  for (const run of text.match(/[A-Za-z0-9+/_-]{16,}/g) ?? []) {
    const std = run.replaceAll("-", "+").replaceAll("_", "/");
    for (let start = 0; start < 4; start++) {
      let piece = std.slice(start);
      // Padding is not part of the run: put it back (a lone last character decodes to nothing).
      if (piece.length % 4 === 1) piece = piece.slice(0, -1);
      piece += "=".repeat((4 - (piece.length % 4)) % 4);
      try {
        if (atob(piece).includes(needle)) return "inside base64";
      } catch { /* not base64 from here */ }
    }
  }
  return undefined;
}
