/**
 * The text rules of the tool-poisoning scan (`scan.ts`): what in one string
 * of a relayed definition an agent could be steered by. Each rule answers the
 * spans it finds, each an error (the tool is not served unless the operator
 * replaces the text or accepts the finding) or a warning (reported, served).
 *
 * The rules follow the published tool-poisoning shapes (Invariant Labs'
 * "tool poisoning" and "shadowing" write-ups, the "rug pull", Unicode tag
 * smuggling and bidirectional "Trojan Source" text, CVE-2021-42574) and were
 * tuned on real tool lists (server-everything, the GitHub, filesystem,
 * memory and fetch reference servers: tests/mcp_upstream/scan_corpus_test.ts)
 * so that none of those is an error: an error needs the shape of an attack,
 * not one suspicious word.
 *
 * Pure: no I/O.
 *
 * @module
 */

/** The rules, by the name a finding carries (and an acceptance names). */
export type ScanRule =
  | "hidden-markup"
  | "hidden-instruction"
  | "invisible-text"
  | "mixed-script"
  | "tool-reference"
  | "sensitive-request"
  | "address"
  | "encoded-blob"
  | "long-text";

/** Where a string sits in a definition, which sets how strictly it is read. */
export type TextKind =
  /** A description, a title: prose a model reads. */
  | "prose"
  /** An object key (a property name) or the tool's name. */
  | "name"
  /** Any other string: enum, const, default, examples, `_meta`. */
  | "value";

/** One span a rule found in one string. */
export interface RuleHit {
  rule: ScanRule;
  severity: "error" | "warning";
  /** Start and end of the span, in UTF-16 code units of the string. */
  start: number;
  end: number;
  /** What it is, in words an operator can act on (never the span itself). */
  what: string;
}

/** What a rule knows besides the text. */
export interface RuleContext {
  kind: TextKind;
  /** The tool's own name. */
  tool: string;
  /** Every tool name the MCP server lists (naming one of them is not shadowing). */
  listed: ReadonlySet<string>;
  /** The tool description's length bound, for `long-text` (prose only). */
  longAt: { warn: number; error: number };
}

// ---------------------------------------------------------------- invisible-text

/**
 * Characters that show nothing or reorder what is shown: Unicode tag
 * characters (the "ASCII smuggling" block), bidirectional controls (Trojan
 * Source), zero-width and joiner characters, invisible operators, fillers,
 * the variation selectors supplement, soft hyphen, the interlinear
 * annotation characters. ZWJ between two pictographs and VS15/VS16 after one
 * are emoji and pass.
 */
const INVISIBLE =
  /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]|\udb40[\udc00-\udc7f\udd00-\uddef]/g;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
/** Private-use characters: not invisible, but they show as whatever a font puts there. */
const PRIVATE_USE = /[\ue000-\uf8ff]|[\udb80-\udbff][\udc00-\udfff]/g;

function invisible(text: string): RuleHit[] {
  const hits: RuleHit[] = [];
  for (const m of text.matchAll(INVISIBLE)) {
    const at = m.index!;
    const ch = m[0];
    if (ch === "\u200d" || ch === "\ufe0f" || ch === "\ufe0e") {
      // Emoji sequences: ZWJ between pictographs, VS15/VS16 after one.
      const before = String.fromCodePoint(text.codePointAt(at - 1) ?? 0);
      const prev = at >= 2 && /[\udc00-\udfff]/.test(text[at - 1])
        ? text.slice(at - 2, at)
        : before;
      if (PICTOGRAPH.test(prev)) continue;
    }
    const last = hits.at(-1);
    if (last && last.end === at) last.end = at + ch.length;
    else {
      hits.push({
        rule: "invisible-text",
        severity: "error",
        start: at,
        end: at + ch.length,
        what: "invisible or text-reordering characters (a reader does not see what a model reads)",
      });
    }
  }
  for (const m of text.matchAll(PRIVATE_USE)) {
    hits.push({
      rule: "invisible-text",
      severity: "warning",
      start: m.index!,
      end: m.index! + m[0].length,
      what: "a private-use character (it shows as whatever a font puts there)",
    });
  }
  return hits;
}

// ---------------------------------------------------------------- mixed-script

const WORD = /[\p{L}\p{M}]+/gu;
const LATIN = /\p{Script=Latin}/u;
const LOOKALIKE = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]/u;

/** A word that mixes Latin letters with Cyrillic, Greek... look-alikes (`gеt_file` with a Cyrillic е). */
function mixedScript(text: string): RuleHit[] {
  const hits: RuleHit[] = [];
  for (const m of text.matchAll(WORD)) {
    if (LATIN.test(m[0]) && LOOKALIKE.test(m[0])) {
      hits.push({
        rule: "mixed-script",
        severity: "error",
        start: m.index!,
        end: m.index! + m[0].length,
        what: "a word mixing Latin letters with look-alike letters of another script",
      });
    }
  }
  return hits;
}

// ---------------------------------------------------------------- hidden-markup

/** Tags that address a model rather than format text. */
const INSTRUCTION_TAG =
  /<\s*\/?\s*(important|system|system[-_ ]?prompt|instructions?|hidden|secret|admin|override|critical|urgent|assistant|human|user[-_ ]?instructions?|prompt|tool[-_]?call|function[-_]?call|context|ai|model|agent|note[-_]?to[-_]?(?:ai|model|assistant|agent))\b[^<>]{0,200}>/gi;
/** A shouting tag, `<ALERT>`, `<MUST_READ>`. */
const SHOUTING_TAG = /<\s*\/?\s*[A-Z][A-Z_-]{2,}\s*>/g;
/** Chat-template tokens and role headers of model prompts. */
const TEMPLATE =
  /<\|[a-z_]{2,}\|>|\[\/?INST\]|<<\/?SYS>>|^\s*#{1,6}\s*(system|instructions?|assistant)\b|^\s*(system|assistant)\s*:/gim;
/** Markup that hides text when rendered. */
const HIDING =
  /<!--|\[\/\/\]:\s*#|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0(?![.\d])/gi;
/** Whitespace that pushes what follows out of view. */
const PADDING = /(?:[ \t]*\r?\n){12,}|[ \t\u00a0\u3000]{120,}/g;

function markup(text: string): RuleHit[] {
  const hits: RuleHit[] = [];
  const add = (re: RegExp, what: string) => {
    for (const m of text.matchAll(re)) {
      hits.push({
        rule: "hidden-markup",
        severity: "error",
        start: m.index!,
        end: m.index! + m[0].length,
        what,
      });
    }
  };
  add(INSTRUCTION_TAG, "a tag addressing the model (<IMPORTANT>, <system>, <instructions>...)");
  add(SHOUTING_TAG, "an all-capitals tag (<ALERT>...), the shape of a hidden instruction");
  add(TEMPLATE, "a chat-template token or role header (<|im_start|>, [INST], system:)");
  add(HIDING, "markup that hides text when rendered (an HTML comment, display:none)");
  add(PADDING, "a run of blank space that pushes the text after it out of view");
  return hits;
}

// ---------------------------------------------------------------- hidden-instruction

/** Phrasing that overrides the agent's instructions or hides the call from the person. */
const INSTRUCTION = [
  /\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|the\s+|your\s+)*(previous|prior|above|earlier|preceding|other|system|original)\s+(instructions?|prompts?|rules|directions|guidelines|messages|context)\b/gi,
  /\b(do\s*n[o']?t|never|must\s+not|should\s+not)\s+(tell|inform|mention|reveal|show|notify|alert|warn|ask|let)\s+(this\s+|it\s+|that\s+|anything\s+|about\s+\w+\s+)?(to\s+)?(the\s+)?(user|human|person|operator|owner)\b/gi,
  /\bwithout\s+(telling|informing|asking|notifying|alerting|warning|mentioning\s+(it\s+|this\s+)?to|letting)\s+(the\s+)?(user|human|person|operator|owner)\b/gi,
  /\b(the\s+)?(user|human|person)\s+(must|should|need|may)\s*(not|n[o']t)\s+(know|see|notice|be\s+told|be\s+aware|find\s+out)\b/gi,
  /\b(keep|hide)\s+(this|it|that|them)\s+(secret|hidden|confidential|private)\s+from\b/gi,
  /\b(from\s+now\s+on|you\s+are\s+now|new\s+instructions?\s*:|act\s+as\s+(if|though)\s+you)\b/gi,
  /\b(otherwise|or\s+else)\s*,?\s+(the\s+|this\s+)?(tool|system|application|server|computer|data)\s+(will|would)\s+(not\s+work|fail|crash|break|be\s+(lost|deleted|destroyed))\b/gi,
  /\b(very|extremely)\s+important\s*:|\bthis\s+is\s+(very\s+|extremely\s+|really\s+)?(important|critical|vital)\s*[:!]/gi,
  /\b(before|prior\s+to)\s+(using|calling|invoking|running)\s+(this|any|the|every)\s+(other\s+)?tools?\s*,?\s+(you\s+)?(must|should|need\s+to|have\s+to|always)\b/gi,
  /\b(instead\s+of|rather\s+than)\s+(the\s+)?(user'?s?|requested)\s+(recipient|address|destination|target|account)\b/gi,
];

function instruction(text: string): RuleHit[] {
  return matches(
    text,
    INSTRUCTION,
    "hidden-instruction",
    "error",
    "phrasing that overrides the agent's instructions or hides what it does from the person",
  );
}

// ---------------------------------------------------------------- sensitive-request

/** Files that hold credentials or a client's configuration. */
const SENSITIVE_PATH =
  /(~|\$HOME|%USERPROFILE%|\/home\/[^/\s]+|\/root)?\/?\.ssh\b|\bid_(rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\/etc\/(passwd|shadow|sudoers)\b|\.aws\/(credentials|config)\b|(^|[\s'"`(/~])\.env(\.\w+)?\b|\.(npmrc|pypirc|netrc|git-credentials|pgpass)\b|\.docker\/config\.json\b|\.kube\/config\b|\bkubeconfig\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|\.cursor\/|\.gnupg\b|\bwallet\.dat\b|\bkeychain\b|\b(keepass|1password|bitwarden)\b/gi;
/** What an agent should never hand a tool of its own accord. */
const SECRET_NOUN =
  "(api[-_ ]?keys?|access[-_ ]?keys?|secret[-_ ]?keys?|private[-_ ]?keys?|passwords?|passphrases?|pass[-_ ]?codes?|credentials?|(access|auth|bearer|session|refresh|api)[-_ ]?tokens?|tokens?|secrets?|cookies?|seed[-_ ]?phrases?|mnemonics?|ssh[-_ ]?keys?|environment[-_ ]?variables?|env[-_ ]?vars?)";
const CONVERSATION =
  "(conversation|chat|message)[-_ ]?(history|log|so[-_ ]far)|(previous|prior|earlier|all|other)\\s+(messages|conversations?|tool\\s+(results|outputs|calls|descriptions))|system[-_ ]?prompts?|(your|the\\s+agent'?s?|the\\s+assistant'?s?|the\\s+model'?s?)\\s+(instructions|prompt|rules|memory)|everything\\s+(the\\s+user|you)\\s+(said|know|have\\s+seen)";
/** A verb that has the agent hand something over. */
const HAND_OVER =
  "(read|include|pass|provide|send|supply|attach|append|add|insert|put|copy|paste|forward|share|give|embed|upload|submit|fill|enter|dump|list|print|cat|collect|gather)";
const SENSITIVE = [
  new RegExp(`\\b${HAND_OVER}\\b[^.!?\\n]{0,80}\\b${SECRET_NOUN}(?![-_\\w])`, "gi"),
  new RegExp(
    `(?<![-_\\w])${SECRET_NOUN}\\b[^.!?\\n]{0,40}\\b(as|in|into|to)\\s+(the\\s+)?["'\`]?\\w+["'\`]?\\s+(argument|parameter|param|field|property)\\b`,
    "gi",
  ),
  new RegExp(`\\b(${CONVERSATION})\\b`, "gi"),
  /\b(pass|put|include|send|add|attach|append|insert|copy|paste|embed)\b[^.!?\n]{0,60}\b(its|their|the|file'?s?)\s+(content|contents|text|value)\b[^.!?\n]{0,40}\b(as|in|into)\s+(the\s+)?["'`]?\w+["'`]?(\s+(argument|parameter|param|field|property))?\b/gi,
];

function sensitive(text: string): RuleHit[] {
  return [
    ...matches(
      text,
      [SENSITIVE_PATH],
      "sensitive-request",
      "error",
      "it names a file that holds credentials or an MCP client's configuration",
    ),
    ...matches(
      text,
      SENSITIVE,
      "sensitive-request",
      "error",
      "it asks the agent to hand over files, secrets, credentials or the conversation",
    ),
  ];
}

// ---------------------------------------------------------------- tool-reference

/** Words around a name that make it a tool (or server) the text talks about. */
const TOOL_WORD = "(tools?|functions?|servers?|mcp|plugins?|actions?|commands?)";
/** An identifier: snake_case, kebab-case, dotted or camelCase, or any word in backticks or quotes. */
const IDENT = "[A-Za-z][A-Za-z0-9]*(?:[_.-][A-Za-z0-9]+|[a-z0-9][A-Z][a-z0-9]*)+";
const NAMED = [
  new RegExp(
    `(?:the|a|an)\\s+[\`"']?(${IDENT})[\`"']?\\s+${TOOL_WORD}\\b|\\b${TOOL_WORD}\\s+(?:named|called)\\s+[\`"']?(${IDENT}|\\w+)[\`"']?|[\`"'](\\w[\\w.-]*)[\`"']\\s+${TOOL_WORD}\\b`,
    "g",
  ),
  new RegExp(
    `\\b(?:[Cc]all|[Cc]alls|[Cc]alling|[Ii]nvoke|[Ii]nvoking|[Uu]se|[Uu]sing|[Rr]un|[Rr]unning)\\s+(?:the\\s+)?[\`"']?(${IDENT})[\`"']?\\s+(?:first|before|after|instead|with|to\\s+(?:send|forward|email|post|upload))\\b`,
    "g",
  ),
];
/** Conditions on, or orders about, tools the text does not describe. */
const OTHER_TOOLS = [
  /\b(when|whenever|if|once|every\s+time)\s+(the\s+|a\s+|any\s+|another\s+|other\s+)?[`"']?[\w.-]+[`"']?\s+(tool|function)\s+(is|gets|was|has\s+been)\s+(called|used|invoked|run|available)\b/gi,
  /\b(all|any|every|each)\s+(other\s+)?(tool|function|mcp\s+server)s?\b[^.!?\n]{0,60}\b(must|should|shall|need\s+to|have\s+to|always|never)\b/gi,
  /\b(other|another|different)\s+(mcp\s+)?(servers?|tools?|functions?)\b[^.!?\n]{0,60}\b(must|should|shall|always|never|instead)\b/gi,
  /\b(must|should|shall|always|never)\b[^.!?\n]{0,60}\b(other|another|different|all|any|every)\s+(mcp\s+)?(servers?|tools?|functions?)\b/gi,
];

function toolReference(text: string, ctx: RuleContext): RuleHit[] {
  const hits: RuleHit[] = [];
  for (const re of NAMED) {
    for (const m of text.matchAll(re)) {
      const name = m.slice(1).find((g) =>
        g !== undefined &&
        !/^(tools?|functions?|servers?|mcp|plugins?|actions?|commands?)$/i.test(g)
      );
      if (name === undefined || name === ctx.tool) continue;
      // The MCP server's own tools name each other ("use read_text_file instead").
      if (ctx.listed.has(name)) continue;
      hits.push({
        rule: "tool-reference",
        severity: "error",
        start: m.index!,
        end: m.index! + m[0].length,
        what: `it names a tool or server "${name}" the MCP server does not list (the shape of ` +
          `shadowing another server's tool)`,
      });
    }
  }
  hits.push(
    ...matches(
      text,
      OTHER_TOOLS,
      "tool-reference",
      "error",
      "it tells the agent how to use other tools or servers",
    ),
  );
  return hits;
}

// ---------------------------------------------------------------- address

const URL_RE =
  /\b(?:https?|ftps?|wss?|file|gopher|ldaps?|smb|sftp|ssh|telnet):\/\/[^\s"'<>`)\]]+/gi;
const EMAIL = /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g;
const IPV4 = /\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?::\d{1,5})?\b/g;
/** Hosts that exist to receive what is sent to them. */
const COLLECTOR =
  /\b[\w-]+\.(?:ngrok(?:-free)?\.(?:io|app|dev)|webhook\.site|requestbin\.\w+|pipedream\.net|burpcollaborator\.net|oast(?:ify)?\.\w+|interact\.sh|beeceptor\.com|hookbin\.com|onion)\b|\bwebhook\.site\b/gi;
const SEND =
  /\b(send|sends|sent|post|posts|upload|uploads|forward|forwards|report|reports|submit|submits|transmit|exfiltrate|email|e-mail|mail|bcc|cc|notify|deliver|copy\s+to|share\s+with|callback|beacon|webhook)\b/i;

function address(text: string, ctx: RuleContext): RuleHit[] {
  const hits: RuleHit[] = [];
  const found = (m: RegExpMatchArray, kindOf: string, collector = false) => {
    const start = m.index!;
    const end = start + m[0].length;
    if (ctx.kind === "value" && kindOf === "a URL" && !collector) return;
    const sentence = sentenceAround(text, start, end);
    const steered = collector || (ctx.kind !== "value" && SEND.test(sentence));
    hits.push({
      rule: "address",
      severity: steered ? "error" : "warning",
      start,
      end,
      what: collector
        ? "an address of a service that collects what is sent to it"
        : steered
        ? `${kindOf} the text tells the agent to send something to`
        : `${kindOf} (an agent could be told to send data there)`,
    });
  };
  for (const m of text.matchAll(COLLECTOR)) found(m, "an address", true);
  const taken = (m: RegExpMatchArray) => hits.some((h) => h.start <= m.index! && m.index! < h.end);
  for (const m of text.matchAll(URL_RE)) if (!taken(m)) found(m, "a URL");
  for (const m of text.matchAll(EMAIL)) if (!taken(m)) found(m, "an email address");
  for (const m of text.matchAll(IPV4)) if (!taken(m)) found(m, "an IP address");
  return hits;
}

// ---------------------------------------------------------------- encoded-blob

const BASE64 = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/_-])/g;
const BASE64URL = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9_-]{24,}(?![A-Za-z0-9+/_-])/g;
const HEX = /(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}){16,}(?![0-9A-Za-z])/g;
const ESCAPES = /(?:\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}|&#x?[0-9A-Fa-f]+;){8,}/g;
const DATA_URI = /\bdata:[\w.+/-]*(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=]{16,}/gi;

/** Decoded bytes read as text, when most of them are printable (a hidden message). */
function asText(bytes: Uint8Array): string | undefined {
  if (bytes.length < 12) return undefined;
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const printable = [...text].filter((c) => /[\p{L}\p{N}\p{P}\p{Zs}\n]/u.test(c)).length;
  const letters = [...text].filter((c) => /\p{L}/u.test(c)).length;
  return printable / [...text].length > 0.9 && letters / [...text].length > 0.5 && /\s/.test(text)
    ? text
    : undefined;
}

function fromBase64(s: string): Uint8Array | undefined {
  try {
    const std = s.replaceAll("-", "+").replaceAll("_", "/").replace(/=+$/, "");
    const padded = std + "=".repeat((4 - (std.length % 4)) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function fromEscapes(s: string): Uint8Array {
  const out: number[] = [];
  for (
    const m of s.matchAll(
      /\\x([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})|%([0-9A-Fa-f]{2})|&#(x?)([0-9A-Fa-f]+);/g,
    )
  ) {
    const code = m[1] ?? m[3]
      ? parseInt(m[1] ?? m[3], 16)
      : m[2]
      ? parseInt(m[2], 16)
      : parseInt(m[5], m[4] ? 16 : 10);
    out.push(...new TextEncoder().encode(String.fromCodePoint(Math.min(code, 0x10ffff))));
  }
  return new Uint8Array(out);
}

function blobs(text: string): RuleHit[] {
  const hits: RuleHit[] = [];
  const seen = (start: number) => hits.some((h) => h.start <= start && start < h.end);
  const judge = (m: RegExpMatchArray, bytes: Uint8Array | undefined, long: number) => {
    if (seen(m.index!)) return;
    const decoded = bytes && asText(bytes);
    if (decoded === undefined && m[0].length < long) return;
    hits.push({
      rule: "encoded-blob",
      severity: decoded === undefined ? "warning" : "error",
      start: m.index!,
      end: m.index! + m[0].length,
      what: decoded === undefined
        ? "a long encoded run (base64, hex or escapes) a reader cannot check"
        : "encoded text (it decodes to words a model can read and a reader cannot see)",
    });
  };
  for (const m of text.matchAll(DATA_URI)) {
    judge(m, fromBase64(m[0].slice(m[0].indexOf(",") + 1)), 0);
  }
  for (const m of text.matchAll(ESCAPES)) judge(m, fromEscapes(m[0]), 64);
  for (const m of text.matchAll(HEX)) {
    judge(m, Uint8Array.from(m[0].match(/../g)!, (h) => parseInt(h, 16)), 129);
  }
  for (const re of [BASE64, BASE64URL]) {
    for (const m of text.matchAll(re)) {
      // An identifier is not a blob: base64 of anything mixes cases and digits.
      if (!/[a-z]/.test(m[0]) || !/[A-Z]/.test(m[0]) || !/\d/.test(m[0])) continue;
      judge(m, fromBase64(m[0]), 64);
    }
  }
  return hits;
}

// ---------------------------------------------------------------- long-text

function long(text: string, ctx: RuleContext): RuleHit[] {
  const bound = ctx.kind === "prose" ? ctx.longAt : { warn: 1000, error: 4000 };
  if (text.length <= bound.warn) return [];
  const error = text.length > bound.error;
  return [{
    rule: "long-text",
    severity: error ? "error" : "warning",
    start: 0,
    end: text.length,
    what:
      `${text.length} characters, ${error ? "far " : ""}longer than a tool's purpose needs (over ${
        error ? bound.error : bound.warn
      }): room for ` +
      `instructions a reader skims past`,
  }];
}

// ---------------------------------------------------------------- all

function matches(
  text: string,
  res: readonly RegExp[],
  rule: ScanRule,
  severity: RuleHit["severity"],
  what: string,
): RuleHit[] {
  const hits: RuleHit[] = [];
  for (const re of res) {
    for (const m of text.matchAll(re)) {
      if (m[0].length === 0) continue;
      hits.push({ rule, severity, start: m.index!, end: m.index! + m[0].length, what });
    }
  }
  return hits;
}

/** The sentence (or line) around a span. */
function sentenceAround(text: string, start: number, end: number): string {
  const before = text.slice(0, start);
  const from = Math.max(
    before.lastIndexOf(". "),
    before.lastIndexOf("! "),
    before.lastIndexOf("? "),
    before.lastIndexOf("\n"),
  ) + 1;
  const rest = text.slice(end).search(/[.!?](\s|$)|\n/);
  return text.slice(from, rest < 0 ? text.length : end + rest);
}

const ASCII = /^[\x00-\x7f]*$/;
/** The longest string read rule by rule (longer is a `long-text` error). */
const MAX_READ = 65_536;

/**
 * Every rule's hits in one string, spans in order. Names (keys, the tool's
 * name) are read for hidden characters only; values skip the `long-text`
 * bound of prose and count a plain URL as no finding.
 */
export function scanText(text: string, ctx: RuleContext): RuleHit[] {
  if (text.length === 0) return [];
  // Text this long is an error by its length alone; reading it word by word would only cost.
  if (text.length > MAX_READ) return long(text, { ...ctx, longAt: { warn: 0, error: 0 } });
  // Hidden characters and look-alike letters are never ASCII: most text skips both.
  const hits = ASCII.test(text) ? [] : [...invisible(text), ...mixedScript(text)];
  if (ctx.kind !== "name") {
    hits.push(
      ...markup(text),
      ...instruction(text),
      ...sensitive(text),
      ...toolReference(text, ctx),
      ...address(text, ctx),
      ...blobs(text),
      ...long(text, ctx),
    );
  }
  return hits.sort((a, b) => a.start - b.start || a.end - b.end);
}
