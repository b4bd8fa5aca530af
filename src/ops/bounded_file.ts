/**
 * Reading a file a user names, bounded: the one way weir reads a guardfile, a
 * `value file` (credentials, base URLs, pins, DSNs), an `inbound-token` file,
 * an `--upstream-header` `{file:PATH}` span, `--state-keys-file`, a
 * fingerprints file, an OpenAPI document for `weir scaffold`, or the files
 * `weir --version` reads in a git checkout.
 *
 * Before anything is read the path is checked with `stat` (symbolic links
 * followed): only a regular file is read. A directory, a FIFO (opening one
 * for reading waits for a writer, forever), a character device such as
 * `/dev/zero` (endless) or `/dev/stdin`, a block device or a socket is refused
 * unread. A regular file is read with plain reads into one buffer and never
 * past `maxBytes + 1` bytes, so a file that grows while it is read is still
 * refused without being held whole. After opening, the handle is checked
 * again: what was opened must be a regular file too (a path swapped for a
 * directory in between is refused). A path swapped for another regular file
 * in between is read: that is how Kubernetes and most secret agents rotate a
 * mounted file (a new file, or a new `..data` link, renamed over the old one),
 * and the read is bounded all the same; refusing it failed calls during every
 * rotation, and bought nothing, since whoever can swap the path can point it
 * anywhere before the first check. A path that is not found is looked up
 * again, up to {@link NOT_FOUND_TRIES} times in all: a rotation removes the
 * directory the old `..data` link named right after the swap, so a lookup
 * that resolved the old link as the directory went away fails once, and the
 * next one finds the new file (a file that is really missing costs two more
 * `stat` calls). What remains: a path swapped for a FIFO in that instant makes
 * the open wait; only someone who can write the directory can do that.
 *
 * Every refusal is a {@link FileRefused} whose message names the file, the
 * rule (and the cap, in bytes) and what to do; it never holds the file's
 * content. The reason alone (`reason`) is there for callers that name the file
 * themselves.
 *
 * @module
 */

/** What is read, for messages and caps. */
export interface BoundedRead {
  /** What the file is, for the message: `value file`, `--fingerprints`, `guardfile`. */
  what: string;
  /** Most bytes read; a larger file is refused (one byte past it is read, no more). */
  maxBytes: number;
  /** What a file over the cap should be instead, e.g. `a value file holds one secret or URL`. */
  sizeHint?: string;
}

/** Largest value file (`value file`, `inbound-token` file, `{file:PATH}` header): one secret, URL or token list. */
export const MAX_VALUE_FILE_BYTES = 64 * 1024;

/** A file weir refused to read, or could not read. Never holds the file's content. */
export class FileRefused extends Error {
  override name = "FileRefused";
  /** The path as given. */
  readonly file: string;
  /** The rule and what to do, without the file's name (e.g. `not a regular file (a FIFO); ...`). */
  readonly reason: string;
  /** Which rule: the file is missing, unreadable, not regular, too large or not UTF-8. */
  readonly rule:
    | "not_found"
    | "permission"
    | "not_regular"
    | "too_large"
    | "not_utf8"
    | "unreadable";
  constructor(what: string, file: string, rule: FileRefused["rule"], reason: string) {
    super(`${what} ${JSON.stringify(file)}: ${reason}`);
    this.file = file;
    this.rule = rule;
    this.reason = reason;
  }
}

/** `a directory`, `a FIFO`, ... for a non-regular file; undefined for a regular one. */
function kindOf(info: Deno.FileInfo): string | undefined {
  if (info.isFile) return undefined;
  if (info.isDirectory) return "a directory";
  if (info.isFifo) return "a FIFO (named pipe)";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  return "not a file";
}

function notRegular(read: BoundedRead, file: string, kind: string): FileRefused {
  return new FileRefused(
    read.what,
    file,
    "not_regular",
    `not a regular file but ${kind}; name a regular file (weir never reads a pipe, ` +
      `a device or a directory as one)`,
  );
}

function tooLarge(read: BoundedRead, file: string): FileRefused {
  return new FileRefused(
    read.what,
    file,
    "too_large",
    `larger than ${read.maxBytes} bytes, the most weir reads of a ${read.what}` +
      `${read.sizeHint ? ` (${read.sizeHint})` : ""}; name the right file or make it smaller`,
  );
}

/** A failed stat or open as a {@link FileRefused}; never the OS message (it repeats the path). */
function failed(read: BoundedRead, file: string, error: unknown): FileRefused {
  if (error instanceof FileRefused) return error;
  if (error instanceof Deno.errors.NotFound) {
    return new FileRefused(read.what, file, "not_found", "no such file; check the path");
  }
  if (error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.NotCapable) {
    return new FileRefused(
      read.what,
      file,
      "permission",
      "permission denied; let the user weir runs as read it (and allow the path with --allow-read)",
    );
  }
  if (error instanceof Deno.errors.IsADirectory) return notRegular(read, file, "a directory");
  const name = error instanceof Error ? error.name : "error";
  return new FileRefused(read.what, file, "unreadable", `cannot be read (${name}); check the path`);
}

/** Read into a buffer that grows to at most `cap + 1` bytes. */
function startBuffer(size: number, cap: number): Uint8Array {
  return new Uint8Array(Math.min(size, cap) + 1);
}

/** Refuse before opening: not a regular file (never opened), or already over the cap. */
function checkBeforeOpen(read: BoundedRead, file: string, before: Deno.FileInfo): void {
  const kind = kindOf(before);
  if (kind) throw notRegular(read, file, kind);
  if (before.size > read.maxBytes) throw tooLarge(read, file);
}

/**
 * Refuse what was opened when it is not a regular file (the path was swapped
 * for one between the check and the open). Another regular file is read: a
 * rotation renames one over the path.
 */
function checkOpened(read: BoundedRead, file: string, opened: Deno.FileInfo): void {
  const kind = kindOf(opened);
  if (kind) throw notRegular(read, file, kind);
}

function grow(buffer: Uint8Array, cap: number): Uint8Array {
  const next = new Uint8Array(Math.min(buffer.length * 2, cap + 1));
  next.set(buffer);
  return next;
}

/**
 * A regular file's bytes, at most `read.maxBytes`.
 *
 * @param file the path as the user gave it (relative to the working directory)
 * @throws {FileRefused} when the file is missing, unreadable, not a regular
 *   file, larger than `maxBytes` (or grows past it while read)
 *
 * @example
 * ```ts
 * import { FileRefused, readBoundedFile } from "./bounded_file.ts";
 * const file = await Deno.makeTempFile();
 * await Deno.writeTextFile(file, "token-1234");
 * const bytes = await readBoundedFile(file, { what: "value file", maxBytes: 64 });
 * if (bytes.length !== 10) throw new Error("not read whole");
 * try {
 *   await readBoundedFile("/dev/zero", { what: "value file", maxBytes: 64 });
 * } catch (error) {
 *   if (!(error instanceof FileRefused) || error.rule !== "not_regular") throw error;
 * }
 * await Deno.remove(file);
 * ```
 */
export async function readBoundedFile(file: string, read: BoundedRead): Promise<Uint8Array> {
  for (let tries = 1;; tries++) {
    try {
      return await readOnce(file, read);
    } catch (error) {
      if (tries >= NOT_FOUND_TRIES || !notFound(error)) throw error;
    }
  }
}

/** Lookups of a path before it is called missing (see the module doc: a rotation's window). */
export const NOT_FOUND_TRIES = 3;

function notFound(error: unknown): boolean {
  return error instanceof FileRefused && error.rule === "not_found";
}

async function readOnce(file: string, read: BoundedRead): Promise<Uint8Array> {
  let handle: Deno.FsFile | undefined;
  try {
    const before = await Deno.stat(file);
    checkBeforeOpen(read, file, before);
    handle = await Deno.open(file, { read: true });
    const opened = await handle.stat();
    checkOpened(read, file, opened);
    let buffer = startBuffer(opened.size, read.maxBytes);
    let total = 0;
    while (true) {
      if (total === buffer.length) {
        if (buffer.length > read.maxBytes) break;
        buffer = grow(buffer, read.maxBytes);
      }
      const n = await handle.read(buffer.subarray(total));
      if (n === null) break;
      total += n;
    }
    if (total > read.maxBytes) throw tooLarge(read, file);
    return buffer.subarray(0, total);
  } catch (error) {
    throw failed(read, file, error);
  } finally {
    handle?.close();
  }
}

/**
 * {@link readBoundedFile}, synchronously (for the few readers that run inside
 * a synchronous step: `{file:PATH}` headers, `inbound-token` files, `weir --version`).
 * @throws {FileRefused} as {@link readBoundedFile}
 */
export function readBoundedFileSync(file: string, read: BoundedRead): Uint8Array {
  for (let tries = 1;; tries++) {
    try {
      return readOnceSync(file, read);
    } catch (error) {
      if (tries >= NOT_FOUND_TRIES || !notFound(error)) throw error;
    }
  }
}

function readOnceSync(file: string, read: BoundedRead): Uint8Array {
  let handle: Deno.FsFile | undefined;
  try {
    const before = Deno.statSync(file);
    checkBeforeOpen(read, file, before);
    handle = Deno.openSync(file, { read: true });
    const opened = handle.statSync();
    checkOpened(read, file, opened);
    let buffer = startBuffer(opened.size, read.maxBytes);
    let total = 0;
    while (true) {
      if (total === buffer.length) {
        if (buffer.length > read.maxBytes) break;
        buffer = grow(buffer, read.maxBytes);
      }
      const n = handle.readSync(buffer.subarray(total));
      if (n === null) break;
      total += n;
    }
    if (total > read.maxBytes) throw tooLarge(read, file);
    return buffer.subarray(0, total);
  } catch (error) {
    throw failed(read, file, error);
  } finally {
    handle?.close();
  }
}

function decode(bytes: Uint8Array, read: BoundedRead, file: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new FileRefused(read.what, file, "not_utf8", "not UTF-8 text; save it as UTF-8");
  }
}

/**
 * A regular file's text (UTF-8, a leading BOM dropped), at most `read.maxBytes` bytes.
 * @throws {FileRefused} as {@link readBoundedFile}, or when the bytes are not UTF-8
 */
export async function readBoundedText(file: string, read: BoundedRead): Promise<string> {
  return decode(await readBoundedFile(file, read), read, file);
}

/**
 * {@link readBoundedText}, synchronously.
 * @throws {FileRefused} as {@link readBoundedText}
 */
export function readBoundedTextSync(file: string, read: BoundedRead): string {
  return decode(readBoundedFileSync(file, read), read, file);
}
