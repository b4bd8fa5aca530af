/**
 * `weir scaffold SPEC [--select SELECTOR]... [--select-reads] [--output FILE]
 * [--server NAME] [--force] [--interactive]`: an OpenAPI 3.0/3.1 or Swagger
 * 2.0 document (JSON or YAML) -> a guardfile that grants only what is chosen
 * (`src/scaffold/`). In a terminal without a selection, or with
 * `--interactive`, a chooser lists the operations (`src/scaffold/chooser.ts`).
 *
 * Exit codes: 0 written; 1 the document cannot be read, a selected operation
 * cannot be expressed, the output exists (without `--force`) or cannot be
 * written, or the chooser was left without writing; 2 a bad command line.
 *
 * @module
 */
import { parseFlags, UsageError } from "./args.ts";
import { DocumentError, readOpenApi } from "../scaffold/document.ts";
import {
  buildScaffold,
  type Scaffold,
  scaffoldSummary,
  SelectionError,
} from "../scaffold/scaffold.ts";
import { exists, writeFileAtomically } from "../scaffold/write.ts";
import { loadGuardfileText } from "../guardfile/load.ts";
import { checkBacktracking } from "../ops/pattern_check.ts";
import { MAX_GUARDFILE_BYTES } from "../modes/serve.ts";
import { printable } from "../guardfile/diagnostics.ts";
import { FileRefused, readBoundedText } from "../ops/bounded_file.ts";

/** Documents larger than this are refused unread (GitHub's, the largest common one, is 13 MB). */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

/**
 * Run `weir scaffold`.
 * @param args the arguments after `scaffold`
 * @returns the exit code (see the module doc)
 * @throws {UsageError} on a bad command line
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    select: { type: "string", multiple: true, default: [] },
    "select-reads": { type: "boolean" },
    output: { type: "string" },
    server: { type: "string" },
    force: { type: "boolean" },
    interactive: { type: "boolean" },
    "no-interactive": { type: "boolean" },
  });
  if (positionals.length !== 1) {
    throw new UsageError("scaffold takes exactly one SPEC (an OpenAPI or Swagger document)");
  }
  if (values.server !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(values.server)) {
    throw new UsageError(
      `--server ${values.server}: a name of letters, digits, ".", "_" and "-" (at most 64)`,
    );
  }
  const spec = positionals[0];
  const chosen = values.select.length > 0 || values["select-reads"] === true;
  const interactive = values.interactive === true ||
    (!chosen && !values["no-interactive"] && Deno.stdin.isTerminal() &&
      Deno.stdout.isTerminal());
  if (values.interactive && chosen) {
    throw new UsageError(
      "--interactive chooses in the terminal; leave out --select and --select-reads",
    );
  }
  if (interactive && !(Deno.stdin.isTerminal() && Deno.stdout.isTerminal())) {
    throw new UsageError("--interactive needs a terminal on standard input and output");
  }
  if (
    !interactive && values.output !== undefined && !values.force && (await exists(values.output))
  ) {
    console.error(
      `weir: ${printable(values.output)} exists; scaffold never overwrites a guardfile ` +
        `unasked: choose another --output or add --force`,
    );
    return 1;
  }
  let text: string;
  try {
    text = await readDocument(spec);
  } catch (error) {
    const refused = error instanceof FileRefused ? error : undefined;
    const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(spec) && refused?.rule === "not_found";
    console.error(
      `weir: ${
        printable(
          url
            ? `read ${spec}: weir scaffold reads a file, not a URL: download the document ` +
              `first (curl -fsSLo openapi.json '${spec}') and scaffold that file`
            : `read ${spec}: ${refused?.reason ?? (error as Error).message}`,
        )
      }`,
    );
    return 1;
  }
  let scaffold: Scaffold;
  try {
    const doc = await readOpenApi(text, spec);
    const base = {
      source: spec.split("/").pop() ?? spec,
      maxBytes: MAX_GUARDFILE_BYTES,
      ...(values.server !== undefined ? { server: values.server } : {}),
    };
    if (interactive) {
      const { choose } = await import("../scaffold/chooser.ts");
      return await choose(doc, base, { output: values.output, force: values.force === true });
    }
    scaffold = buildScaffold(doc, {
      ...base,
      select: values.select,
      selectReads: values["select-reads"] === true,
    });
  } catch (error) {
    if (error instanceof DocumentError || error instanceof SelectionError) {
      console.error(`weir: ${printable(error.message).replaceAll("\\u000a", "\nweir: ")}`);
      return error instanceof SelectionError && error.unknown ? 2 : 1;
    }
    throw error;
  }
  // A pattern the document writes that can backtrack exponentially would make a file lint
  // refuses (src/ops/pattern_check.ts): nothing is written, the pattern and the fix are named.
  const checked = loadGuardfileText(scaffold.text, values.output ?? "scaffold");
  await checkBacktracking(checked, false);
  const unsafe = checked.diagnostics.filter((d) => d.severity === "error");
  if (unsafe.length > 0) {
    for (const d of unsafe) console.error(`weir: ${printable(`${d.path}: ${d.message}`)}`);
    console.error(
      `weir: no guardfile written: the OpenAPI document's pattern above can freeze the server; ` +
        `fix it in the document (or drop the operation with --select), then scaffold again`,
    );
    return 1;
  }
  if (values.output === undefined) {
    try {
      await writeAll(Deno.stdout, scaffold.text);
    } catch (error) {
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
      console.error(
        `weir: standard output was closed before the whole guardfile was written ` +
          `(write it with --output FILE to keep it whole)`,
      );
      return 1;
    }
  } else {
    const problem = await writeFileAtomically(values.output, scaffold.text, values.force === true);
    if (problem) {
      console.error(`weir: ${printable(problem)}`);
      return 1;
    }
  }
  console.error(scaffoldSummary(scaffold, values.output));
  return 0;
}

/**
 * The OpenAPI document: a regular file of at most {@link MAX_DOCUMENT_BYTES}, UTF-8.
 * @throws {FileRefused} naming why (src/ops/bounded_file.ts)
 */
function readDocument(path: string): Promise<string> {
  return readBoundedText(path, { what: "OpenAPI document", maxBytes: MAX_DOCUMENT_BYTES });
}

async function writeAll(w: { write(p: Uint8Array): Promise<number> }, text: string): Promise<void> {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(await w.write(bytes));
}
