/**
 * Writing a scaffolded guardfile: whole or not at all (a temporary file beside
 * it, then renamed over it), and never over an existing file unasked.
 *
 * @module
 */

/** Whether anything (a file, a directory, a link) is at `path`. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Write `text` to `path` whole or not at all: into a temporary file beside it,
 * then renamed over it.
 * @returns a message when it could not be written, else undefined
 */
export async function writeFileAtomically(
  path: string,
  text: string,
  force: boolean,
): Promise<string | undefined> {
  if (!force && (await exists(path))) {
    return `${path} exists; scaffold never overwrites a guardfile unasked: add --force`;
  }
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
  let tmp: string | undefined;
  try {
    tmp = await Deno.makeTempFile({ dir, prefix: ".weir-scaffold-", suffix: ".tmp" });
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
    tmp = undefined;
    return undefined;
  } catch (error) {
    return `write ${path}: ${(error as Error).message}`;
  } finally {
    if (tmp) await Deno.remove(tmp).catch(() => {});
  }
}
