/**
 * `weir diff`: what an agent can do under NEW that it could not under OLD, and
 * the reverse, per tool. Reads the served surface both guardfiles describe
 * (`describeGuardfile` in `src/modes/describe.ts`, whose input schemas are the
 * ones the guard advertises and enforces), so diff, describe and serve cannot
 * disagree about what is reachable.
 *
 * Tools are paired by name; a removed and an added grant that send the same
 * method to the same path template (or run the same SQL statement) are a
 * rename, compared as one tool, so a widening cannot hide in a rename.
 * Widening changes come first. Pure.
 *
 * @module
 */
import type { DescribedInput, DescribedTool, Surface } from "../modes/describe.ts";
import type { Guardfile, ValueSource } from "../guardfile/model.ts";
import { diffObjectSchema, type Effect } from "./schema_diff.ts";
import { compileGlob } from "../guardfile/glob.ts";

export type { Effect };

/** One change. */
export interface Change {
  /** The tool (its NEW name when renamed), or `""` for the server as a whole. */
  tool: string;
  effect: Effect;
  /** What changed, in words. */
  what: string;
}

/**
 * A side of the comparison: the surface, and what a guardfile holds that the
 * surface does not show (see {@link diffSide}).
 */
export interface DiffSide {
  surface: Surface;
  /** Static headers sent on every request. */
  headers: [string, string][];
  /**
   * Where each value weir sends comes from, exactly (literal values included),
   * by what it is for: `base-url`, `auth`, `database`, `pin <tool> <query>`.
   * Compared, never printed: the surface says `a literal`, so two different
   * literal credentials or upstreams would otherwise look the same.
   */
  sources: Record<string, string>;
  /** Text the model reads beside the tools: `instructions`, `resource <name>`, `prompt <name>`. */
  texts: Record<string, string>;
  /** `inbound-token` callers: the tools each may see and call. */
  callers: Record<string, string[]>;
}

/**
 * A side of the comparison from a loaded guardfile and the surface
 * `describeGuardfile` gives for it.
 */
export function diffSide(guardfile: Guardfile, surface: Surface): DiffSide {
  const sources: Record<string, string> = {};
  const chain = (v: ValueSource) => JSON.stringify(v.chain);
  if (typeof guardfile.baseUrl !== "string") sources["base-url"] = chain(guardfile.baseUrl);
  const auth = guardfile.auth;
  sources.auth = JSON.stringify(
    auth.scheme === "none"
      ? ["none"]
      : auth.scheme === "bearer"
      ? ["bearer", auth.value.chain]
      : auth.scheme === "header-token"
      ? ["header-token", auth.header, auth.prefix, auth.value.chain]
      : ["query-param", auth.params.map((p) => [p.name, p.value.chain])],
  );
  if (guardfile.database) sources.database = chain(guardfile.database.dsn);
  for (const [tool, pins] of Object.entries(guardfile.controls.pins)) {
    for (const p of pins) {
      sources[`pin ${tool} ${p.name}`] = JSON.stringify([p.source.chain, p.fromQuery ?? null]);
    }
  }
  const texts: Record<string, string> = {};
  const json = (v: unknown) => JSON.stringify(v, (k, x) => (k === "position" ? undefined : x));
  if (guardfile.instructions !== undefined) texts.instructions = guardfile.instructions;
  for (const r of guardfile.resources) texts[`resource ${r.name}`] = json(r);
  for (const p of guardfile.prompts) texts[`prompt ${p.name}`] = json(p);
  const callers: Record<string, string[]> = {};
  for (const t of guardfile.inboundTokens ?? []) callers[t.name] = [...t.tools].sort();
  return { surface, headers: guardfile.headers, sources, texts, callers };
}

const ORDER: Record<Effect, number> = { widen: 0, narrow: 1, change: 2 };

/**
 * Compare two guardfiles' surfaces.
 * @returns every change, widening ones first, then by tool name
 */
export function diffSurfaces(old: DiffSide, next: DiffSide): Change[] {
  const out: Change[] = [...diffServer(old, next)];
  const before = new Map(old.surface.tools.map((t) => [t.name, t]));
  const after = new Map(next.surface.tools.map((t) => [t.name, t]));
  const gone = [...before.values()].filter((t) => !after.has(t.name));
  const come = [...after.values()].filter((t) => !before.has(t.name));
  // Renames: same operation, another name.
  for (const n of [...come]) {
    if (n.kind !== "grant") continue;
    const o = gone.find((g) => g.kind === "grant" && sameOperation(g, n));
    if (!o) continue;
    gone.splice(gone.indexOf(o), 1);
    come.splice(come.indexOf(n), 1);
    out.push({ tool: n.name, effect: "change", what: `renamed from ${o.name}` });
    out.push(...diffTool(o, n, old, next));
  }
  for (const n of come) {
    if (n.kind === "grant") {
      out.push({
        tool: n.name,
        effect: "widen",
        what: `new tool: ${operation(n)}${destructive(n)}`,
      });
    } else {
      out.push({
        tool: n.name,
        effect: "change",
        what: `new ${n.kind === "info" ? "info tool" : "withheld stub"}`,
      });
    }
  }
  for (const o of gone) {
    out.push({
      tool: o.name,
      effect: o.kind === "grant" ? "narrow" : "change",
      what: o.kind === "grant"
        ? `tool removed (was ${operation(o)})`
        : `${o.kind === "info" ? "info tool" : "withheld stub"} removed`,
    });
  }
  for (const [name, n] of after) {
    const o = before.get(name);
    if (o) out.push(...diffTool(o, n, old, next));
  }
  return out.sort((a, b) =>
    ORDER[a.effect] - ORDER[b.effect] || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)
  );
}

function diffServer(old: DiffSide, next: DiffSide): Change[] {
  const out: Change[] = [];
  const o = old.surface;
  const n = next.surface;
  const server = (effect: Effect, what: string) => out.push({ tool: "", effect, what });
  if (o.upstream !== n.upstream) server("widen", `upstream ${o.upstream} -> ${n.upstream}`);
  if (o.auth !== n.auth) {
    server("widen", `auth ${o.auth} -> ${n.auth} (another credential may reach more)`);
  }
  if (o.database !== n.database) {
    server("widen", `database ${o.database ?? "none"} -> ${n.database ?? "none"}`);
  }
  const oh = new Map(old.headers.map(([k, v]) => [k.toLowerCase(), v]));
  const nh = new Map(next.headers.map(([k, v]) => [k.toLowerCase(), v]));
  for (const [k, v] of nh) {
    if (!oh.has(k)) server("widen", `header ${k} added`);
    else if (oh.get(k) !== v) server("widen", `header ${k} changed`);
  }
  for (const k of oh.keys()) if (!nh.has(k)) server("widen", `header ${k} removed`);
  const or = o.rateLimit;
  const nr = n.rateLimit;
  if (or && !nr) server("widen", `rate-limit ${rate(or)} removed`);
  if (!or && nr) server("narrow", `rate-limit ${rate(nr)} added`);
  if (or && nr) {
    const a = or.count / or.windowMs;
    const b = nr.count / nr.windowMs;
    if (a !== b || or.count !== nr.count) {
      server(
        b > a || nr.count > or.count ? "widen" : "narrow",
        `rate-limit ${rate(or)} -> ${rate(nr)}`,
      );
    }
    if (or.store !== nr.store) {
      server(
        "change",
        `rate-limit store ${or.store ?? "in process"} -> ${nr.store ?? "in process"}`,
      );
    }
  }
  // A value whose source reads the same ("a literal") but holds another value.
  const same = (key: string, said: boolean) =>
    said && old.sources[key] !== undefined && next.sources[key] !== undefined &&
    old.sources[key] !== next.sources[key];
  if (same("base-url", o.upstream === n.upstream)) {
    server("widen", `base-url: its literal value changed (not shown)`);
  }
  if (same("auth", o.auth === n.auth)) {
    server(
      "widen",
      `auth: its literal value changed (not shown; another credential may reach more)`,
    );
  }
  if (same("database", o.database === n.database)) {
    server("widen", `database: its literal value changed (not shown)`);
  }
  for (const key of new Set([...Object.keys(old.texts), ...Object.keys(next.texts)])) {
    const a = old.texts[key];
    const b = next.texts[key];
    if (a === b) continue;
    server(
      "change",
      `${key} ${a === undefined ? "added" : b === undefined ? "removed" : "changed"}`,
    );
  }
  for (const who of new Set([...Object.keys(old.callers), ...Object.keys(next.callers)])) {
    const a = old.callers[who];
    const b = next.callers[who];
    if (!a) server("widen", `inbound token ${who} added (tools ${b!.join(", ")})`);
    else if (!b) server("narrow", `inbound token ${who} removed`);
    else {
      const plus = b.filter((t) => !a.includes(t));
      const minus = a.filter((t) => !b.includes(t));
      if (plus.length > 0) server("widen", `inbound token ${who} may now call ${plus.join(", ")}`);
      if (minus.length > 0) {
        server("narrow", `inbound token ${who} may no longer call ${minus.join(", ")}`);
      }
    }
  }
  const oo = o.oauth;
  const no = n.oauth;
  if (oo && !no) server("widen", `oauth (tokens from ${oo.issuer}) removed`);
  if (!oo && no) server("narrow", `oauth (tokens from ${no.issuer}) required`);
  if (oo && no && (oo.issuer !== no.issuer || oo.resource !== no.resource)) {
    server("widen", `oauth ${oo.issuer} for ${oo.resource} -> ${no.issuer} for ${no.resource}`);
  }
  return out;
}

function diffTool(o: DescribedTool, n: DescribedTool, os: DiffSide, ns: DiffSide): Change[] {
  const out: Change[] = [];
  const add = (effect: Effect, what: string) => out.push({ tool: n.name, effect, what });
  if (o.kind !== n.kind) {
    if (n.kind === "grant") {
      add(
        "widen",
        `was ${o.kind === "withheld" ? "withheld" : "the info tool"}, now granted: ${operation(n)}`,
      );
    } else if (o.kind === "grant") {
      add(
        "narrow",
        `was granted (${operation(o)}), now ${
          n.kind === "withheld" ? "withheld" : "the info tool"
        }`,
      );
    } else add("change", `${o.kind} -> ${n.kind}`);
    return out;
  }
  if (n.kind === "withheld") {
    if (o.reason !== n.reason) add("change", `withhold reason changed`);
    if (o.alternative !== n.alternative) {
      add("change", `alternative ${o.alternative ?? "none"} -> ${n.alternative ?? "none"}`);
    }
    return out;
  }
  if (n.kind !== "grant") return out;
  if (operation(o) !== operation(n)) add("widen", `now ${operation(n)} (was ${operation(o)})`);
  if ((o.graphql?.document ?? "") !== (n.graphql?.document ?? "")) {
    add(
      "widen",
      `graphql document changed (may ask for what the old one did not): ${
        oneLine(o.graphql?.document ?? "none")
      } -> ${oneLine(n.graphql?.document ?? "none")}`,
    );
  }
  if (o.sql && n.sql && o.sql.reads && !n.sql.reads) add("widen", `now writes (sql)`);
  if (o.sql && n.sql && o.sql.maxRows !== n.sql.maxRows) {
    add(
      n.sql.maxRows > o.sql.maxRows ? "widen" : "narrow",
      `max-rows ${o.sql.maxRows} -> ${n.sql.maxRows}`,
    );
  }
  if (!o.destructive && n.destructive) add("widen", `now destructive`);
  if (o.destructive && !n.destructive && operation(o) === operation(n)) {
    add("change", `no longer marked destructive`);
  }
  if ((o.description ?? "") !== (n.description ?? "")) add("change", `description changed`);
  out.push(
    ...diffObjectSchema(o.inputSchema ?? {}, n.inputSchema ?? {}).map((c) => ({
      tool: n.name,
      ...c,
    })),
  );
  diffInputs(o.inputs ?? [], n.inputs ?? [], add);
  diffRestrictions(o, n, add);
  const oldScopes = o.scopes ?? [];
  const newScopes = n.scopes ?? [];
  const droppedScopes = oldScopes.filter((s) => !newScopes.includes(s));
  const addedScopes = newScopes.filter((s) => !oldScopes.includes(s));
  if (droppedScopes.length > 0) add("widen", `no longer needs scope ${droppedScopes.join(" ")}`);
  if (addedScopes.length > 0) add("narrow", `now needs scope ${addedScopes.join(" ")}`);
  const groups = (t: DescribedTool) => (t.exclusive ?? []).map((g) => [...g].sort().join(","));
  for (const g of groups(o)) {
    if (!groups(n).includes(g)) add("widen", `mutually-exclusive ${g} removed`);
  }
  for (const g of groups(n)) {
    if (!groups(o).includes(g)) add("narrow", `mutually-exclusive ${g} added`);
  }
  const ob = JSON.stringify(o.fixedBody);
  const nb = JSON.stringify(n.fixedBody);
  if (ob !== nb) {
    if (o.fixedBody && n.fixedBody) add("widen", `fixed body ${ob} -> ${nb}`);
    else if (n.fixedBody) add("change", `body now fixed: ${nb}`);
    else add("change", `body no longer fixed (was ${ob})`);
  }
  const pins = (t: DescribedTool) => new Map((t.pins ?? []).map((p) => [p.query, p.from]));
  const op = pins(o);
  const np = pins(n);
  for (const [q, from] of op) {
    if (!np.has(q)) add("widen", `pin on query ${q} removed`);
    else if (np.get(q) !== from) {
      // Another source may hold another value: the agent may reach another thing.
      add("widen", `pin on query ${q}: ${from} -> ${np.get(q)}`);
    } else if (os.sources[`pin ${o.name} ${q}`] !== ns.sources[`pin ${n.name} ${q}`]) {
      add("widen", `pin on query ${q}: its literal value changed (not shown)`);
    }
  }
  for (const q of np.keys()) if (!op.has(q)) add("narrow", `pin on query ${q} added`);
  if (o.confirm !== undefined && n.confirm === undefined) {
    add("widen", `no longer asks a person to confirm`);
  }
  if (o.confirm === undefined && n.confirm !== undefined) {
    add("narrow", `now asks a person to confirm`);
  }
  if (o.confirm !== undefined && n.confirm !== undefined && o.confirm !== n.confirm) {
    add("change", `confirm message changed`);
  }
  if (o.cacheTtlMs !== n.cacheTtlMs) {
    add(
      "change",
      `cache ${o.cacheTtlMs === undefined ? "none" : `${o.cacheTtlMs} ms`} -> ${
        n.cacheTtlMs === undefined ? "none" : `${n.cacheTtlMs} ms`
      }`,
    );
  }
  if (Boolean(o.rejectEmpty) !== Boolean(n.rejectEmpty)) {
    add(
      "change",
      n.rejectEmpty ? `an empty answer is now an error` : `an empty answer is no longer an error`,
    );
  }
  const ob2 = o.rejectBlank ?? [];
  const nb2 = n.rejectBlank ?? [];
  for (const f of ob2) if (!nb2.includes(f)) add("widen", `blank "${f}" no longer refused`);
  for (const f of nb2) if (!ob2.includes(f)) add("narrow", `blank "${f}" now refused`);
  if (o.extract !== n.extract) {
    add("change", `extract ${o.extract ?? "none"} -> ${n.extract ?? "none"}`);
  }
  return out;
}

/** Where an input goes and its gate: what the schema does not say. */
function diffInputs(
  old: DescribedInput[],
  next: DescribedInput[],
  add: (effect: Effect, what: string) => void,
): void {
  const before = new Map(old.map((i) => [i.name, i]));
  for (const n of next) {
    const o = before.get(n.name);
    if (!o) continue;
    const name = `input "${n.name}"`;
    if (o.in !== n.in) add("widen", `${name} now sent in ${n.in} (was ${o.in})`);
    if ((o.sentAs ?? o.name) !== (n.sentAs ?? n.name)) {
      add("widen", `${name} now sent as "${n.sentAs ?? n.name}" (was "${o.sentAs ?? o.name}")`);
    }
    if (o.metacharacters === "refuse" && n.metacharacters === "allow") {
      add("widen", `${name} now allows shell metacharacters`);
    }
    if (o.metacharacters === "allow" && n.metacharacters === "refuse") {
      add("narrow", `${name} now refuses shell metacharacters`);
    }
    if (o.in === "path" && n.in === "path" && o.constraints[0] !== n.constraints[0]) {
      const wider = o.constraints[0] === "one segment";
      add(wider ? "widen" : "change", `${name}: ${o.constraints[0]} -> ${n.constraints[0]}`);
    }
  }
}

/** `restrict` on path parameters: each node an OR of globs; nodes AND. */
function diffRestrictions(
  o: DescribedTool,
  n: DescribedTool,
  add: (effect: Effect, what: string) => void,
): void {
  const params = new Set(
    [...(o.restrictions ?? []), ...(n.restrictions ?? [])].map((r) => r.param),
  );
  for (const p of params) {
    const on = (o.restrictions ?? []).filter((r) => r.param === p).map((r) => r.allowed);
    const nn = (n.restrictions ?? []).filter((r) => r.param === p).map((r) => r.allowed);
    // NEW is at least as narrow when every old node has a new node each of whose
    // globs the old node covers: the same glob, or a literal one of its globs matches.
    const subset = (a: string[], b: string[]) => a.every((g) => covered(g, b));
    const asNarrow = on.every((ob) => nn.some((nb) => subset(nb, ob)));
    const asWide = nn.every((nb) => on.some((ob) => subset(ob, nb)));
    const text = `restrict ${p}: ${show(on)} -> ${show(nn)}`;
    if (!asNarrow) add("widen", text);
    else if (!asWide) add("narrow", text);
  }
}

/** Whether every value `glob` admits is admitted by one of `globs` (sound, not complete). */
function covered(glob: string, globs: string[]): boolean {
  if (globs.includes(glob)) return true;
  if (/[*?[\\]/.test(glob)) return false;
  return globs.some((g) => {
    try {
      return compileGlob(g)(glob);
    } catch {
      return false;
    }
  });
}

function show(nodes: string[][]): string {
  return nodes.length === 0
    ? "none"
    : nodes.map((g) => g.map((x) => JSON.stringify(x)).join(" or ")).join(" and ");
}

function sameOperation(a: DescribedTool, b: DescribedTool): boolean {
  if (a.sql || b.sql) return a.sql?.statement === b.sql?.statement;
  // Every GraphQL operation of an API shares one endpoint: the document says which it is.
  if (a.graphql || b.graphql) {
    if (a.graphql?.document !== b.graphql?.document) return false;
  }
  return a.method === b.method && shape(a.path) === shape(b.path);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function operation(t: DescribedTool): string {
  if (t.sql) {
    return `sql ${t.sql.reads ? "read" : "write"}: ${t.sql.statement.replace(/\s+/g, " ").trim()}`;
  }
  return `${t.method} ${t.path}`;
}

function destructive(t: DescribedTool): string {
  return t.destructive ? " [destructive]" : "";
}

function shape(path: string | undefined): string {
  return (path ?? "").replace(/\{[^}]*\}/g, "{}");
}

function rate(r: { count: number; windowMs: number }): string {
  return `${r.count} per ${r.windowMs} ms`;
}

/** The changes as text for people: widening first, each marked. */
export function diffText(changes: Change[], oldName: string, newName: string): string {
  if (changes.length === 0) {
    return `weir diff ${oldName} -> ${newName}: no change in what an agent can do`;
  }
  const mark: Record<Effect, string> = {
    widen: "+ WIDENS ",
    narrow: "- narrows",
    change: "~ changes",
  };
  const lines = [`weir diff ${oldName} -> ${newName}`];
  for (const c of changes) lines.push(`${mark[c.effect]}  ${c.tool || "(server)"}: ${c.what}`);
  const count = (e: Effect) => changes.filter((c) => c.effect === e).length;
  lines.push(
    `${count("widen")} widening, ${count("narrow")} narrowing, ${count("change")} other change(s)`,
  );
  return lines.join("\n");
}
