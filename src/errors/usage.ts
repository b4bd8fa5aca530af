/**
 * How every command prints a usage error (exit code 2), one form for all:
 * `weir: COMMAND: MESSAGE; run "weir help COMMAND"`. Free of imports: the CLI's
 * entry loads it before any command.
 *
 * @module
 */

/**
 * The line a usage error prints on stderr, the same for every command:
 * `weir: COMMAND: MESSAGE; run "weir help COMMAND"` (exit code 2). A message
 * that starts with the command's name ("serve takes exactly one FILE") does not
 * say it twice ("weir: serve: takes exactly one FILE"). Without a command (an
 * unknown command), the hint is `weir help`.
 * @param command the command as typed (`serve-upstream`), or undefined
 * @param message what is wrong and, where it helps, what to write instead
 */
export function usageLine(command: string | undefined, message: string): string {
  if (command === undefined) return `weir: ${message}; run "weir help"`;
  const text = message.startsWith(`${command} `) ? message.slice(command.length + 1) : message;
  return `weir: ${command}: ${text}; run "weir help ${command}"`;
}
