/**
 * The one error type the CLI turns into exit code 2 ("the command line is
 * wrong"). Kept free of imports so `weir help` and `weir --version` load
 * nothing else.
 *
 * @module
 */

/** The command line itself is wrong: unknown flag, missing argument, bad value. */
export class UsageError extends Error {
  override name = "UsageError";
}
