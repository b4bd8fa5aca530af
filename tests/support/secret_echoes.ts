/**
 * How an upstream might echo a secret it was sent, written independently of
 * src/guard/secrets.ts: the encodings a test expects weir to redact, and a
 * check that no base64 run of a text still decodes to the secret.
 */

const bytesOf = (text: string) => new TextEncoder().encode(text);
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** `get_html_translation_table(HTML_ENTITIES, ENT_QUOTES | ENT_HTML5)`, ASCII part (PHP 8.2). */
const PHP_HTML5_NAMES: Record<string, string> = Object.fromEntries(
  (
    "\tTab \nNewLine !excl \"quot #num $dollar %percnt &amp 'apos (lpar )rpar *ast +plus ,comma " +
    ".period /sol :colon ;semi <lt =equals >gt ?quest @commat [lbrack \\bsol ]rsqb ^Hat _lowbar " +
    "`grave {lbrace |vert }rcub"
  ).split(" ").map((item) => [item[0], item.slice(1)]),
);

/** Every echo of `secret` a test sends back, by name. */
export function secretEchoes(secret: string): Record<string, string> {
  const bytes = bytesOf(secret);
  const uri = encodeURIComponent(secret);
  return {
    raw: secret,
    "percent-encoded": uri,
    "percent-encoded lower": uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    "form-encoded": new URLSearchParams({ k: secret }).toString().slice(2),
    "every byte escaped": [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`)
      .join(""),
    "percent-encoded twice": encodeURIComponent(uri),
    "JSON-escaped": JSON.stringify(secret).slice(1, -1),
    "JSON with \\/": JSON.stringify(secret).slice(1, -1).replaceAll("/", "\\/"),
    "HTML-safe JSON": JSON.stringify(secret).slice(1, -1)
      .replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`),
    "HTML-escaped": secret.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;"),
    // Numeric character references (HTML 5, 13.1.4): escapers that write the
    // specials as numbers (Go's html/template &#34;, Python's &#x27;), and an
    // echo that writes every character so, in either base, with leading zeros.
    "HTML decimal references": secret.replace(/[&<>"']/g, (c) => `&#${c.codePointAt(0)};`),
    "HTML hex references": secret.replace(
      /[&<>"']/g,
      (c) => `&#x${c.codePointAt(0)!.toString(16).toUpperCase()};`,
    ),
    "HTML references, every character": [...secret].map((c, i) =>
      i % 2 === 0
        ? `&#00${c.codePointAt(0)};`
        : `&#X${c.codePointAt(0)!.toString(16).toLowerCase()};`
    ).join(""),
    // PHP's htmlentities($s, ENT_QUOTES | ENT_HTML5) (its translation table, as
    // PHP 8.2 prints it): every ASCII character HTML 5 names is written by name.
    "HTML 5 named references (PHP htmlentities)": [...secret].map((c) =>
      PHP_HTML5_NAMES[c] ? `&${PHP_HTML5_NAMES[c]};` : c
    ).join(""),
    // String literals: PHP's addslashes (also Python's repr, Go's JSEscapeString
    // for these three), and OWASP ESAPI's encodeForJavaScript, which writes every
    // character but a letter or digit as \xHH (\uHHHH past 0xFF).
    "backslash-escaped (addslashes)": secret.replace(/[\\'"]/g, (c) => `\\${c}`),
    "\\x escapes (ESAPI encodeForJavaScript)": [...secret].map((c) =>
      /[A-Za-z0-9]/.test(c)
        ? c
        : c.codePointAt(0)! <= 0xff
        ? `\\x${c.codePointAt(0)!.toString(16).toUpperCase().padStart(2, "0")}`
        : c.split("").map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")
    ).join(""),
    base64: b64(bytes),
    "base64 unpadded": b64(bytes).replace(/=+$/, ""),
    base64url: b64(bytes).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""),
    "Basic user:secret": `Basic ${b64(bytesOf(`user:${secret}`))}`,
    "Basic ab:secret": `Basic ${b64(bytesOf(`ab:${secret}`))}`,
    "Basic x:secret": `Basic ${b64(bytesOf(`x:${secret}`))}`,
    "base64 of a token wrapping it": b64(bytesOf(`{"key":"${secret}","n":1}`)),
    "base64 wrapped at 76 (MIME, CRLF)": b64(
      bytesOf(`From: a\r\nAuthorization: Basic ${secret}\r\n${"x".repeat(90)}`),
    )
      .replace(/(.{76})/g, "$1\r\n"),
    "base64 wrapped at 64 (PEM, LF)": b64(bytesOf(`-- ${secret} --`)).replace(/(.{64})/g, "$1\n")
      .replace(/(.{10})/, "$1\n"),
    hex: hex(bytes),
    "hex upper": hex(bytes).toUpperCase(),
  };
}

/**
 * Whether any run of base64 or base64url characters in `text`, read from any
 * of its first four characters, decodes to bytes that hold the secret.
 */
export function base64Holds(text: string, secret: string): boolean {
  const needle = [...bytesOf(secret)].map((b) => String.fromCharCode(b)).join("");
  for (const run of text.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) {
    const std = run.replaceAll("-", "+").replaceAll("_", "/");
    for (let start = 0; start < 4; start++) {
      let piece = std.slice(start);
      piece = piece.slice(0, piece.length - (piece.length % 4));
      try {
        if (atob(piece).includes(needle)) return true;
      } catch { /* not base64 from here */ }
    }
  }
  return false;
}

/** Whether `text` holds the secret's hex, in either case. */
export function hexHolds(text: string, secret: string): boolean {
  return text.toLowerCase().includes(hex(bytesOf(secret)));
}
