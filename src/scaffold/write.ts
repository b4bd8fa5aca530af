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
 * created with the permissions any new file gets (0666 less the umask, as a
 * shell redirect would), then moved into place. Without `force` the move
 * refuses an existing file even if one appears meanwhile (a hard link, which
 * never replaces); with it, a rename replaces.
 * @returns a message when it could not be written, else undefined
 */
export async function writeFileAtomically(
  path: string,
  text: string,
  force: boolean,
): Promise<string | undefined> {
  const taken = `${path} exists; scaffold never overwrites a guardfile unasked: add --force`;
  if (!force && (await exists(path))) return taken;
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
  let tmp: string | undefined;
  try {
    const bytes = new TextEncoder().encode(text);
    for (let attempt = 0; tmp === undefined; attempt++) {
      const name = `${dir}/.weir-scaffold-${crypto.randomUUID()}.tmp`;
      try {
        const file = await Deno.open(name, { createNew: true, write: true, mode: 0o666 });
        tmp = name;
        try {
          let rest = bytes;
          while (rest.length > 0) rest = rest.subarray(await file.write(rest));
        } finally {
          file.close();
        }
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists) || attempt >= 3) throw error;
      }
    }
    if (force) {
      await Deno.rename(tmp, path);
      tmp = undefined;
    } else {
      try {
        await Deno.link(tmp, path);
      } catch (error) {
        if (error instanceof Deno.errors.AlreadyExists) return taken;
        // No hard links on this file system: check, then rename.
        if (await exists(path)) return taken;
        await Deno.rename(tmp, path);
        tmp = undefined;
      }
    }
    return undefined;
  } catch (error) {
    return `write ${path}: ${(error as Error).message}`;
  } finally {
    if (tmp) await Deno.remove(tmp).catch(() => {});
  }
}
