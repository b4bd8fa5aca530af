/**
 * `weir scaffold`: an OpenAPI document -> a guardfile that grants exactly the
 * chosen operations (none until chosen), lists every other one ready to turn
 * on, and says why each inexpressible one is left out.
 *
 * Every grant written is checked with weir's own loader before it is offered:
 * the text is parsed once with every expressible grant on, and a grant the
 * loader refuses is demoted to a comment with the loader's message. The final
 * text is parsed again; so the output always loads (`weir lint` exit 0).
 *
 * @module
 */
import { httpAccess } from "../guardfile/reads.ts";
import { parseGuardfile } from "../guardfile/load.ts";
import { printable } from "../guardfile/diagnostics.ts";
import type { HttpMethod } from "../guardfile/model.ts";
import type { OpenApiDocument, Operation } from "./document.ts";
import { type Derivation, deriveGrant } from "./derive.ts";
import { type GrantName, nameGrant } from "./naming.ts";
import { renderScaffold } from "./render.ts";
import {
  acceptsAuth,
  type AuthPlan,
  type BaseUrlPlan,
  chooseAuth,
  chooseBaseUrl,
  envName,
} from "./upstream.ts";

/** What to choose. */
export interface ScaffoldOptions {
  /** `METHOD /path`, an operationId or a tool name, each one operation. */
  select?: string[];
  /** Every operation that reads (src/guardfile/reads.ts: a GET or HEAD with no body). */
  selectReads?: boolean;
  /** The server name (`wrap ward mcp <name>`); default from the document's title. */
  server?: string;
  /** The document's file name, for the header comment. */
  source: string;
  /**
   * The largest guardfile weir loads, in bytes (`MAX_GUARDFILE_BYTES` of the
   * loader): past it, unchosen grants are listed one line each.
   */
  maxBytes: number;
}

/** The scaffold: the text and what became of each operation. */
export interface Scaffold {
  text: string;
  server: string;
  baseUrl: BaseUrlPlan;
  auth: AuthPlan;
  /** Every operation, in document order. */
  derivations: Derivation[];
  /** The chosen ones (each a grant in the text). */
  selected: Derivation[];
  /**
   * Unchosen operations are listed one comment line each, or not at all, to
   * keep the file under weir's size cap.
   */
  compact: boolean;
}

/**
 * A selector matched nothing (`unknown`: the command line is wrong), matched
 * an operation the grammar cannot express, or the selection is too large for
 * one guardfile.
 */
export class SelectionError extends Error {
  override name = "SelectionError";
  /**
   * @param message what is wrong and what to do
   * @param unknown a selector matched no operation
   */
  constructor(message: string, readonly unknown = false) {
    super(message);
  }
}

/**
 * Name every operation of a document (names do not depend on the selection).
 * @returns each operation with its grant name, in document order
 */
export function nameOperations(doc: OpenApiDocument): { op: Operation; name: GrantName }[] {
  const taken = new Set<string>();
  return doc.operations.map((op) => ({
    op,
    name: nameGrant(
      (["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].includes(op.method)
        ? op.method
        : "POST") as HttpMethod,
      op.path,
      op.operationId,
      taken,
    ),
  }));
}

/** Title words that name no API: left out of a server name. */
const FILLER = new Set([
  "a",
  "an",
  "and",
  "api",
  "apis",
  "definition",
  "extension",
  "extensions",
  "for",
  "of",
  "official",
  "openapi",
  "rest",
  "spec",
  "specification",
  "the",
  "with",
]);

/**
 * The server name (`wrap ward mcp <name>`, and the stem of the environment
 * variables the file names): the API's own name when its first server is
 * `api.<name>.<tld>` (`https://api.github.com` -> `github`), else up to
 * three words of the title without filler (`Swagger Petstore` ->
 * `swagger-petstore`, `GitHub's official OpenAPI spec` -> `github`), else
 * the file name's stem, else `api`.
 */
export function serverName(doc: OpenApiDocument, fallback: string): string {
  const first = doc.servers[0]?.url;
  if (typeof first === "string") {
    const host = /^https?:\/\/api\.([a-z0-9][a-z0-9-]*)\.[a-z]{2,}(?:\.[a-z]{2,})?(?:[:/]|$)/i.exec(
      first,
    );
    if (host && !/^(?:co|com|org|net|gov|ac|edu|example|localhost|test|invalid)$/i.test(host[1])) {
      return host[1].toLowerCase();
    }
  }
  const slug = (text: string) => {
    const words = text.toLowerCase().replace(/['\u2019]s\b/g, "").split(/[^a-z0-9]+/)
      .filter((w) => w !== "" && !FILLER.has(w) && !/^v\d+$/.test(w));
    let out = "";
    for (const w of words.slice(0, 3)) {
      const next = out === "" ? w : `${out}-${w}`;
      if (next.length > 32) break;
      out = next;
    }
    if (out === "" && words.length > 0) out = words[0].slice(0, 32);
    return out === "" ? "" : /^[a-z]/.test(out) ? out : `api-${out}`;
  };
  return slug(doc.title) || slug(fallback.replace(/\.[^.]*$/, "")) || "api";
}

/**
 * Find the operations selectors name.
 * @throws {SelectionError} naming each selector that matches nothing, with near matches
 */
export function resolveSelectors(
  named: { op: Operation; name: GrantName }[],
  selectors: string[],
): Set<number> {
  const chosen = new Set<number>();
  const missing: string[] = [];
  for (const raw of selectors) {
    const sel = raw.trim();
    const m = /^([A-Za-z]+)\s+(\S.*)$/.exec(sel);
    let found = -1;
    named.forEach(({ op, name }, i) => {
      if (found >= 0) return;
      if (
        (m && m[1].toUpperCase() === op.method && m[2] === op.path) ||
        op.operationId === sel || name.tool === sel
      ) found = i;
    });
    if (found < 0) missing.push(sel);
    else chosen.add(found);
  }
  if (missing.length > 0) {
    const near = (s: string) => {
      const needle = s.toLowerCase().replace(/^[a-z]+\s+/, "");
      return named.filter(({ op }) =>
        `${op.path} ${op.operationId ?? ""}`.toLowerCase().includes(needle)
      ).slice(0, 3).map(({ op }) => `"${op.method} ${op.path}"`);
    };
    throw new SelectionError(
      missing.map((s) => {
        const hints = near(s);
        return `--select ${JSON.stringify(s)} matches no operation of the document` +
          (hints.length > 0 ? `; did you mean ${hints.join(", ")}?` : "") +
          ` (give "METHOD /path" as the document writes it, an operationId, or a tool name)`;
      }).join("\n"),
      true,
    );
  }
  return chosen;
}

/**
 * Build the scaffold.
 * @throws {SelectionError} when a selector matches nothing, an explicitly
 *   selected operation cannot be expressed, or the chosen grants alone would
 *   pass `maxBytes` (the message says why and what to do)
 */
export function buildScaffold(doc: OpenApiDocument, options: ScaffoldOptions): Scaffold {
  const named = nameOperations(doc);
  const server = options.server ?? serverName(doc, options.source);
  const explicit = resolveSelectors(named, options.select ?? []);
  const chosen = new Set(explicit);
  // --select-reads: the operations the one definition of read calls reads
  // (src/guardfile/reads.ts): a GET or HEAD that sends no request body.
  if (options.selectReads) {
    named.forEach(({ op }, i) => {
      const access = httpAccess({ method: op.method, sendsBody: op.requestBody !== undefined });
      if (access.reads) chosen.add(i);
    });
  }
  const voters = chosen.size > 0 ? [...chosen].map((i) => named[i].op) : doc.operations;
  const { auth, baseUrl } = checkUpstream(
    server,
    chooseBaseUrl(doc, server),
    chooseAuth(doc, voters, server),
  );
  const derivations = named.map(({ op, name }) => {
    const d = deriveGrant(op, name, auth);
    if (d.grant && !acceptsAuth(op, auth)) {
      const names = op.security.map((alt) => Object.keys(alt).join(" + ")).join(" or ");
      d.otherAuth = `declares security ${names}; this file sends ` +
        (auth.kind === "none" ? "no credential" : `"${auth.scheme}"`) +
        `, so the upstream may refuse it: scaffold it into a guardfile of its own`;
    }
    return d;
  });
  checkEachGrant(derivations, server, baseUrl, auth);
  const inexpressible = [...explicit].filter((i) => !derivations[i].grant);
  if (inexpressible.length > 0) {
    throw new SelectionError(
      inexpressible.map((i) => {
        const d = derivations[i];
        return `--select ${JSON.stringify(d.op.operationId ?? d.key)}: ${d.key} cannot be ` +
          `expressed in a guardfile: ${d.reason}`;
      }).join("\n"),
    );
  }
  const selectedKeys = new Set(
    [...chosen].filter((i) => derivations[i].grant).map((i) => derivations[i].key),
  );
  const selected = derivations.filter((d) => selectedKeys.has(d.key));
  const header = headerLines(doc, options.source, derivations, selected);
  const input = { header, server, baseUrl, auth, derivations, selected: selectedKeys };
  const bytes = (text: string) => new TextEncoder().encode(text).length;
  let listing: "full" | "lines" | "none" = "full";
  let rendered = renderScaffold(input);
  if (bytes(rendered.text) > options.maxBytes) {
    listing = "lines";
    rendered = renderScaffold({
      ...input,
      header: [
        ...header,
        "",
        `Listed compactly: in full the file would pass weir's ${options.maxBytes}-byte`,
        "guardfile cap. Rerun with --select for the operations you want written as grants.",
      ],
      listing,
    });
  }
  if (bytes(rendered.text) > options.maxBytes) {
    listing = "none";
    const unlisted = derivations.length - selected.length;
    rendered = renderScaffold({
      ...input,
      header: [
        ...header,
        "",
        `Only the chosen grants are written: the other ${unlisted} operations, even one line`,
        `each, would pass weir's ${options.maxBytes}-byte guardfile cap.`,
      ],
      listing,
    });
  }
  if (bytes(rendered.text) > options.maxBytes) {
    throw new SelectionError(
      `the ${selected.length} chosen grants alone take ${bytes(rendered.text)} bytes, over ` +
        `weir's ${options.maxBytes}-byte guardfile cap: choose fewer operations (e.g. one ` +
        `tag's, with --select) and write them to several guardfiles`,
    );
  }
  const compact = listing !== "full";
  const check = parseGuardfile(rendered.text, `${server}.mcp.kdl`);
  const errors = check.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    // A defect of the derivation, not of the input: say so rather than write a broken file.
    throw new Error(
      `weir scaffold wrote a guardfile its own loader refuses (a defect; please report it): ` +
        errors.map((e) => `line ${e.position?.line}: ${e.message}`).join("; "),
    );
  }
  return { text: rendered.text, server, baseUrl, auth, derivations, selected, compact };
}

/**
 * The base URL and auth as weir's loader accepts them: a base URL it refuses
 * (the document's server holds something a guardfile's does not) is read from
 * the environment instead, an auth it refuses becomes `auth none`, each with a
 * note quoting the loader.
 */
function checkUpstream(
  server: string,
  baseUrl: BaseUrlPlan,
  auth: AuthPlan,
): { baseUrl: BaseUrlPlan; auth: AuthPlan } {
  /** The loader's errors on a file of just this base-url and auth, each with its line's text. */
  const refusals = (b: BaseUrlPlan, a: AuthPlan) => {
    const text = renderScaffold({
      header: [],
      server,
      baseUrl: b,
      auth: a,
      derivations: [],
      selected: new Set(),
    }).text;
    const lines = text.split("\n");
    return parseGuardfile(text, "check.mcp.kdl").diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => ({ message: d.message, line: lines[(d.position?.line ?? 0) - 1] ?? "" }));
  };
  let errors = refusals(baseUrl, auth);
  const atBaseUrl = errors.find((e) => /^\s*base-url\b/.test(e.line));
  if (baseUrl.kind === "literal" && atBaseUrl) {
    const env = envName(server, "BASE_URL");
    baseUrl = {
      kind: "env",
      env,
      note: `the document's server URL is not one base-url takes (${atBaseUrl.message}): ` +
        `set ${env} to the API's base URL`,
    };
    errors = refusals(baseUrl, auth);
  }
  if (errors.length > 0 && auth.kind !== "none") {
    auth = {
      kind: "none",
      note: `the security scheme "${auth.scheme}" cannot be written as weir's auth ` +
        `(${errors[0].message}); write the auth block by hand (docs/guardfile.md, "auth")`,
    };
    errors = refusals(baseUrl, auth);
  }
  if (errors.length > 0) {
    throw new Error(
      `weir scaffold wrote a base-url or auth its own loader refuses (a defect; please ` +
        `report it): ${errors.map((e) => e.message).join("; ")}`,
    );
  }
  return { baseUrl, auth };
}

/**
 * Load the text with every expressible grant on; a grant the loader refuses
 * becomes a comment quoting the loader. Repeats until nothing is refused.
 */
function checkEachGrant(
  derivations: Derivation[],
  server: string,
  baseUrl: BaseUrlPlan,
  auth: AuthPlan,
): void {
  for (let round = 0; round < 5; round++) {
    const { text, spans } = renderScaffold({
      header: [],
      server,
      baseUrl,
      auth,
      derivations,
      selected: new Set(),
      allActive: true,
    });
    const errors = parseGuardfile(text, "check.mcp.kdl").diagnostics.filter((d) =>
      d.severity === "error"
    );
    if (errors.length === 0) return;
    let demoted = 0;
    for (const d of derivations) {
      const span = spans.get(d.key);
      if (!span || !d.grant) continue;
      const mine = errors.filter((e) =>
        e.position && e.position.line >= span.from && e.position.line <= span.to
      );
      if (mine.length > 0) {
        d.reason = `weir's loader refuses the derived grant: ${mine[0].message}`;
        delete d.grant;
        demoted++;
      }
    }
    if (demoted === 0) {
      throw new Error(
        `weir scaffold cannot place a loader error in a grant (a defect; please report it): ` +
          errors.map((e) => `line ${e.position?.line}: ${e.message}`).join("; "),
      );
    }
  }
}

function headerLines(
  doc: OpenApiDocument,
  source: string,
  derivations: Derivation[],
  selected: Derivation[],
): string[] {
  const gets = derivations.filter((d) => d.op.method === "GET");
  const getsOk = gets.filter((d) => d.grant).length;
  const off = derivations.filter((d) => d.grant).length - selected.length;
  const no = derivations.filter((d) => !d.grant).length;
  const kind = doc.version.startsWith("2") ? "Swagger" : "OpenAPI";
  return [
    `Scaffolded by "weir scaffold" from ${source}: ${doc.title || "(untitled)"}` +
    (doc.apiVersion ? ` ${doc.apiVersion}` : "") + ` (${kind} ${doc.version}).`,
    `${derivations.length} operations: ${selected.length} granted, ${off} listed off, ` +
    `${no} not expressible (each says why). GET operations expressed: ${getsOk} of ${gets.length}.`,
    "",
    `A grant written "/-can" is off: delete the "/-" to grant it. Review each grant (bounds,`,
    `patterns, restrict on path parameters), then run "weir lint" and "weir describe".`,
    `Nothing is granted that you did not choose.`,
  ];
}

/** Per-document figures: how many GET operations became grants. */
export function getCoverage(derivations: Derivation[]): { gets: number; expressed: number } {
  const gets = derivations.filter((d) => d.op.method === "GET");
  return { gets: gets.length, expressed: gets.filter((d) => d.grant).length };
}

/** The one-paragraph report on stderr: what was granted, what is off, what could not be. */
export function scaffoldSummary(s: Scaffold, output: string | undefined): string {
  const { gets, expressed } = getCoverage(s.derivations);
  const off = s.derivations.filter((d) => d.grant).length - s.selected.length;
  const no = s.derivations.filter((d) => !d.grant).length;
  const share = gets === 0
    ? "no GET operations"
    : `GET operations expressed: ${expressed} of ${gets} (${(100 * expressed / gets).toFixed(1)}%)`;
  const lines = [
    `weir scaffold: ${s.derivations.length} operations: ${s.selected.length} granted, ${off} listed off, ` +
    `${no} not expressible; ${share}.`,
  ];
  if (s.selected.length === 0) {
    lines.push(
      `Nothing is granted yet: the file serves only the info tool. Turn a grant on by ` +
        `deleting its "/-", or rerun with --select.`,
    );
  }
  for (const d of s.selected.filter((d) => d.otherAuth)) {
    lines.push(`warning: ${d.name.tool}: ${d.otherAuth}`);
  }
  if (s.compact) {
    lines.push(
      `Unchosen operations are listed one line each, or not at all: in full the file would ` +
        `pass the guardfile size cap.`,
    );
  }
  if (output !== undefined) {
    lines.push(`Wrote ${output}. Next: weir lint ${output}; weir describe ${output}`);
  }
  return lines.map(printable).join("\n");
}
