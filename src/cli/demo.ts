/**
 * `weir demo`: takes no arguments; runs {@linkcode runDemo}.
 *
 * @module
 */
import { runDemo } from "../modes/demo.ts";
import { parseFlags, UsageError } from "./args.ts";

/**
 * Run `weir demo`.
 * @param args the arguments after `demo` (none are accepted)
 * @returns 0 when every scripted step behaved
 * @throws {UsageError} when given any argument
 */
export async function run(args: string[]): Promise<number> {
  const { positionals } = parseFlags(args, {});
  if (positionals.length > 0) throw new UsageError("demo takes no arguments");
  return await runDemo();
}
