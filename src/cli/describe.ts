/**
 * `weir describe [--format text|json] FILE`: the served surface as a person
 * reads it.
 *
 * @module
 */
import { loadGuardfileFile } from "../modes/serve.ts";
import { describeGuardfile, describeText } from "../modes/describe.ts";
import { parseFlags, printDiagnostics, UsageError } from "./args.ts";

/**
 * Run `weir describe`.
 * @param args the arguments after `describe`
 * @returns 0 when the guardfile loads, 1 otherwise
 * @throws {UsageError} on a bad command line
 */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    format: { type: "string", default: "text" },
  });
  if (positionals.length !== 1) throw new UsageError("describe takes exactly one FILE");
  if (values.format !== "text" && values.format !== "json") {
    throw new UsageError(`--format must be text or json, not ${values.format}`);
  }
  const loaded = await loadGuardfileFile(positionals[0]);
  printDiagnostics(loaded);
  if (!loaded.guardfile && !loaded.policy) return 1;
  const surface = loaded.policy
    ? (await import("../modes/serve_aws.ts")).describeAws(loaded.policy)
    : describeGuardfile(loaded.guardfile!);
  console.log(values.format === "json" ? JSON.stringify(surface, null, 2) : describeText(surface));
  return 0;
}
