/**
 * `weir diff OLD NEW` and `weir diff --git REV FILE`: what an agent can do
 * under NEW that it could not under OLD, and the reverse, per tool
 * (`src/diff/surface_diff.ts`). Text for people, `--format json` for CI,
 * `--format html` for a review page (`src/modes/describe_html.ts`);
 * `--fail-on widen` exits 1 when anything widened, `--fail-on any` when
 * anything changed.
 *
 * Files of every form are compared (spec mode, AWS policies, files that wrap
 * an MCP server). A wrapped server's tools are held fixed by default (the
 * file's own rules, pins and controls are compared); `--definitions F` (a
 * saved tools/list result, or a fingerprints file `weir lint-upstream FILE
 * --write-fingerprints F` wrote) or `--live` (each file's server lists them)
 * compares the surfaces served from them, schemas and hints included.
 *
 * Exit codes: 0 compared (and nothing failed `--fail-on`); 1 a guardfile does
 * not load, `git` cannot give the old file, a wrapped server's definitions
 * cannot be had, or `--fail-on` matched; 2 a bad command line. With `--git`, a FILE the revision does not have is compared
 * with nothing: everything it serves is new.
 *
 * @module
 */
import { parseFlags, printDiagnostics, UsageError } from "./args.ts";
import { type LoadedFile, loadGuardfileFile } from "../modes/serve.ts";
import { diffSurfaces, diffText } from "../diff/surface_diff.ts";
import type { Surface } from "../surface/model.ts";
import { surfaceOfGuardfile } from "../surface/spec.ts";
import { surfaceOfWrap } from "../surface/wrap.ts";
import type { McpWrap } from "../guardfile/mcp_wrap_model.ts";
import { printable } from "../guardfile/diagnostics.ts";
import config from "../../deno.json" with { type: "json" };

/** diff compares where a rate-limit store's URL comes from; it never reads it. */
const NO_STORE = { storeUrl: false };

/**
 * Run `weir diff`.
 * @param args the arguments after `diff`
 * @returns the exit code (see the module doc)
 * @throws {UsageError} on a bad command line
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    git: { type: "string" },
    format: { type: "string", default: "text" },
    "fail-on": { type: "string" },
    definitions: { type: "string" },
    live: { type: "boolean" },
  });
  if (values.format !== "text" && values.format !== "json" && values.format !== "html") {
    throw new UsageError(`--format must be text, json or html, not ${values.format}`);
  }
  const failOn = values["fail-on"];
  if (failOn !== undefined && failOn !== "widen" && failOn !== "any") {
    throw new UsageError(`--fail-on must be widen or any, not ${failOn}`);
  }
  if (values.definitions !== undefined && values.live) {
    throw new UsageError(
      "--definitions F and --live both say where a wrapped MCP server's tools come from: give one",
    );
  }
  if (values.git !== undefined ? positionals.length !== 1 : positionals.length !== 2) {
    throw new UsageError(
      values.git !== undefined
        ? "diff --git REV takes exactly one FILE (compared with FILE as it was at REV)"
        : "diff takes OLD and NEW (two guardfiles), or --git REV FILE",
    );
  }
  let oldLoaded: LoadedFile | undefined;
  let oldName: string;
  const newFile = positionals[positionals.length - 1];
  if (values.git !== undefined) {
    oldName = `${values.git}:${newFile}`;
    const text = await gitShow(values.git, newFile);
    if (typeof text !== "string" && !text.absent) {
      console.error(`weir: ${printable(text.error)}`);
      return 1;
    }
    if (typeof text !== "string") {
      // Not in the revision yet (a new guardfile): everything it serves is new.
      oldName += " (absent)";
    } else {
      const tmp = await Deno.makeTempFile({ prefix: "weir-diff-", suffix: ".mcp.kdl" });
      try {
        await Deno.writeTextFile(tmp, text);
        oldLoaded = { ...(await loadGuardfileFile(tmp, {}, NO_STORE)), file: oldName };
      } finally {
        await Deno.remove(tmp).catch(() => {});
      }
    }
  } else {
    oldName = positionals[0];
    oldLoaded = await loadGuardfileFile(oldName, {}, NO_STORE);
  }
  const newLoaded = await loadGuardfileFile(newFile, {}, NO_STORE);
  const sides: Surface[] = [];
  let heldFixed = false;
  for (const loaded of [oldLoaded, newLoaded]) {
    if (!loaded) {
      sides.push(emptySide(oldName));
      continue;
    }
    printDiagnostics({
      ...loaded,
      diagnostics: loaded.diagnostics.filter((d) => d.severity === "error"),
    });
    if (loaded.policy) {
      sides.push((await import("../modes/serve_aws.ts")).describeAws(loaded.policy));
      continue;
    }
    if (loaded.mcpWrap) {
      const side = await wrapSide(loaded.mcpWrap, values.definitions, values.live === true);
      if (typeof side === "string") {
        console.error(`weir: ${printable(loaded.file)}: ${printable(side)}`);
        return 1;
      }
      if (!values.live && values.definitions === undefined) heldFixed = true;
      sides.push(side);
      continue;
    }
    if (!loaded.guardfile) return 1;
    sides.push(surfaceOfGuardfile(loaded.guardfile));
  }
  const changes = diffSurfaces(sides[0], sides[1]);
  const widened = changes.some((c) => c.effect === "widen");
  if (values.format === "json") {
    console.log(JSON.stringify(
      {
        old: oldName,
        new: newFile,
        widened,
        narrowed: changes.some((c) => c.effect === "narrow"),
        ...(heldFixed ? { wrappedServer: "held fixed (its definitions not read)" } : {}),
        changes,
      },
      null,
      2,
    ));
  } else if (values.format === "html") {
    const { diffHtml } = await import("../modes/describe_html.ts");
    console.log(diffHtml(changes, oldName, newFile, { version: config.version }).trimEnd());
  } else {
    console.log(printable(diffText(changes, oldName, newFile)).replaceAll("\\u000a", "\n"));
    if (heldFixed) {
      console.log(
        "(a wrapped MCP server's tools are held fixed: the file's rules, pins and controls are " +
          "compared; --definitions F or --live compares the schemas it serves too)",
      );
    }
  }
  if (failOn === "widen" && widened) {
    console.error(`weir: ${printable(newFile)} widens what an agent can do (--fail-on widen)`);
    return 1;
  }
  if (failOn === "any" && changes.length > 0) {
    console.error(`weir: ${printable(newFile)} changes what an agent can do (--fail-on any)`);
    return 1;
  }
  return 0;
}

/**
 * The surface of a file that wraps an MCP server: from the file alone, or
 * served from `definitions` (a saved tools/list result or a fingerprints file
 * with definitions), or from what its server lists now (`live`).
 * @returns the surface, or why it could not be had
 */
async function wrapSide(
  wrap: McpWrap,
  definitions: string | undefined,
  live: boolean,
): Promise<Surface | string> {
  if (definitions === undefined && !live) return surfaceOfWrap(wrap);
  try {
    const { definitionsOf } = await import("../modes/verify_wrap.ts");
    const { decisionsFrom } = await import("../modes/diff_wrap.ts");
    const listed = await definitionsOf(wrap, definitions);
    return surfaceOfWrap(wrap, await decisionsFrom(wrap, listed));
  } catch (error) {
    return (error as Error).message;
  }
}

/** The side of a guardfile that does not exist yet: no upstream, no tools. */
function emptySide(file: string): Surface {
  return {
    form: "spec",
    server: "",
    file,
    upstream: { kind: "none" },
    credentials: [],
    headers: [],
    callers: { inboundTokens: [] },
    settings: { readOnly: false, schemaProfile: "full" },
    texts: { resources: [], prompts: [], icons: [] },
    readableResources: [],
    tools: [],
  };
}

/** What to do about a `git show` failure: a revision this clone lacks, a file outside a repository. */
function gitFix(why: string, rev: string): string {
  if (/invalid object name|unknown revision|bad revision|ambiguous argument/i.test(why)) {
    return `; this clone has no ${rev}: fetch it first (git fetch origin BRANCH; a CI ` +
      `checkout is often shallow, holding only the commit under test: fetch-depth 0)`;
  }
  if (/not a git repository/i.test(why)) {
    return "; --git reads FILE from the git repository it is in: give a FILE inside one";
  }
  return "";
}

/**
 * `git show REV:./FILE`, run in FILE's directory.
 * @returns the text, or why not (`absent`: the revision has no such file)
 */
async function gitShow(
  rev: string,
  file: string,
): Promise<string | { error: string; absent?: boolean }> {
  if (rev.startsWith("-")) return { error: `--git ${rev}: a revision does not start with "-"` };
  const slash = file.lastIndexOf("/");
  const dir = slash < 0 ? "." : file.slice(0, slash) || "/";
  const base = file.slice(slash + 1);
  try {
    const out = await new Deno.Command("git", {
      args: ["-C", dir, "show", `${rev}:./${base}`],
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
    if (out.code !== 0) {
      const why = new TextDecoder().decode(out.stderr).trim().split("\n")[0];
      return {
        error: `git show ${rev}:${file}: ${why.replace(/\.$/, "") || `exit ${out.code}`}${
          gitFix(why, rev)
        }`,
        absent: /exists on disk, but not in|does not exist in/.test(why),
      };
    }
    return new TextDecoder("utf-8", { fatal: true }).decode(out.stdout);
  } catch (error) {
    return {
      error: error instanceof Deno.errors.NotFound
        ? `--git needs git on PATH`
        : error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied
        ? `--git needs permission to run git (deno run --allow-run)`
        : `git show ${rev}:${file}: ${(error as Error).message}`,
    };
  }
}
