/**
 * readBoundedFile() and friends (src/ops/bounded_file.ts): only a regular
 * file is read, never past its cap; a FIFO, a device, a directory or a file
 * over the cap is refused unread with a message naming the file, the rule
 * (and the cap) and what to do. The FIFO cases never open the FIFO, so a test
 * that regressed would be refused by the wait below, not hang.
 */
import assert from "node:assert/strict";
import {
  FileRefused,
  readBoundedFile,
  readBoundedFileSync,
  readBoundedText,
  readBoundedTextSync,
} from "../../src/ops/bounded_file.ts";

const CAP = 1024;
const READ = { what: "value file", maxBytes: CAP, sizeHint: "it holds one secret" };

const dir = await Deno.makeTempDir({ prefix: "weir-bounded-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

/** Make a FIFO with mkfifo(1) (nothing ever opens it here). */
async function fifo(name: string): Promise<string> {
  const path = `${dir}/${name}`;
  const out = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return path;
}

/** Settle `read` within a bound, so a reader that blocks fails the test instead of hanging it. */
async function bounded<T>(read: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the read did not settle within 30 s")), 30_000);
  });
  try {
    return await Promise.race([read(), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function refusal(read: () => Promise<unknown>): Promise<FileRefused> {
  try {
    await bounded(read);
  } catch (error) {
    assert.ok(error instanceof FileRefused, String(error));
    return error;
  }
  assert.fail("the read was not refused");
}

const readers: [string, (file: string) => Promise<Uint8Array | string>][] = [
  ["readBoundedFile()", (f) => readBoundedFile(f, READ)],
  ["readBoundedFileSync()", (f) => Promise.resolve().then(() => readBoundedFileSync(f, READ))],
  ["readBoundedText()", (f) => readBoundedText(f, READ)],
  ["readBoundedTextSync()", (f) => Promise.resolve().then(() => readBoundedTextSync(f, READ))],
];

for (const [name, read] of readers) {
  Deno.test(`${name}: a regular file up to the cap is read whole, at cap+1 refused`, async () => {
    for (const size of [0, 1, CAP - 1, CAP]) {
      const file = `${dir}/ok-${size}`;
      await Deno.writeTextFile(file, "a".repeat(size));
      const got = await read(file);
      assert.equal(got.length, size);
    }
    for (const size of [CAP + 1, CAP * 64]) {
      const file = `${dir}/big-${size}`;
      await Deno.writeTextFile(file, "a".repeat(size));
      const e = await refusal(() => read(file));
      assert.equal(e.rule, "too_large");
      assert.equal(
        e.message,
        `value file ${JSON.stringify(file)}: larger than 1024 bytes, the most weir reads of a ` +
          `value file (it holds one secret); name the right file or make it smaller`,
      );
    }
  });

  Deno.test(`${name}: a FIFO, a device, a directory are refused unread, naming the file`, async () => {
    const pipe = await fifo(`pipe-${name.replace(/\W/g, "")}`);
    const cases: [string, string][] = [
      [pipe, "a FIFO (named pipe)"],
      ["/dev/zero", "a character device"],
      ["/dev/null", "a character device"],
      [dir, "a directory"],
    ];
    for (const [file, kind] of cases) {
      const e = await refusal(() => read(file));
      assert.equal(e.rule, "not_regular", file);
      assert.equal(e.file, file);
      assert.equal(
        e.message,
        `value file ${JSON.stringify(file)}: not a regular file but ${kind}; ` +
          `name a regular file (weir never reads a pipe, a device or a directory as one)`,
      );
    }
  });

  Deno.test(`${name}: a symbolic link is followed: to a regular file read, to /dev/zero refused`, async () => {
    const target = `${dir}/target-${name.replace(/\W/g, "")}`;
    await Deno.writeTextFile(target, "secret-value");
    const good = `${target}.link`;
    await Deno.symlink(target, good);
    assert.equal((await read(good)).length, 12);
    const zero = `${target}.zero`;
    await Deno.symlink("/dev/zero", zero);
    assert.equal((await refusal(() => read(zero))).rule, "not_regular");
  });

  Deno.test(`${name}: a missing file says so and what to do`, async () => {
    const e = await refusal(() => read(`${dir}/nothing`));
    assert.equal(e.rule, "not_found");
    assert.match(e.message, /: no such file; check the path$/);
  });
}

Deno.test("readBoundedText(): bytes that are not UTF-8 are refused, a BOM is dropped", async () => {
  const bad = `${dir}/latin1`;
  await Deno.writeFile(bad, new Uint8Array([0x61, 0xff, 0x62]));
  const e = await refusal(() => readBoundedText(bad, READ));
  assert.equal(e.rule, "not_utf8");
  assert.match(e.message, /not UTF-8 text; save it as UTF-8/);
  assert.throws(() => readBoundedTextSync(bad, READ), FileRefused);
  const bom = `${dir}/bom`;
  await Deno.writeFile(bom, new Uint8Array([0xef, 0xbb, 0xbf, 0x61]));
  assert.equal(await readBoundedText(bom, READ), "a");
});

Deno.test("readBoundedFile(): a file that grows past the cap while read is refused", async () => {
  // /proc files report size 0 and read like a growing file: the reader must grow
  // its buffer from the reported size and still stop one byte past the cap.
  const small = await readBoundedFile("/proc/self/status", { what: "file", maxBytes: 1 << 20 });
  assert.ok(small.length > 100, `read ${small.length} bytes`);
  const e = await refusal(() =>
    readBoundedFile("/proc/self/status", { what: "file", maxBytes: 64 })
  );
  assert.equal(e.rule, "too_large");
});

/**
 * A rotation as Kubernetes does it to a mounted secret, in another process for at most 20 s: the
 * path `token` is a link to `..data/token`; each rotation writes a new directory, points a new
 * `..data` link at it and renames that link over the old one (or, `plain`, renames a new file over
 * `token` itself). It stops when its stdin closes and prints how many rotations it made.
 */
const ROTATOR = `
const [dir, form] = Deno.args;
let stop = false;
(async () => { for await (const _ of Deno.stdin.readable) { /* until closed */ } stop = true; })();
const end = Date.now() + 20_000;
let i = 0;
while (!stop && Date.now() < end) {
  const value = i % 2 ? "new-token" : "old-token";
  if (form === "plain") {
    Deno.writeTextFileSync(dir + "/.next", value);
    Deno.renameSync(dir + "/.next", dir + "/token");
  } else {
    const next = dir + "/..v" + i;
    Deno.mkdirSync(next);
    Deno.writeTextFileSync(next + "/token", value);
    Deno.symlinkSync("..v" + i, dir + "/..data_tmp");
    Deno.renameSync(dir + "/..data_tmp", dir + "/..data");
    if (i > 1) Deno.removeSync(dir + "/..v" + (i - 2), { recursive: true });
  }
  i++;
  if (i % 64 === 0) await new Promise((r) => setTimeout(r, 0));
}
console.log(i);
`;

for (const form of ["plain", "symlink"] as const) {
  Deno.test(`readBoundedFile(): a file rotated by rename while read (${form}) is read, old or new, never refused`, async () => {
    const rotated = await Deno.makeTempDir({ dir, prefix: `rotated-${form}-` });
    if (form === "plain") await Deno.writeTextFile(`${rotated}/token`, "old-token");
    else {
      await Deno.mkdir(`${rotated}/..v-first`);
      await Deno.writeTextFile(`${rotated}/..v-first/token`, "old-token");
      await Deno.symlink("..v-first", `${rotated}/..data`);
      await Deno.symlink("..data/token", `${rotated}/token`);
    }
    const rotator = new Deno.Command(Deno.execPath(), {
      args: ["eval", "--no-config", "--quiet", ROTATOR, rotated, form],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const seen = new Set<string>();
    const refused: string[] = [];
    try {
      for (let i = 0; i < 1500; i++) {
        for (
          const read of [
            readBoundedText,
            (f: string, r: typeof READ) => Promise.resolve(readBoundedTextSync(f, r)),
          ]
        ) {
          try {
            seen.add(await read(`${rotated}/token`, READ));
          } catch (error) {
            refused.push(error instanceof Error ? error.message : String(error));
          }
        }
      }
    } finally {
      await rotator.stdin.close();
    }
    const out = await rotator.output();
    const rotations = Number(new TextDecoder().decode(out.stdout).trim());
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.ok(rotations > 100, `the rotator made ${rotations} rotations: too few to test anything`);
    assert.deepEqual(refused, [], `refused during ${rotations} rotations`);
    assert.ok([...seen].every((v) => v === "old-token" || v === "new-token"), [...seen].join(", "));
  });
}
