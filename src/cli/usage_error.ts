/**
 * The one error type the CLI turns into exit code 2 ("the command line is
 * wrong"). Kept light so `weir help` and `weir --version` load nothing else;
 * {@linkcode usageLine} (src/errors/usage.ts) prints it.
 *
 * @module
 */
export { usageLine } from "../errors/usage.ts";

/** The command line itself is wrong: unknown flag, missing argument, bad value. */
export class UsageError extends Error {
  override name = "UsageError";
}
