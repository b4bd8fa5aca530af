/**
 * The review pages: `weir describe FILE --format html` and `weir diff OLD NEW
 * --format html` as one self-contained HTML page each, for a person signing
 * off what an agent may do. The page needs no network and no script: its
 * Content-Security-Policy (`default-src 'none'`) forbids both, its only style
 * is inline, and every text taken from a guardfile is escaped (HTML, control,
 * bidirectional and zero-width characters shown as `\uXXXX`) so a file
 * cannot hide or forge what the page says.
 *
 * The describe page reads the surface model describe prints (src/surface/model.ts),
 * the diff page the changes diff reports (src/diff/surface_diff.ts), widening
 * ones first. Pure: text in, text out.
 *
 * @module
 */
import { serverFacts, toolFacts } from "../surface/facts.ts";
import type { Argument, Surface, Tool } from "../surface/model.ts";
import {
  authWords,
  oauthProfileWords,
  oneLine,
  operationWords,
  rateStateWords,
  rateWords as rateText,
  sourceWords,
  sqlKindWords,
  upstreamWords,
} from "../surface/words.ts";
import { constraintWords } from "./describe.ts";
import type { Change, Effect } from "../diff/surface_diff.ts";

/** What the page says about where it came from. */
export interface PageOptions {
  /** weir's version, printed in the footer. */
  version: string;
}

/**
 * Escape text for HTML, and show every character a reader cannot see or that
 * reorders what is shown (controls, bidirectional overrides, zero-width
 * characters) as `\uXXXX`.
 *
 * @example
 * ```ts
 * import { htmlText } from "./describe_html.ts";
 * if (htmlText('<b a="1">\u202e') !== "&lt;b a=&quot;1&quot;&gt;\\u202e") throw new Error();
 * ```
 */
export function htmlText(text: string): string {
  // String(): a field a surface types as text may hold another JSON value (an AWS input's type).
  return String(text)
    .replace(
      /[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2064\u2066-\u2069\ufeff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    )
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

const h = htmlText;

/** A tool name as an element id: stable, and never more than the name's own characters. */
function anchor(prefix: string, name: string): string {
  return `${prefix}-${
    [...name].map((c) => /[A-Za-z0-9_-]/.test(c) ? c : `.${c.codePointAt(0)!.toString(16)}.`)
      .join("")
  }`;
}

const STYLE = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de;
  --widen: #b42318; --widen-bg: #fdecea; --narrow: #1a7f37; --narrow-bg: #e6f4ea;
  --change: #6e5600; --change-bg: #fff8c5; --write: #9a3412; --write-bg: #ffedd5;
  --held: #57606a; --held-bg: #f0f2f4; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem 2rem 3rem; color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  background: #fff; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h1 small { font-weight: normal; color: var(--muted); font-size: 1rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 0 0 .25rem; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: .9em; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .75rem 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.counts { display: flex; flex-wrap: wrap; gap: .5rem; margin: .75rem 0; padding: 0; list-style: none; }
.counts li { border: 1px solid var(--line); border-radius: .4rem; padding: .3rem .7rem; }
.counts b { font-size: 1.15rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
td ul { margin: 0; padding-left: 1rem; }
.tool { border: 1px solid var(--line); border-left-width: .35rem; border-radius: .4rem;
  padding: .75rem 1rem; margin: .75rem 0; break-inside: avoid; }
.tool.write { border-left-color: var(--write); }
.tool.read { border-left-color: var(--narrow); }
.tool.withheld { border-left-color: var(--held); background: var(--held-bg); }
.op { margin: .1rem 0 .4rem; }
.badge { display: inline-block; font-size: .75rem; font-weight: 600; border-radius: 1rem;
  padding: .05rem .55rem; margin-left: .4rem; vertical-align: middle; }
.badge.write { color: var(--write); background: var(--write-bg); }
.badge.read { color: var(--narrow); background: var(--narrow-bg); }
.badge.confirm, .badge.widen { color: var(--widen); background: var(--widen-bg); }
.badge.withheld { color: var(--held); background: #fff; border: 1px solid var(--line); }
.badge.narrow { color: var(--narrow); background: var(--narrow-bg); }
.badge.change { color: var(--change); background: var(--change-bg); }
.controls { margin: .4rem 0 0; padding-left: 1.2rem; }
.muted { color: var(--muted); }
tr.widen td:first-child { border-left: .3rem solid var(--widen); }
tr.narrow td:first-child { border-left: .3rem solid var(--narrow); }
tr.change td:first-child { border-left: .3rem solid var(--change); }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .85rem; }
@media print { body { max-width: none; padding: 0; } .tool { page-break-inside: avoid; } }
`;

/** The page around a body: no script, no network (CSP), inline style only. */
function page(title: string, body: string, options: PageOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="weir ${h(options.version)}">
<link rel="icon" href="data:,">
<title>${h(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
<footer>Written by weir ${
    h(options.version)
  }. This page is self-contained: it loads nothing and runs no script.</footer>
</body>
</html>
`;
}

/**
 * Whether a served tool can change anything upstream (`write`) or only reads;
 * a tool the surface does not say reads is a write (refuse rather than guess).
 */
function access(t: Tool): "read" | "write" {
  return t.access.reads ? "read" : "write";
}

function operation(t: Tool): string {
  if (t.kind === "info") return "answers from weir itself; reaches nothing upstream";
  const op = t.operation;
  if (op?.kind === "sql") return sqlKindWords(op, t.access.reads);
  return operationWords(op).replace(/ \(graphql\)$/, "");
}

function list(items: string[], cls = ""): string {
  if (items.length === 0) return "";
  return `<ul${cls ? ` class="${cls}"` : ""}>${items.map((i) => `<li>${i}</li>`).join("")}</ul>`;
}

function inputsTable(inputs: Argument[]): string {
  if (inputs.length === 0) return `<p class="muted">No arguments.</p>`;
  const rows = inputs.filter((i) => i.served).map((i) =>
    `<tr data-input="${h(i.name)}"><td><code>${h(i.name)}</code></td><td>${h(i.in)}</td>` +
    `<td><code>${h(i.type)}</code></td><td>${i.required ? "required" : "optional"}</td>` +
    `<td>${
      list([
        ...constraintWords(i).map((c) => h(c)),
        ...(i.encoding?.metacharacters === "refuse" ? ["shell metacharacters refused"] : []),
      ]) || `<span class="muted">none</span>`
    }</td>` +
    `<td>${i.sentAs !== i.name ? `<code>${h(i.sentAs)}</code>` : ""}</td></tr>`
  ).join("\n");
  return `<table class="inputs"><thead><tr><th>argument</th><th>sent in</th><th>type</th>` +
    `<th></th><th>constraints</th><th>sent as</th></tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

/** What the guardfile adds around a served tool: restricts, pins, scopes, confirm, caps. */
function controls(t: Tool, surface: Surface): string[] {
  const out: string[] = [];
  const c = t.controls;
  if (c.confirm !== undefined) {
    out.push(`<b>a person confirms each call first</b>: “${h(c.confirm)}”`);
  }
  for (const a of t.arguments) {
    for (const globs of a.restrict) {
      out.push(
        `<code>${h(a.name)}</code> must match ${
          globs.map((g) => `<code>${h(g)}</code>`).join(" or ")
        }`,
      );
    }
  }
  for (const a of t.arguments.filter((a) => !a.served)) {
    out.push(`argument <code>${h(a.name)}</code> is hidden: an agent cannot set it`);
  }
  for (const g of t.exclusive) {
    out.push(`at most one of ${g.map((n) => `<code>${h(n)}</code>`).join(", ")}`);
  }
  if (t.fixedBody) {
    out.push(`the body always holds <code>${h(JSON.stringify(t.fixedBody))}</code>`);
  }
  for (const p of t.pins) {
    const from = "from" in p.value ? sourceWords(p.value.from) : "the file";
    out.push(
      `${p.in} <code>${h(p.name)}</code> is set by weir from ${h(from)} (value not shown${
        p.secret ? "; redacted from answers" : ""
      })`,
    );
  }
  if (t.scopes.length > 0) {
    out.push(
      `callers need the OAuth scope${t.scopes.length > 1 ? "s" : ""} ${
        t.scopes.map((s) => `<code>${h(s)}</code>`).join(" ")
      }`,
    );
  }
  if (surface.rateLimit && t.kind !== "info") {
    out.push(`rate limit ${h(rateWords(surface.rateLimit))}, shared by every tool`);
  }
  if (c.cacheTtlMs !== undefined) out.push(`answers cached for ${c.cacheTtlMs} ms`);
  if (c.rejectEmpty) out.push("an empty upstream answer is an error");
  if (c.rejectBlank.length > 0) {
    out.push(`refused when blank: ${c.rejectBlank.map((n) => `<code>${h(n)}</code>`).join(", ")}`);
  }
  if (c.extract) {
    out.push(`the answer is reduced to ${h(`${c.extract.as}, first ${c.extract.max}`)}`);
  }
  const op = t.operation;
  if (op?.kind === "sql") out.push(`statement <code>${h(oneLine(op.statement))}</code>`);
  if (op?.kind === "graphql") out.push(`GraphQL document <code>${h(oneLine(op.document))}</code>`);
  if (t.interface) out.push(`MCP Apps interface <code>${h(t.interface)}</code>`);
  for (const [label, words] of toolFacts(t)) out.push(`${h(label)}: ${h(words)}`);
  if (t.kind !== "info") out.push(`${t.access.reads ? "reads" : "may write"}: ${h(t.access.why)}`);
  return out;
}

function rateWords(r: NonNullable<Surface["rateLimit"]>): string {
  return `${rateText(r)}, ${rateStateWords(r.state)}`;
}

function toolSection(t: Tool, surface: Surface): string {
  const id = anchor("tool", t.name);
  if (t.kind === "withheld") {
    return `<section class="tool withheld" id="${id}" data-tool="${h(t.name)}" data-kind="withheld">
<h3><code>${h(t.name)}</code><span class="badge withheld">withheld</span></h3>
<p>${h(t.withheld?.reason ?? "")}</p>${
      t.withheld?.alternative
        ? `\n<p class="muted">Instead: <code>${h(t.withheld.alternative)}</code></p>`
        : ""
    }
</section>`;
  }
  const rw = access(t);
  const badges = `<span class="badge ${rw}">${rw}</span>` +
    (t.destructive ? `<span class="badge confirm">destructive</span>` : "") +
    (t.controls.confirm !== undefined ? `<span class="badge confirm">confirm</span>` : "");
  const c = controls(t, surface);
  return `<section class="tool ${rw}" id="${id}" data-tool="${h(t.name)}" data-kind="${t.kind}">
<h3><code>${h(t.name)}</code>${badges}</h3>
<p class="op"><code>${h(operation(t))}</code></p>${
    t.description ? `\n<p>${h(t.description.replace(/\s+/g, " ").trim())}</p>` : ""
  }
${t.kind === "info" ? "" : inputsTable(t.arguments)}${c.length ? "\n" + list(c, "controls") : ""}
</section>`;
}

/**
 * The review page of a surface: every tool with its method and path, its
 * arguments and constraints, the withheld operations with their reasons, pins
 * (where from, never the value), scopes, confirm, rate limits and the upstream.
 * @param surface the surface model (`surfaceOfGuardfile`, `describeWrap`, `describeAws`)
 * @returns one HTML document (UTF-8 text)
 *
 * @example
 * ```ts
 * import { surfaceHtml } from "./describe_html.ts";
 * import { parseGuardfile } from "../guardfile/load.ts";
 * import { surfaceOfGuardfile } from "../surface/spec.ts";
 * const { guardfile } = parseGuardfile(
 *   `wrap ward mcp demo {\n  base-url "https://api.example.com"\n  auth none\n` +
 *     `  can get ticket { path "/t/{id}" }\n}`,
 *   "demo.mcp.kdl",
 * );
 * const html = surfaceHtml(surfaceOfGuardfile(guardfile!), { version: "0.1.0" });
 * if (!html.includes('data-tool="get_ticket"') || html.includes("<script")) throw new Error();
 * ```
 */
export function surfaceHtml(surface: Surface, options: PageOptions): string {
  const served = surface.tools.filter((t) => t.kind !== "withheld");
  const withheld = surface.tools.filter((t) => t.kind === "withheld");
  const writes = served.filter((t) => access(t) === "write");
  const confirmed = served.filter((t) => t.controls.confirm !== undefined);
  const facts: [string, string][] = [
    ["guardfile", `<code>${h(surface.file)}</code>`],
    ["upstream", h(upstreamWords(surface.upstream))],
    ["credential", h(authWords(surface))],
  ];
  if (surface.database) {
    facts.push([
      "database",
      h(`${surface.database.driver} (PostgreSQL), DSN from ${sourceWords(surface.database.dsn)}`),
    ]);
  }
  const oauth = surface.callers.oauth;
  if (oauth) {
    facts.push([
      "callers",
      `OAuth access tokens from <code>${h(oauth.issuer)}</code> for <code>${
        h(oauth.resource)
      }</code>${oauthProfileWords(oauth) ? ` (${h(oauthProfileWords(oauth))})` : ""}`,
    ]);
  }
  for (const c of surface.callers.inboundTokens) {
    facts.push([
      "caller",
      `<code>${h(c.name)}</code> (token from ${h(sourceWords(c.token))}) may call ${
        c.tools.map((t) => `<code>${h(t)}</code>`).join(", ")
      }`,
    ]);
  }
  if (surface.rateLimit) facts.push(["rate limit", h(rateWords(surface.rateLimit))]);
  for (const [label, words] of serverFacts(surface)) facts.push([label, h(words)]);
  const index = surface.tools.map((t) =>
    `<tr data-tool="${h(t.name)}"><td><a href="#${anchor("tool", t.name)}"><code>${
      h(t.name)
    }</code></a></td><td>${
      t.kind === "withheld" ? `<span class="badge withheld">withheld</span>` : access(t)
    }</td><td>${
      t.kind === "withheld" ? h(t.withheld?.reason ?? "") : `<code>${h(operation(t))}</code>`
    }</td><td>${t.controls.confirm !== undefined ? "confirm" : ""}</td></tr>`
  ).join("\n");
  const body = `<header>
<h1>${h(surface.server)} <small>what an agent can do through weir</small></h1>
<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>
<ul class="counts">
<li><b>${served.length}</b> tool${served.length === 1 ? "" : "s"} an agent can call</li>
<li><b>${writes.length}</b> can change something upstream</li>
<li><b>${confirmed.length}</b> need a person's confirmation</li>
<li><b>${withheld.length}</b> withheld</li>
</ul>
<p class="muted">Nothing else of the upstream is reachable: a call to any other operation is refused before a request is made.</p>
</header>
<main>
<h2 id="index">All tools</h2>
<table class="index"><thead><tr><th>tool</th><th>access</th><th>operation or reason</th><th></th></tr></thead><tbody>
${index}
</tbody></table>
<h2 id="served">Tools an agent can call</h2>
${
    served.length === 0
      ? `<p class="muted">None.</p>`
      : served.map((t) => toolSection(t, surface)).join("\n")
  }
<h2 id="withheld">Withheld operations</h2>
${
    withheld.length === 0
      ? `<p class="muted">None named. Operations the guardfile does not grant are unreachable all the same.</p>`
      : withheld.map((t) => toolSection(t, surface)).join("\n")
  }
</main>`;
  return page(`weir review: ${surface.server}`, body, options);
}

const EFFECT_WORDS: Record<Effect, { title: string; badge: string }> = {
  widen: { title: "Widenings: the agent can do more", badge: "widens" },
  narrow: { title: "Narrowings: the agent can do less", badge: "narrows" },
  change: { title: "Other changes", badge: "changes" },
};

/**
 * The review page of a diff: every change, widening ones first, then
 * narrowing, then the rest, each with the tool it touches.
 * @param changes what `diffSurfaces` returned (any order: the page sorts by effect)
 * @param oldName what the old side is called (a file, or `REV:FILE`)
 * @param newName the new file
 * @returns one HTML document (UTF-8 text)
 *
 * @example
 * ```ts
 * import { diffHtml } from "./describe_html.ts";
 * const html = diffHtml(
 *   [{ tool: "delete_ticket", effect: "widen", what: "new tool: DELETE /t/{id}" }],
 *   "old.mcp.kdl", "new.mcp.kdl", { version: "0.1.0" },
 * );
 * if (!html.includes('data-effect="widen"')) throw new Error();
 * ```
 */
export function diffHtml(
  changes: Change[],
  oldName: string,
  newName: string,
  options: PageOptions,
): string {
  const effects: Effect[] = ["widen", "narrow", "change"];
  const count = (e: Effect) => changes.filter((c) => c.effect === e).length;
  const sections = effects.filter((e) => count(e) > 0).map((e) => {
    const rows = changes.filter((c) => c.effect === e).map((c) =>
      `<tr class="${e}" data-effect="${e}" data-tool="${h(c.tool)}"><td>${
        c.tool ? `<code>${h(c.tool)}</code>` : `<span class="muted">(server)</span>`
      }</td><td><span class="badge ${e}">${EFFECT_WORDS[e].badge}</span></td><td>${
        h(c.what)
      }</td></tr>`
    ).join("\n");
    return `<h2 id="${e}">${EFFECT_WORDS[e].title} (${count(e)})</h2>
<table class="changes"><thead><tr><th>tool</th><th></th><th>what changed</th></tr></thead><tbody>
${rows}
</tbody></table>`;
  });
  const verdict = changes.length === 0
    ? "No change in what an agent can do."
    : count("widen") > 0
    ? "This change lets an agent do more: review each widening before it ships."
    : "This change lets an agent do nothing new.";
  const body = `<header>
<h1>weir diff <small>what changes for an agent</small></h1>
<dl class="facts"><dt>old</dt><dd><code>${h(oldName)}</code></dd><dt>new</dt><dd><code>${
    h(newName)
  }</code></dd></dl>
<ul class="counts">
<li><b>${count("widen")}</b> widening${count("widen") === 1 ? "" : "s"}</li>
<li><b>${count("narrow")}</b> narrowing${count("narrow") === 1 ? "" : "s"}</li>
<li><b>${count("change")}</b> other change${count("change") === 1 ? "" : "s"}</li>
</ul>
<p class="verdict">${verdict}</p>
</header>
<main>
${sections.join("\n")}
</main>`;
  return page(`weir diff: ${oldName} -> ${newName}`, body, options);
}
