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
  const tried: string[] = [];
  for (const { provider, address } of source.chain) {
    let value: string | undefined;
    if (provider === "env") {
      value = resolver.env(address);
      tried.push(`environment variable ${address}`);
    } else if (provider === "file") {
      tried.push(`file ${address}`);
      try {
        value = (await resolver.readFile(address)).trim();
      } catch (error) {
        // A refused file says why (never its content): "set file X" alone would send
        // the operator to a file that exists.
        if (error instanceof FileRefused) tried[tried.length - 1] += ` (${error.reason})`;
        value = undefined;
      }
    } else if (provider === "literal") {
      value = address;
      tried.push("a literal");
    }
    if (value !== undefined && value !== "") {
      return { value, secret: provider !== "literal", source: tried[tried.length - 1] };
    }
  }
  throw new WeirError(
    options.code ?? "value_missing",
    `${what} is not available: set ${tried.join(", or ")} (checked at every call)`,
  );
}
