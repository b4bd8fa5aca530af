/**
 * The bundle's second pass (scripts/bundle.ts runs it after `deno bundle`):
 * fewer, larger chunks on each command's start, no command loading code it
 * did not load before.
 *
 * esbuild's code splitting puts each piece of code in a chunk by the exact set
 * of entries reaching it: with every module loaded by URL an entry (the
 * commands, the modes' lazy modules, the extract worker) and every literal
 * `import()` an implicit one, `weir serve`'s start loaded ~40 small files. This
 * pass groups the shared chunks by the *starts* that run them (`cli.js`, each
 * command, the worker: `roots`) and the starts that only read them (Deno reads
 * the static graph of each literal `import()` of a module it loads, before the
 * program runs), and merges each group into one chunk, re-bundled by `deno
 * bundle` with every other file external. A start runs and reads a group whole
 * or not at all, so each start runs and reads the same code as before, in fewer
 * files. Chunks no start runs are left as they are.
 *
 * A lazy module or an implicit entry loads, besides its own chunks, only code
 * it loaded before or code already loaded: a chunk is also keyed by each such
 * entry that runs (or reads) it, unless every start that may load the entry
 * already runs (reads) it. The starts that may load an entry are those that run
 * or read a file naming it: a literal `import()` of it, or its
 * `LAZY_MODULES` name written as a string (or a template it begins with), also
 * through another entry; an entry named nowhere counts as loaded by every
 * start. (Without it, http1_client's chunk, merged with the MCP upstream
 * modules, made the spec-mode first tools/call load both MCP SDKs.)
 *
 * Safe by construction: a chunk imports only chunks every start running (or
 * reading) it also runs (or reads), so a group imports only groups of other
 * starts (no cycle); inside a group the chunks keep their order (each after
 * what it imports), and every import of a merged chunk, static, is rewritten to
 * the merged one with the same bindings. An import this pass cannot read, or a
 * dynamic `import()` of a merged chunk, fails the bundle rather than guess.
 *
 * @module
 */

/** A chunk's file name as esbuild writes it (and as this pass names the merged ones). */
const CHUNK = String.raw`(?:\.\.?/)+chunk-[A-Z0-9]+\.js`;
/** A static import or re-export of a chunk, as esbuild's minified output writes it. */
const STATEMENT = new RegExp(
  String.raw`\b(import|export)\s*(\{[^}]*\}|\*\s*as\s*[\w$]+|\*)?\s*(?:from\s*)?"(${CHUNK})";?`,
  "g",
);
const MENTION = new RegExp(`["'\`]${CHUNK}["'\`]`, "g");

interface ChunkImport {
  kind: string;
  /** `{a as b,c}`, `* as x`, `*` or "" (a bare import). */
  clause: string;
  /** The imported file, from the bundle's root. */
  target: string;
}

/** The pairs `[imported, local]` of an import clause `{a as b,c}`. */
function bindings(clause: string): [string, string][] {
  return clause.replace(/[{}]/g, "").split(",").map((part) => part.trim()).filter(Boolean)
    .map((part) => {
      const [name, local] = part.split(/\s+as\s+/);
      return [name, local ?? name];
    });
}

/** The bundle's JavaScript files in `dir`, from `dir`, sorted (`src/ops/lazy.js`, `chunk-A.js`...). */
export async function bundleFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (sub: string) => {
    for await (const entry of Deno.readDir(`${dir}/${sub}`)) {
      const path = `${sub}${entry.name}`;
      if (entry.isDirectory) await walk(`${path}/`);
      else if (path.endsWith(".js")) files.push(path);
    }
  };
  await walk("");
  return files.sort();
}

/**
 * Merge the chunks of the bundle in `dir` that the same starts load.
 * @param dir the bundle's directory, written by `deno bundle --code-splitting`
 * @param roots the files a start loads first, from `dir`: the program's entry
 *   (`cli.js`) first, then each command's module and each Web Worker module
 * @param bundle runs `deno ARGS`; resolves to undefined on success, else what failed
 * @param lazy the modules loaded by URL by a name (src/ops/lazy.ts `LAZY_MODULES`): name to
 *   file, from `dir`; a module loaded by URL that is not here counts as loaded by every start
 * @returns undefined when done, else what failed (the bundle is then unusable)
 */
export async function mergeChunks(
  dir: string,
  roots: readonly string[],
  bundle: (args: string[]) => Promise<string | undefined>,
  lazy: Readonly<Record<string, string>> = {},
): Promise<string | undefined> {
  const files = await bundleFiles(dir);
  const text = new Map<string, string>();
  for (const file of files) text.set(file, await Deno.readTextFile(`${dir}/${file}`));
  const fromRoot = (file: string, specifier: string) =>
    new URL(specifier, `file:///${file}`).pathname.slice(1);
  const importsOf = new Map<string, ChunkImport[]>();
  for (const file of files) {
    const body = text.get(file)!;
    const found = [...body.matchAll(STATEMENT)].map((m) => ({
      kind: m[1],
      clause: m[2] ?? "",
      target: fromRoot(file, m[3]),
    }));
    const mentions = [...body.matchAll(MENTION)].length;
    if (mentions !== found.length) {
      return `${file}: ${mentions - found.length} mention(s) of a chunk are no static import ` +
        `this pass reads (a dynamic import() of a chunk?)`;
    }
    importsOf.set(file, found);
  }
  // Which starts load each chunk, and every chunk's place in an order where each comes after
  // what it imports (depth-first, imports first).
  const startsOf = new Map<string, string[]>();
  const order: string[] = [];
  const placed = new Set<string>();
  // Deno also reads, before the program runs, the static graph of every literal import() in
  // a module it loads (without running it): a chunk is keyed by the starts that run it and
  // the starts that only read it, so that no start runs or reads more than before (merged
  // with serve's code, a module healthcheck only reads would have it read all of serve's).
  const missing = roots.find((root) => !text.has(root));
  if (missing) return `${missing} is not in the bundle`;
  const literal = new Map<string, string[]>();
  for (const [file, body] of text) {
    const targets = [...body.matchAll(/\bimport\("(\.\.?\/[^"]+\.js)"\)/g)]
      .map((m) => fromRoot(file, m[1])).filter((target) => text.has(target));
    literal.set(file, targets);
  }
  const reach = new Map<string, { run: Set<string>; read: Set<string> }>();
  const reached = (loader: string) => {
    const run = new Set<string>();
    const visit = (file: string) => {
      if (run.has(file)) return;
      run.add(file);
      for (const { target } of importsOf.get(file) ?? []) visit(target);
      if (!placed.has(file)) placed.add(file), order.push(file);
    };
    visit(loader);
    const read = new Set<string>();
    const walk = (file: string) => {
      if (read.has(file)) return;
      read.add(file);
      for (const { target } of importsOf.get(file) ?? []) walk(target);
      for (const target of literal.get(file) ?? []) walk(target);
    };
    walk(loader);
    for (const file of run) read.delete(file);
    reach.set(loader, { run, read });
  };
  for (const root of roots) {
    reached(root);
    const { run, read } = reach.get(root)!;
    for (const file of run) {
      if (/^chunk-/.test(file)) startsOf.set(file, [...startsOf.get(file) ?? [], root]);
    }
    for (const file of read) {
      if (/^chunk-/.test(file)) {
        startsOf.set(file, [...startsOf.get(file) ?? [], `read by ${root}`]);
      }
    }
  }
  // Every other entry is loaded by a running start: a lazy module by URL, an implicit entry by a
  // literal import(). What a start already ran or read costs it nothing; anything else a merged
  // group holds beyond what the entry ran (or read) before would be code the merge added (merged
  // with the MCP upstream modules, http1_client's chunk made the spec-mode first tools/call load
  // and compile both MCP SDKs). So a chunk is also keyed by each entry that runs (reads) it,
  // unless every start that may load the entry already runs (reads) it.
  const others = files.filter((file) => !/^chunk-/.test(file) && !roots.includes(file));
  others.forEach(reached);
  const hosts = entryHosts(roots, others, reach, text, literal, lazy);
  const rootsOf = (file: string, read: boolean) =>
    new Set(
      (startsOf.get(file) ?? []).filter((start) => read || !start.startsWith("read by "))
        .map((start) => start.replace(/^read by /, "")),
    );
  const keyBy = (entry: string, files: Set<string>, mark: string, read: boolean) => {
    for (const file of files) {
      if (!/^chunk-/.test(file)) continue;
      const already = rootsOf(file, read);
      if ([...hosts.get(entry)!].every((start) => already.has(start))) continue;
      startsOf.set(file, [...startsOf.get(file) ?? [], mark]);
    }
  };
  for (const entry of others) {
    keyBy(entry, reach.get(entry)!.run, entry, false);
    keyBy(entry, reach.get(entry)!.read, `read by ${entry}`, true);
  }
  // A chunk no start runs (only a lazy module or an implicit entry loads it) keeps its own file.
  for (const [file, starts] of startsOf) {
    if (!starts.some((start) => roots.includes(start))) startsOf.delete(file);
  }
  const groups = new Map<string, string[]>();
  for (const file of order) {
    const starts = startsOf.get(file);
    if (!starts) continue;
    const key = starts.join("\n");
    groups.set(key, [...groups.get(key) ?? [], file]);
  }
  const merged = [...groups.values()].filter((members) => members.length > 1);
  const groupOf = new Map<string, string>();
  const alias = new Map<string, string>();
  for (const members of merged) {
    const name = `chunk-${await shortHash(members.join("\n"))}.js`;
    members.forEach((file, i) => {
      groupOf.set(file, name);
      alias.set(file, `m${i}`);
    });
  }
  // The bindings each merged chunk must offer outside its group.
  const offered = new Map<string, Set<string>>();
  for (const file of files) {
    for (const { clause, target } of importsOf.get(file)!) {
      if (!groupOf.has(target) || groupOf.get(target) === groupOf.get(file)) continue;
      if (clause.startsWith("*")) return `${file} imports all of ${target}: not merged`;
      const names = offered.get(target) ?? new Set();
      for (const [name] of bindings(clause)) names.add(name);
      offered.set(target, names);
    }
  }
  const renamed = (target: string, name: string) => `${alias.get(target)}_${name}`;
  const stage = `${dir}/.merge`;
  for (const members of merged) {
    const name = groupOf.get(members[0])!;
    const entry = members.map((file) =>
      `export{${
        [...offered.get(file) ?? []].map((n) => `${n} as ${renamed(file, n)}`).join(",")
      }}from"./${file}";`
    ).join("\n");
    await Deno.writeTextFile(`${dir}/${name}`, entry);
    const external = files.filter((file) => !members.includes(file))
      .map((file) => `--external=./${file}`);
    const failure = await bundle([
      "bundle",
      "--quiet",
      "--no-config",
      "--platform",
      "deno",
      "--minify",
      "--outdir",
      stage,
      // An npm package a chunk imports stays an import (the JSR package's bundle imports every
      // package by its `npm:` specifier; the binary's holds them inside, so it has none).
      "--external=npm:*",
      ...external,
      `${dir}/${name}`,
    ]);
    if (failure !== undefined) return `merging ${members.length} chunks into ${name}: ${failure}`;
    await Deno.rename(`${stage}/${name}`, `${dir}/${name}`);
    await Deno.remove(stage, { recursive: true });
    for (const file of members) {
      await Deno.remove(`${dir}/${file}`);
      text.delete(file);
    }
    text.set(name, await Deno.readTextFile(`${dir}/${name}`));
  }
  // Every import of a merged chunk now names the merged file and its renamed bindings.
  for (const [file, body] of text) {
    const rewritten = body.replace(STATEMENT, (statement, kind, clause = "", specifier) => {
      const target = fromRoot(file, specifier);
      const group = groupOf.get(target);
      if (!group) return statement;
      const path = specifier.replace(/chunk-[A-Z0-9]+\.js$/, group);
      const names = bindings(clause).map(([name, local]) => `${renamed(target, name)} as ${local}`);
      return clause ? `${kind}{${names.join(",")}}from"${path}";` : `${kind}"${path}";`;
    });
    if (rewritten !== body) await Deno.writeTextFile(`${dir}/${file}`, rewritten);
  }
  return undefined;
}

/**
 * The starts that may load each entry that is no start: an implicit entry where a literal
 * `import()` names it, a lazy module where its name is written (`"http1_client"`, or a template
 * `` `guardfile_${…}` `` its name begins with); loaded from another such entry, by that entry's
 * starts. A start that runs or only reads the naming file counts. An entry named nowhere a
 * start or entry reaches (a name made otherwise) counts as loaded by every start.
 */
function entryHosts(
  roots: readonly string[],
  others: readonly string[],
  reach: ReadonlyMap<string, { run: Set<string>; read: Set<string> }>,
  text: ReadonlyMap<string, string>,
  literal: ReadonlyMap<string, string[]>,
  lazy: Readonly<Record<string, string>>,
): Map<string, Set<string>> {
  const namedIn = new Map<string, string[]>();
  const names = (entry: string, file: string) =>
    namedIn.set(entry, [...namedIn.get(entry) ?? [], file]);
  for (const [file, body] of text) {
    for (const target of literal.get(file) ?? []) names(target, file);
    const prefixes = [...body.matchAll(/`([\w.\/-]+)\$\{/g)].map((m) => m[1]);
    for (const [name, entry] of Object.entries(lazy)) {
      const quoted = [`"${name}"`, `'${name}'`, `\`${name}\``].some((q) => body.includes(q));
      if (quoted || prefixes.some((prefix) => name.startsWith(prefix))) names(entry, file);
    }
  }
  const reachedBy = (file: string) =>
    [...reach].filter(([, { run, read }]) => run.has(file) || read.has(file)).map(([l]) => l);
  const hosts = new Map(others.map((entry) => {
    const named = (namedIn.get(entry) ?? []).some((file) => reachedBy(file).length > 0);
    return [entry, new Set<string>(named ? [] : roots)];
  }));
  for (let changed = true; changed;) {
    changed = false;
    for (const entry of others) {
      const found = hosts.get(entry)!;
      for (const file of namedIn.get(entry) ?? []) {
        for (const loader of reachedBy(file)) {
          for (const start of roots.includes(loader) ? [loader] : hosts.get(loader) ?? []) {
            if (!found.has(start)) found.add(start), changed = true;
          }
        }
      }
    }
  }
  return hosts;
}

async function shortHash(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest).slice(0, 5)].map((b) => b.toString(16).padStart(2, "0"))
    .join("").toUpperCase();
}
