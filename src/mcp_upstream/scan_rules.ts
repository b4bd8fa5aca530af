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
import { blobs } from "./scan_blobs.ts";
import { fold, isLookalike, originalSpan, rot13, splitName, type View } from "./scan_fold.ts";

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

/**
 * A word that mixes Latin letters with letters of another script that pass
 * for Latin ones (`gеt_file` with a Cyrillic е; scan_fold.ts LOOKALIKES).
 * Letters that look like no Latin letter are words of their own (`μs`,
 * `kΩ`, `πr²`).
 */
function mixedScript(text: string): RuleHit[] {
  const hits: RuleHit[] = [];
  for (const m of text.matchAll(WORD)) {
    if (LATIN.test(m[0]) && [...m[0]].some((c) => isLookalike(c) && !LATIN.test(c))) {
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
const TAG = "a tag addressing the model (<IMPORTANT>, <system>, <instructions>...)";
/** A shouting tag, `<ALERT>`, `<MUST_READ>`. */
const SHOUTING_TAG = /<[ \t]*\/?[ \t]*[A-Z][A-Z_-]{2,40}[ \t]*>/g;
/** Chat-template tokens and role headers of model prompts. */
const TEMPLATE =
  /<\|[a-z_]{2,40}\|>|\[\/?INST\]|<<\/?SYS>>|^[ \t]*#{1,6}[ \t]*(system|instructions?|assistant)\b|^[ \t]*(system|assistant)[ \t]*:/gim;
/**
 * Markup that hides text when rendered: an HTML comment, a markdown comment
 * (a link definition nothing links to: `[//]: # (...)`, `[comment]: <> (...)`),
 * CSS that hides, an element's `hidden` attribute.
 */
const HIDING =
  /<!--|^[ \t]*\[[^\]\n]{1,40}\]:[ \t]*(?:#|<>)|display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0(?![.\d])|<[a-z][\w-]{0,40}\s[^<>]{0,200}\bhidden\b[^<>]{0,200}>/gim;
/** Blank lines or space (any kind: line and paragraph separators, em spaces) that push what follows out of view. */
const PADDING = /(?:[\p{Zs}\t]*(?:\r\n|[\n\r\v\f\u0085\u2028\u2029])){12,}|[\p{Zs}\t]{120,}/gu;

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
  add(INSTRUCTION_TAG, TAG);
  add(SHOUTING_TAG, "an all-capitals tag (<ALERT>...), the shape of a hidden instruction");
  add(TEMPLATE, "a chat-template token or role header (<|im_start|>, [INST], system:)");
  add(HIDING, "markup that hides text when rendered (an HTML comment, display:none)");
  add(PADDING, "a run of blank space that pushes the text after it out of view");
  return hits;
}

// ---------------------------------------------------------------- hidden-instruction

/** Phrasing that overrides the agent's instructions or hides the call from the person. */
const INSTRUCTION = [
  /\b(ignore|disregard|forget|override|bypass)\s+((all|any|the|your|of|every|each|these|those|my)\s+){0,4}(previous|prior|above|earlier|preceding|other|system|original|former|existing|initial)\s+(instructions?|prompts?|rules|directions|guidelines|guidance|messages|context|commands|orders)\b/gi,
  /\b(ignore|disregard|forget)\s+((all|any|the|your|of|every|these|those)\s+){0,4}(instructions?|rules|guidelines|directions|prompts?)\s+(above|before\s+this|(given|written)\s+(earlier|before|above)|you\s+(were|have\s+been|got)\s+(given|told))\b/gi,
  /\b(silently|secretly|quietly|covertly|discreetly|invisibly)\s+(\w+\s+)?(include|add|send|pass|attach|append|read|call|forward|copy|upload|run|execute|collect|put|insert|embed|record|share|submit|fill)\b/gi,
  /\bwithout\s+(the\s+)?(user|human|person|operator|owner)('?s)?\s+(noticing|knowing|knowledge|seeing|being\s+told|consent|approval|permission)\b/gi,
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

/**
 * The same two shapes (override the instructions, keep it from the user) in
 * the languages most tool text is written in besides English: French,
 * Spanish, Portuguese, Italian, German, Dutch, Russian, Ukrainian, Polish,
 * Chinese, Japanese, Korean. Not exhaustive: a description in another
 * language is read by the other rules only.
 */
const INSTRUCTION_ELSEWHERE = [
  // fr
  /\b(ignore[zr]?|oublie[zr]?)\s+(toutes\s+)?(les\s+)?(instructions|consignes|directives|r[eè]gles)\s+(pr[eé]c[eé]dentes|ant[eé]rieures|ci-dessus)/giu,
  /\bne\s+(le\s+|rien\s+)?(dis|dites|dire|mentionne[zr]?|r[eé]v[eè]le[zr]?)\s+(pas\s+|rien\s+)?(à|a)\s+l['’]utilisat(eur|rice)|\bsans\s+(le\s+)?(dire|pr[eé]venir|informer)\s+(à\s+)?l['’]utilisat(eur|rice)/giu,
  // es, pt, it
  /\b(ignora[rd]?|ignore|olvida[rd]?|esque[cç]a)\s+(todas\s+)?(las\s+|as\s+|le\s+|tutte\s+le\s+)?(instrucciones|instru[cç][oõ]es|istruzioni|reglas|regras|regole)\s+(anteriores|previas|pr[eé]vias|precedenti)/giu,
  /\bno\s+(le\s+)?(digas|diga|informes|menciones|cuentes)\s+(nada\s+)?al\s+usuario|\bn[ãa]o\s+(diga|conte|informe|mencione)\s+(nada\s+)?ao\s+usu[aá]rio|\bnon\s+(dire|dirlo|informare|menzionare)\s+(nulla\s+|niente\s+)?all['’]utente|\bsin\s+(decirle|avisar|informar)\s+al\s+usuario|\bsem\s+(dizer|avisar|informar)\s+ao\s+usu[aá]rio|\bsenza\s+(dire|avvisare|informare)\s+(nulla\s+)?all['’]utente/giu,
  // de, nl
  /\b(ignorier(e|en|t)?|vergiss|vergessen\s+Sie|negeer)\s+(alle\s+)?(vorherigen|bisherigen|obigen|vorigen|vorangegangenen|eerdere|vorige)\s+(Anweisungen|Instruktionen|Regeln|instructies|regels)/giu,
  /\b(sag|sage|sagen\s+Sie|erzähl|erzähle)\s+(dem|der)\s+(Benutzer(in)?|Nutzer(in)?|Anwender(in)?)\s+(nichts|nicht)|\bohne\s+(es\s+)?(dem|der)\s+(Benutzer(in)?|Nutzer(in)?)\s+zu\s+sagen|\b(vertel|zeg)\s+(het\s+)?niet\s+(aan\s+)?de\s+gebruiker/giu,
  // ru, uk, pl
  /(?<!\p{L})(игнорир|проигнорир|забуд|ігнор)\p{L}*\s+(все\s+|всі\s+)?(предыдущие|прежние|вышеуказанные|попередні)\s+(инструкции|указания|правила|інструкції)/giu,
  /(?<!\p{L})не\s+(говори|сообщай|рассказывай|кажи|повідомляй)\p{L}*\s+(об\s+этом\s+)?(пользователю|користувачеві)|(?<!\p{L})zignoruj\s+(wszystkie\s+)?(poprzednie|wcześniejsze)\s+(instrukcje|polecenia)|(?<!\p{L})nie\s+(mów|informuj)\s+(o\s+tym\s+)?użytkownik/giu,
  // zh, ja, ko
  /(忽略|无视|無視|忽視|忘记|忘記)[^。！？\n]{0,8}(之前|以前|先前|上面|上述|前面|所有)[^。！？\n]{0,6}(指令|指示|说明|說明|规则|規則|提示)|(不要|别|別|勿)(告诉|告訴|通知|提醒|让|讓)(用户|用戶|使用者)/gu,
  /(以前|前|これまで|上記)の(すべての)?(指示|命令|ルール)を(すべて)?無視|ユーザー(に|には)(言わ|伝え|知らせ|教え)ない/gu,
  /(이전|앞의|위의)\s*(모든\s*)?(지시|지침|명령|규칙)(사항)?(을|를)?\s*무시|사용자에게\s*(알리지|말하지|말하지도)\s*(마|말|않)/gu,
];

/** Stems one of {@link INSTRUCTION_ELSEWHERE} needs (most text has none: those are not run). */
const ELSEWHERE_STEMS =
  /[\u0400-\u04ff\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]|ignor(ez|er|a|ier)|oubli|olvid|esque|vergi|vergess|negeer|zignor|utilisat|usu[aá]ri|utente|benutzer|nutzer|anwender|gebruiker|użytkown|\bsag(e|en)?\b|erzähl|vertel|\bzeg\b/i;

function instruction(text: string): RuleHit[] {
  return matches(
    text,
    ELSEWHERE_STEMS.test(text) ? [...INSTRUCTION, ...INSTRUCTION_ELSEWHERE] : INSTRUCTION,
    "hidden-instruction",
    "error",
    "phrasing that overrides the agent's instructions or hides what it does from the person",
  );
}

// ---------------------------------------------------------------- sensitive-request

/** Files that hold credentials or a client's configuration. */
const SENSITIVE_PATH =
  /(~|\$HOME|%USERPROFILE%|\/home\/[^/\s]+|\/root)?\/?\.ssh\b|(?<![A-Za-z0-9])id_(rsa|dsa|ecdsa|ed25519)(?![A-Za-z0-9])|(?<![A-Za-z0-9])authorized_keys(?![A-Za-z0-9])|\/etc\/(passwd|shadow|sudoers)\b|\.aws\/(credentials|config)\b|(^|[\s'"`(/~])\.env(\.\w+)?\b|\.(npmrc|pypirc|netrc|git-credentials|pgpass)\b|\.docker\/config\.json\b|\.kube\/config\b|\bkubeconfig\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|\.cursor\/|\.gnupg\b|\bwallet\.dat\b|\bkeychain\b|\b(keepass|1password|bitwarden)\b/gi;
/** What an agent should never hand a tool of its own accord. */
const SECRET_NOUN =
  "(api[-_ ]?keys?|access[-_ ]?keys?|secret[-_ ]?keys?|private[-_ ]?keys?|passwords?|passphrases?|pass[-_ ]?codes?|credentials?|(access|auth|bearer|session|refresh|api)[-_ ]?tokens?|(?<!(page|next|continuation|pagination|cursor|sync|delta|resume|skip|start)[-_ ]?)tokens?|secrets?|cookies?|seed[-_ ]?phrases?|mnemonics?|ssh[-_ ]?keys?|environment[-_ ]?variables?|env[-_ ]?vars?)";
const CONVERSATION =
  "(conversations?|chats?|messages?)[-_ ]?(history|log|so[-_ ]far)|(previous|prior|earlier|other)\\s+(messages|conversations?|tool\\s+(results|outputs|calls|descriptions))|all\\s+(the\\s+)?(previous\\s+)?(messages|tool\\s+(results|outputs|calls|descriptions))|system[-_ ]?prompts?|(your|the\\s+agent'?s?|the\\s+assistant'?s?|the\\s+model'?s?)\\s+(instructions|prompt|memory)|(the\\s+agent'?s?|the\\s+assistant'?s?|the\\s+model'?s?)\\s+rules|everything\\s+(the\\s+user|you)\\s+(said|know|have\\s+seen)";
/** A verb that has the agent hand something over. */
const HAND_OVER =
  "(include|pass|provide|send|supply|attach|append|insert|put|copy|paste|forward|share|give|embed|upload|submit|fill|enter|dump|leak|exfiltrate)";
/**
 * A verb that has the agent fetch something: what a tool over secrets says
 * of itself ("List repository secrets", "Read a secret"), so a secret named
 * after one is a request only when the text goes on to hand it over.
 */
const FETCH = "(read|list|print|cat|collect|gather|add|get|fetch|retrieve|find|look\\s+up)";
const ONWARD =
  `(\\b${HAND_OVER}\\b|\\b(as|in|into|to)\\s+(the\\s+)?["'\`]?\\w+["'\`]?\\s+(argument|parameter|param|field|property)\\b)`;
const SENSITIVE = [
  new RegExp(`\\b${HAND_OVER}\\b[^.!?\\n]{0,80}\\b${SECRET_NOUN}(?![-_\\w])`, "gi"),
  new RegExp(
    `\\b${FETCH}\\b[^.!?\\n]{0,80}\\b${SECRET_NOUN}(?![-_\\w])[^.!?\\n]{0,80}${ONWARD}`,
    "gi",
  ),
  new RegExp(
    `(?<![-_\\w])${SECRET_NOUN}\\b[^.!?\\n]{0,40}\\b(as|in|into|to)\\s+(the\\s+)?["'\`]?\\w+["'\`]?\\s+(argument|parameter|param|field|property)\\b`,
    "gi",
  ),
  new RegExp(`\\b(${CONVERSATION})\\b`, "gi"),
  /\b(pass|put|include|send|add|attach|append|insert|copy|paste|embed)\b[^.!?\n]{0,60}\b(its|their|the|file'?s?|command'?s?)\s+(content|contents|text|value|output|result)\b[^.!?\n]{0,40}\b(as|in|into)\s+(the\s+)?(["'`]\w+["'`](\s+(argument|parameter|param|field|property))?|\w+\s+(argument|parameter|param|field|property)\b)/gi,
];

const NAMED_FILE = "it names a file that holds credentials or an MCP client's configuration";

function sensitive(text: string): RuleHit[] {
  return [
    ...matches(
      text,
      [SENSITIVE_PATH],
      "sensitive-request",
      "error",
      NAMED_FILE,
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
/** An identifier (bounded: one start never reads far); {@link SEVERAL_WORDS} tells a name from a word. */
const IDENT = "[A-Za-z](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9])?";
/** An identifier of several words: snake, kebab, dotted or camel case. */
const SEVERAL_WORDS = /[A-Za-z0-9][_.-][A-Za-z0-9]|[a-z0-9][A-Z]/;
const NAMED = [
  new RegExp(
    `(?:the|a|an)\\s+[\`"']?(${IDENT})[\`"']?\\s+${TOOL_WORD}\\b|\\b${TOOL_WORD}\\s+(?:named|called)\\s+[\`"']?(${IDENT}|\\w+)[\`"']?|[\`"'](\\w[\\w.-]*)[\`"']\\s+${TOOL_WORD}\\b`,
    "g",
  ),
  new RegExp(
    `\\b(?:[Cc]all|[Cc]alls|[Cc]alling|[Ii]nvoke|[Ii]nvoking|[Uu]se|[Uu]sing|[Rr]un|[Rr]unning)\\s+(?:the\\s+)?[\`"']?(${IDENT})[\`"']?\\s+(?:first|before|after|instead|with|on|and|then|to\\s+(?:send|forward|email|post|upload))\\b`,
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
      // "the X tool", "call X first": X names a tool when it is an identifier of several words.
      if (m[1] !== undefined && !SEVERAL_WORDS.test(m[1])) continue;
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
/** Local part and labels bounded as RFC 5321 bounds them (64, 63): one start never reads far. */
const EMAIL =
  /\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b/g;
const IPV4 = /\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?::\d{1,5})?\b/g;
/** Hosts that exist to receive what is sent to them. */
const COLLECTOR =
  /\b[\w-]{1,63}\.(?:ngrok(?:-free)?\.(?:io|app|dev)|webhook\.site|requestbin\.\w+|pipedream\.net|burpcollaborator\.net|oast(?:ify)?\.\w+|interact\.sh|beeceptor\.com|hookbin\.com|onion)\b|\bwebhook\.site\b/gi;
/**
 * A markdown image whose address carries a query (`![](https://x.example/p.png?d=...)`):
 * a client that shows the answer fetches it, sending whatever the agent
 * wrote there.
 */
const BEACON =
  /!\[[^\]\n]{0,200}\]\([ \t]*<?[a-z][\w+.-]{0,31}:[^\s)?]{0,2048}\?[^\s)]{0,2048}\)?/gi;
const SEND =
  /\b(send|sends|sent|post|posts|upload|uploads|forward|forwards|report|reports|submit|submits|transmit|exfiltrate|email|e-mail|mail|bcc|cc|notify|deliver|copy\s+to|share\s+with|callback|beacon|webhook)\b|\b(envoie[zr]?|envoyez|envoyer|transmett(ez|re)|sende[nt]?|schicke[nn]?|übermittel[nt]?|env[ií]a(r|lo)?|enviar|invia(re)?|verstuur|stuur|wy[sś]lij)\b|(?<!\p{L})(отправ|перешл|надішл)\p{L}*|发送|发给|傳送|送信|전송|보내/iu;

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
  if (ctx.kind === "prose") {
    for (const m of text.matchAll(BEACON)) {
      if (hits.some((h) => h.start < m.index! + m[0].length && m.index! < h.end)) continue;
      hits.push({
        rule: "address",
        severity: "error",
        start: m.index!,
        end: m.index! + m[0].length,
        what:
          "a markdown image with a query: a client that shows it sends the query to that address",
      });
    }
  }
  const taken = (m: RegExpMatchArray) => hits.some((h) => h.start <= m.index! && m.index! < h.end);
  for (const m of text.matchAll(URL_RE)) if (!taken(m)) found(m, "a URL");
  for (const m of text.matchAll(EMAIL)) if (!taken(m)) found(m, "an email address");
  for (const m of text.matchAll(IPV4)) if (!taken(m)) found(m, "an IP address");
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
/** A name (a property, a `$defs` entry) is an identifier: longer than this is text. */
const NAME_LONG = { warn: 100, error: 500 };
/** Files a name (`id_rsa_contents`, `mcp.json`) should never hold. */
const NAME_SENSITIVE =
  /(?<![A-Za-z0-9])(id_(rsa|dsa|ecdsa|ed25519)|authorized_keys|mcp\.json|claude_desktop_config(\.json)?)(?![A-Za-z0-9])|(^|[~/_-])\.ssh\b|\/etc\/(passwd|shadow)\b/gi;
const SEEN_THROUGH =
  " (read through look-alike letters, character references, escapes or hidden characters)";

/**
 * The rules a text made of several strings (a line each) is read by again:
 * instructions, tags and tool references written across strings.
 */
export function scanAcross(text: string, ctx: RuleContext): RuleHit[] {
  return [
    ...matches(text, [INSTRUCTION_TAG], "hidden-markup", "error", TAG),
    ...instruction(text),
    ...toolReference(text, ctx),
  ];
}

/** The rules that read what a text says (not how it is written or how long it is). */
function phrases(text: string, ctx: RuleContext): RuleHit[] {
  return [
    ...markup(text),
    ...instruction(text),
    ...sensitive(text),
    ...toolReference(text, ctx),
    ...address(text, ctx),
    ...blobs(text),
  ];
}

/**
 * The hits of `rules` in a view of the text (scan_fold.ts), as spans of the
 * text, that the text as written did not show (a rule's hit already there
 * is not said twice).
 */
function seenThrough(
  view: View | undefined,
  hits: readonly RuleHit[],
  rules: (text: string) => RuleHit[],
  note: string,
): RuleHit[] {
  if (!view) return [];
  return rules(view.text).flatMap((hit) => {
    const [start, end] = originalSpan(view, hit.start, hit.end);
    const shown = hits.some((h) => h.rule === hit.rule && h.start < end && start < h.end);
    return shown ? [] : [{ ...hit, start, end, what: hit.what + note }];
  });
}

/**
 * Every rule's hits in one string, spans in order. Prose and values are read
 * as written, through scan_fold.ts's fold (look-alike letters, references,
 * escapes, hidden characters undone) and rotated (ROT13). A name (a key, the
 * tool's name) is read for hidden characters, look-alike letters, markup,
 * credential files, length, and its words (`ignore_previous_instructions`);
 * a name holding a space is read as prose. Values skip the `long-text`
 * bound of prose and count a plain URL as no finding.
 */
export function scanText(text: string, ctx: RuleContext): RuleHit[] {
  if (text.length === 0) return [];
  // Text this long is an error by its length alone; reading it word by word would only cost.
  if (text.length > MAX_READ) return long(text, { ...ctx, longAt: { warn: 0, error: 0 } });
  // Hidden characters and look-alike letters are never ASCII: most text skips both.
  const hits = ASCII.test(text) ? [] : [...invisible(text), ...mixedScript(text)];
  if (ctx.kind === "name" && !/\s/.test(text)) {
    hits.push(
      ...markup(text),
      ...matches(text, [NAME_SENSITIVE], "sensitive-request", "error", NAMED_FILE),
      ...long(text, { ...ctx, kind: "prose", longAt: NAME_LONG }),
    );
    const words = (t: string) => [...markup(t), ...instruction(t)];
    hits.push(...seenThrough(splitName(text), hits, words, ""));
    hits.push(...seenThrough(fold(text), hits, words, SEEN_THROUGH));
  } else {
    const read = ctx.kind === "name" ? { ...ctx, kind: "prose" as const, longAt: NAME_LONG } : ctx;
    hits.push(...phrases(text, read), ...long(text, read));
    hits.push(...seenThrough(fold(text), hits, (t) => phrases(t, read), SEEN_THROUGH));
    hits.push(
      ...seenThrough(
        rot13(text),
        hits,
        (t) => [...instruction(t), ...sensitive(t)],
        " (written in ROT13)",
      ),
    );
  }
  return hits.sort((a, b) => a.start - b.start || a.end - b.end);
}
