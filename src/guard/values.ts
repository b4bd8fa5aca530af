/**
 * Resolving `value` sources (`env`, `file`, `literal`) at call time, so a
 * rotated secret takes effect on the next call and nothing secret is held in
 * the loaded model. Error messages name the source (variable or file), never a
 * resolved value.
 *
 * @module
 */
import type { ValueSource } from "../guardfile/model.ts";
import { type ErrorKind, WeirError } from "../errors/kinds.ts";
import { FileRefused, MAX_VALUE_FILE_BYTES, readBoundedText } from "../ops/bounded_file.ts";

/** The kinds a value that cannot be resolved is reported as. */
export type MissingValueKind = Extract<
  ErrorKind,
  "value_missing" | "credential_missing" | "base_url_missing" | "pin_missing" | "dsn_missing"
>;

/** How the guard reaches the process environment and files (injected; Deno at the edge). */
export interface ValueResolver {
  /** An environment variable, or undefined when unset. */
  env(name: string): string | undefined;
  /**
   * A file's text. A {@link FileRefused} it throws is named in the message
   * (its reason holds no content); any other failure reads as "not set".
   */
  readFile(path: string): Promise<string>;
}

/**
 * The process's environment and files: `Deno.env`, and each value file read
 * bounded (src/ops/bounded_file.ts: a regular file of at most
 * {@link MAX_VALUE_FILE_BYTES} bytes; `/dev/zero`, a FIFO or a directory is
 * refused unread).
 */
export const processValues: ValueResolver = {
  env: (name) => Deno.env.get(name),
  readFile: (path) =>
    readBoundedText(path, {
      what: "value file",
      maxBytes: MAX_VALUE_FILE_BYTES,
      sizeHint: "a value file holds one secret, URL or token list",
    }),
};

/** A resolved value and where it came from. */
export interface Resolved {
  value: string;
  /** From `env` or `file` (a `literal` is written in the guardfile: not secret). */
  secret: boolean;
  /** `environment variable X`, `file P` or `a literal`, for messages. */
  source: string;
}

/**
 * Resolve a value chain: the first source that yields a non-empty value wins.
 *
 * @param source the chain from the guardfile
 * @param what what the value is for, for the message (e.g. "the upstream credential")
 * @throws {WeirError} (500) naming every source tried when none yields a value
 */
export async function resolveValue(
  source: ValueSource,
  resolver: ValueResolver,
  what: string,
  options: { code?: MissingValueKind } = {},
): Promise<Resolved> {
  return await resolveValueNow(source, resolver, what, options.code);
}

/**
 * {@link resolveValue} without a promise when no file is read before a source
 * yields (a chain of `env` and `literal` sources: the usual call), so a call
 * resolving its base URL and credential from the environment waits for
 * nothing. The same values, errors and messages.
 * @throws {WeirError} (500) naming every source tried when none yields a value
 *   (thrown, or the promise rejected once a file was read)
 */
export function resolveValueNow(
  source: ValueSource,
  resolver: ValueResolver,
  what: string,
  code?: MissingValueKind,
): Resolved | Promise<Resolved> {
  return resolveFrom(source.chain, 0, [], resolver, what, code);
}

/** The chain from `from` on; `tried` names the sources tried before it. */
function resolveFrom(
  chain: ValueSource["chain"],
  from: number,
  tried: string[],
  resolver: ValueResolver,
  what: string,
  code: MissingValueKind | undefined,
): Resolved | Promise<Resolved> {
  for (let i = from; i < chain.length; i++) {
    const { provider, address } = chain[i];
    let value: string | undefined;
    if (provider === "env") {
      value = resolver.env(address);
      tried.push(`environment variable ${address}`);
    } else if (provider === "file") {
      return readThenResolve(chain, i, tried, resolver, what, code);
    } else if (provider === "literal") {
      value = address;
      tried.push("a literal");
    }
    if (value !== undefined && value !== "") {
      return { value, secret: provider !== "literal", source: tried[tried.length - 1] };
    }
  }
  throw new WeirError(
    code ?? "value_missing",
    `${what} is not available: set ${tried.join(", or ")} (checked at every call)`,
  );
}

/** The chain's file source at `at` read, then the rest of the chain if it yields nothing. */
async function readThenResolve(
  chain: ValueSource["chain"],
  at: number,
  tried: string[],
  resolver: ValueResolver,
  what: string,
  code: MissingValueKind | undefined,
): Promise<Resolved> {
  const address = chain[at].address;
  tried.push(`file ${address}`);
  let value: string | undefined;
  try {
    value = (await resolver.readFile(address)).trim();
  } catch (error) {
    // A refused file says why (never its content): "set file X" alone would send
    // the operator to a file that exists.
    if (error instanceof FileRefused) tried[tried.length - 1] += ` (${error.reason})`;
    value = undefined;
  }
  if (value !== undefined && value !== "") {
    return { value, secret: true, source: tried[tried.length - 1] };
  }
  return await resolveFrom(chain, at + 1, tried, resolver, what, code);
}
