/**
 * What the bytes of an upload say they are, checked before the publisher
 * writes them: a policy that refuses markup media types must also refuse
 * markup sent under another label, and an image type must carry an image.
 *
 * - Markup: the bytes, after leading whitespace and a UTF-8 byte-order mark,
 *   start like HTML by the WHATWG MIME Sniffing Standard's HTML patterns
 *   (section 7.1, "identifying a resource with an unknown MIME type": `<!DOCTYPE
 *   HTML`, `<HTML`, `<SCRIPT`, … followed by a space or `>`, and `<!--`), or like
 *   XML/SVG (`<?xml`, `<svg`). Refused under every media type.
 * - Signatures: `image/png`, `image/jpeg`, `image/gif`, `image/webp` and
 *   `application/pdf` must start with their format's signature (the same
 *   standard, section 6.1, "matching an image type pattern"; PDF 1.7 section 7.5.2).
 *   Other types are not checked.
 *
 * @module
 */

const HTML_TAGS = [
  "!DOCTYPE HTML",
  "HTML",
  "HEAD",
  "SCRIPT",
  "IFRAME",
  "H1",
  "DIV",
  "FONT",
  "TABLE",
  "A",
  "STYLE",
  "TITLE",
  "B",
  "BODY",
  "BR",
  "P",
];

const SIGNATURES: Record<string, { what: string; matches: (b: Uint8Array) => boolean }> = {
  "image/png": {
    what: "a PNG image",
    matches: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  },
  "image/jpeg": { what: "a JPEG image", matches: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  "image/gif": {
    what: "a GIF image",
    matches: (b) => ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a",
  },
  "image/webp": {
    what: "a WebP image",
    matches: (b) => ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 12) === "WEBP",
  },
  "application/pdf": { what: "a PDF document", matches: (b) => ascii(b, 0, 5) === "%PDF-" },
};

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((v, i) => bytes[i] === v);
}

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to));
}

/** Whether the bytes start like HTML, XML or SVG markup (see the module doc). */
export function looksLikeMarkup(bytes: Uint8Array): boolean {
  let i = 0;
  if (startsWith(bytes, [0xef, 0xbb, 0xbf])) i = 3;
  while (i < bytes.length && [0x09, 0x0a, 0x0c, 0x0d, 0x20].includes(bytes[i])) i++;
  if (bytes[i] !== 0x3c) return false; // "<"
  const head = ascii(bytes, i + 1, i + 16).toUpperCase();
  if (head.startsWith("!--") || head.startsWith("?XML")) return true;
  if (head.startsWith("SVG") && /^SVG[\s>/]/.test(head)) return true;
  return HTML_TAGS.some((tag) => {
    if (!head.startsWith(tag)) return false;
    const next = head.charAt(tag.length);
    return next === " " || next === ">";
  });
}

/**
 * Check an upload's bytes against its media type.
 * @returns `undefined` when acceptable, else why not (names the type, never the bytes)
 */
export function contentProblem(mediaType: string, bytes: Uint8Array): string | undefined {
  if (looksLikeMarkup(bytes)) {
    return `the bytes are HTML or XML markup, which this publisher never serves (whatever the ` +
      `content_type says)`;
  }
  const signature = SIGNATURES[mediaType];
  if (signature && !signature.matches(bytes)) {
    return `the bytes are not ${signature.what}, as content_type ${mediaType} says`;
  }
  return undefined;
}
