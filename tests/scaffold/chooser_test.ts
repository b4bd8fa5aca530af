/**
 * The chooser of `weir scaffold`, used as a person uses it: the real CLI runs
 * in a terminal (tmux, on a socket of this test's own), keys are typed with
 * `send-keys`, and the screen is read with `capture-pane`. Two operations of
 * a real document (the Swagger 2.0 petstore of `@readme/oas-examples`) are
 * selected; the written file serves exactly those two. Leaving with `q`
 * writes nothing. Also the pure parts: key decoding and the state machine.
 */
import assert from "node:assert/strict";
import { CONFIG, ROOT, runCommand } from "../support/cli.ts";
import { runCli, spawnServeStdio } from "./support.ts";
import {
  type ChooserState,
  initialState,
  keysOf,
  outputPath,
  press,
  type Row,
  screenSize,
} from "../../src/scaffold/chooser.ts";

// A tmux server (socket) of its own for each chooser: `kill-server` returns before the old
// server has exited, and a new session on the same socket could reach the dying server
// ("server exited unexpectedly", seen on a loaded machine).
let started = 0;
let socket = "";

async function tmux(...args: string[]): Promise<string> {
  const r = await runCommand("tmux", { args: ["-L", socket, ...args] });
  if (r.code !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** The screen as text, once `ready` holds (polled for up to `ms`). */
async function screenWhen(ready: (screen: string) => boolean, what: string, ms = 60_000) {
  const deadline = Date.now() + ms;
  let screen = "";
  while (Date.now() < deadline) {
    screen = await tmux("capture-pane", "-p", "-t", "chooser");
    if (ready(screen)) return screen;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}; the screen:\n${screen}`);
}

/** The petstore document the chooser tests scaffold from. */
async function petstore(dir: string): Promise<void> {
  const doc = (await import("@readme/oas-examples/2.0/json/petstore.json", {
    with: { type: "json" },
  })).default;
  await Deno.writeTextFile(`${dir}/petstore.json`, JSON.stringify(doc));
}

/**
 * Start `weir scaffold petstore.json` in a 140x30 terminal in a new temporary directory
 * holding `files` too.
 */
async function startChooser(files: Record<string, string> = {}): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "weir-chooser-" });
  socket = `weir-chooser-${Deno.pid}-${++started}`;
  await petstore(dir);
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  const weir = [Deno.execPath(), "run", "--quiet", "--config", CONFIG, "-A", `${ROOT}cli.ts`]
    .map((a) => `'${a}'`).join(" ");
  await tmux(
    "new-session",
    "-d",
    "-s",
    "chooser",
    "-x",
    "140",
    "-y",
    "30",
    "-c",
    dir,
    // The pane stays (for the screen after exit) until stop() kills the tmux server.
    `${weir} scaffold petstore.json; echo "exit=$?" > done.txt; sleep 600`,
  );
  return dir;
}

async function waitForFile(path: string, ms = 60_000): Promise<string> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      return await Deno.readTextFile(path);
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${path} never appeared`);
}

async function stop(dir: string): Promise<void> {
  await tmux("kill-server").catch(() => {});
  await Deno.remove(dir, { recursive: true });
}

Deno.test("weir scaffold in a terminal: select two operations, write, serve exactly those two", async () => {
  const dir = await startChooser();
  try {
    let screen = await screenWhen(
      (s) => s.includes("Nothing is granted until you select it"),
      "the chooser",
    );
    assert.match(screen, /^0 selected/m);
    assert.match(screen, /^ {2}pet$/m, "grouped by tag");
    assert.match(
      screen,
      /^> {3}\[ \] GET {4}\/pet\/findByStatus/m,
      "reads first, cursor on the first",
    );
    assert.match(
      screen,
      /\[-\] POST +\/user\/createWithArray +not expressible: the JSON body is an array/,
    );
    assert.doesNotMatch(screen, /\[x\]/, "nothing selected until the person selects it");

    await tmux("send-keys", "-t", "chooser", "Space");
    screen = await screenWhen((s) => /^1 selected/m.test(s), "the first selection");
    assert.match(screen, /^> {3}\[x\] GET {4}\/pet\/findByStatus/m);

    await tmux("send-keys", "-t", "chooser", "/");
    await tmux("send-keys", "-t", "chooser", "-l", "getOrder");
    screen = await screenWhen((s) => s.includes("filter: getOrder_"), "the filter");
    assert.match(screen, /\[ \] GET +\/store\/order\/\{orderId\} +get_order-by-id/);
    assert.doesNotMatch(screen, /findByStatus/, "the filter hides the rest");

    await tmux("send-keys", "-t", "chooser", "Enter", "Space");
    screen = await screenWhen((s) => /^2 selected/m.test(s), "the second selection");
    assert.match(screen, /^> {3}\[x\] GET +\/store\/order\/\{orderId\}/m);

    await tmux("send-keys", "-t", "chooser", "/", "Escape");
    screen = await screenWhen(
      (s) => s.includes("/user/logout") && !s.includes("filter:"),
      "the whole list",
    );
    assert.equal(screen.match(/\[x\]/g)?.length, 2);

    await tmux("send-keys", "-t", "chooser", "Enter");
    screen = await screenWhen((s) => s.includes("Write to: "), "the output prompt");
    // The default is a hint, not text in the field: typing replaces it.
    assert.match(
      screen,
      /Write to: _ {3}\(enter: swagger-petstore\.mcp\.kdl; or type another name\)/,
    );
    assert.match(screen, /2 selected\. Enter writes, escape goes back\./);
    await tmux("send-keys", "-t", "chooser", "-l", "chosen.mcp.kdl");
    screen = await screenWhen((s) => s.includes("Write to: chosen.mcp.kdl_"), "the typed name");
    await tmux("send-keys", "-t", "chooser", "Enter");

    assert.equal((await waitForFile(`${dir}/done.txt`)).trim(), "exit=0");
    screen = await screenWhen((s) => s.includes("Wrote chosen.mcp.kdl"), "the summary");
    assert.match(screen, /20 operations: 2 granted, 16 listed off, 2 not expressible/);

    const file = `${dir}/chosen.mcp.kdl`;
    const lint = await runCli(["lint", "--methods", file]);
    assert.equal(lint.code, 0, lint.stderr);
    assert.equal(lint.stdout, "find_pets-by-status\tGET\nget_order-by-id\tGET\nweir_info\t-\n");
    const served = await toolsOverStdio(file);
    assert.deepEqual(served, ["find_pets-by-status", "get_order-by-id", "weir_info"]);
    const described = JSON.parse((await runCli(["describe", "--format", "json", file])).stdout);
    assert.deepEqual(
      described.tools.filter((t: { kind: string }) => t.kind === "grant")
        .map((t: { operation: { method: string; path: string } }) =>
          `${t.operation.method} ${t.operation.path}`
        ).sort(),
      ["GET /pet/findByStatus", "GET /store/order/{orderId}"],
    );
  } finally {
    await stop(dir);
  }
});

Deno.test("weir scaffold in a terminal: q leaves without writing (exit 1)", async () => {
  const dir = await startChooser();
  try {
    await screenWhen((s) => s.includes("Nothing is granted until you select it"), "the chooser");
    await tmux("send-keys", "-t", "chooser", "Space", "q");
    assert.equal((await waitForFile(`${dir}/done.txt`)).trim(), "exit=1");
    const screen = await screenWhen((s) => s.includes("left the chooser"), "the goodbye");
    assert.match(screen, /nothing written/);
    const files = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(files, ["done.txt", "petstore.json"]);
  } finally {
    await stop(dir);
  }
});

Deno.test("weir scaffold in a terminal: a file that exists is offered to replace or rename, the selection kept", async () => {
  const old = "// the reviewer's own guardfile\n";
  const dir = await startChooser({ "swagger-petstore.mcp.kdl": old });
  try {
    await screenWhen((s) => s.includes("Nothing is granted until you select it"), "the chooser");
    await tmux("send-keys", "-t", "chooser", "Space");
    await screenWhen((s) => /^1 selected/m.test(s), "the selection");
    await tmux("send-keys", "-t", "chooser", "Enter");
    await screenWhen((s) => s.includes("Write to: _"), "the output prompt");
    await tmux("send-keys", "-t", "chooser", "Enter");
    let screen = await screenWhen((s) => s.includes("exists: y replaces it"), "the refusal");
    assert.match(screen, /swagger-petstore\.mcp\.kdl exists: y replaces it, or type another name/);
    assert.doesNotMatch(screen, /--force/, "no restart needed");
    assert.match(screen, /^1 selected/m, "the selection is kept");
    assert.equal(await Deno.readTextFile(`${dir}/swagger-petstore.mcp.kdl`), old);
    // Typing starts another name; enter writes it with the selection.
    await tmux("send-keys", "-t", "chooser", "-l", "other.mcp.kdl");
    screen = await screenWhen((s) => s.includes("Write to: other.mcp.kdl_"), "the new name");
    await tmux("send-keys", "-t", "chooser", "Enter");
    assert.equal((await waitForFile(`${dir}/done.txt`)).trim(), "exit=0");
    assert.equal(await Deno.readTextFile(`${dir}/swagger-petstore.mcp.kdl`), old, "untouched");
    const lint = await runCli(["lint", "--methods", `${dir}/other.mcp.kdl`]);
    assert.equal(lint.code, 0, lint.stderr);
    assert.equal(lint.stdout, "find_pets-by-status\tGET\nweir_info\t-\n");
  } finally {
    await stop(dir);
  }
});

Deno.test("weir scaffold in a terminal that reports 0 columns: drawn at 80 columns, not blank", async () => {
  // util-linux script(1) with a non-terminal stdin makes a pty with no window size (0x0),
  // as pty.fork() and some docker exec -t sessions do.
  const dir = await Deno.makeTempDir({ prefix: "weir-chooser-" });
  await petstore(dir);
  const weir = [Deno.execPath(), "run", "--quiet", "--config", CONFIG, "-A", `${ROOT}cli.ts`]
    .map((a) => `'${a}'`).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qec", `${weir} scaffold petstore.json`, "/dev/null"],
    cwd: dir,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    // The title is cut at 80 columns; the key help line is the last one drawn.
    while (!seen.includes("q quit")) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += value;
    }
    assert.match(seen, /weir scaffold: Swagger Petstore/, "the chooser is drawn");
    assert.match(seen, /up\/down move +space select +\/ filter +enter write +q quit/);
    assert.match(seen, /\[ \] GET +\/pet\/findByStatus/);
    // Cut at 80 columns: no drawn line is longer.
    const drawn = seen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").split(/\r\n|\r|\n/);
    assert.ok(Math.max(...drawn.map((l) => [...l].length)) <= 80, "80 columns");
    await writer.write(new TextEncoder().encode("q"));
    await writer.close();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += value;
    }
    assert.match(seen, /left the chooser; nothing written/);
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
    await child.stderr.cancel();
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
});

/** `tools/list` over stdio (one page is enough for a few tools). */
async function toolsOverStdio(file: string): Promise<string[]> {
  const child = spawnServeStdio(file);
  const w = child.stdin.getWriter();
  const lines = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
  ];
  await w.write(new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join("\n") + "\n"));
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  try {
    for (let i = 0; i < 1000 && !/"id":2/.test(text); i++) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
    }
  } finally {
    await w.close();
    await reader.cancel();
    await child.stderr.cancel();
    await child.status;
  }
  const answer = text.split("\n").map((l) => l.trim()).filter((l) => l.includes('"id":2'))[0];
  return JSON.parse(answer).result.tools.map((t: { name: string }) => t.name).sort();
}

// ---- the pure parts ----

const ROWS: Row[] = [
  { kind: "group", label: "pet", group: 0 },
  {
    kind: "op",
    group: 0,
    key: "GET /pets",
    method: "GET",
    path: "/pets",
    tool: "list_pets",
    summary: "",
    reads: true,
    haystack: "get /pets list_pets",
  },
  {
    kind: "op",
    group: 0,
    key: "POST /pets/upload",
    method: "POST",
    path: "/pets/upload",
    tool: "upload_pet",
    summary: "",
    reads: false,
    haystack: "post /pets/upload upload_pet",
    reason: "the request body is multipart/form-data",
  },
  { kind: "group", label: "store", group: 1 },
  {
    kind: "op",
    group: 1,
    key: "GET /orders",
    method: "GET",
    path: "/orders",
    tool: "list_orders",
    summary: "",
    reads: true,
    haystack: "get /orders list_orders",
  },
];

function run(keys: string[]): ChooserState {
  return keys.reduce((s, k) => press(s, k), initialState(ROWS, "out.mcp.kdl"));
}

Deno.test("keysOf(): arrows, enter, space, escape, backspace and text from terminal bytes", () => {
  const bytes = new TextEncoder().encode("\x1b[A\x1b[Bx \r\x1b\x7f\x03\x15\x1b[5~");
  assert.deepEqual(keysOf(bytes), [
    "up",
    "down",
    "x",
    "space",
    "enter",
    "escape",
    "backspace",
    "ctrl-c",
    "ctrl-u",
    "pageup",
  ]);
});

Deno.test("press(): nothing selected at first; space toggles; an inexpressible one cannot be selected", () => {
  assert.equal(run([]).selected.size, 0);
  assert.deepEqual([...run(["space"]).selected], ["GET /pets"]);
  assert.deepEqual([...run(["space", "space"]).selected], []);
  const refused = run(["down", "space"]);
  assert.equal(refused.selected.size, 0);
  assert.match(refused.message, /Cannot be granted: the request body is multipart/);
});

Deno.test("press(): space on a group selects its expressible operations; the filter narrows the list", () => {
  assert.equal(run(["up"]).cursor, 0, "the first group's row can be reached");
  const group = run(["up", "space"]);
  assert.deepEqual([...group.selected], ["GET /pets"]);
  assert.equal(group.message, "Selected 1 in pet.");
  assert.equal(run(["up", "space", "space"]).selected.size, 0, "space again deselects the group");
  assert.equal(run(["/", "o"]).cursor, 1, "typing a filter puts the cursor on the first match");
  const filtered = run(["/", "o", "r", "d", "enter", "space"]);
  assert.deepEqual([...filtered.selected], ["GET /orders"]);
  assert.equal(run(["/", "x", "escape"]).filter, "");
  assert.equal(run(["q"]).done, "quit");
  assert.equal(run(["ctrl-c"]).done, "quit");
  const writing = run(["space", "enter", "ctrl-u", "a", ".", "k", "d", "l", "enter"]);
  assert.equal(writing.done, "write");
  assert.equal(writing.output, "a.kdl");
  // The default name is a hint: enter takes it, typing replaces it (never appended).
  assert.equal(outputPath(run(["space", "enter", "enter"])), "out.mcp.kdl");
  assert.equal(outputPath(run(["space", "enter", "b", ".", "k", "d", "l", "enter"])), "b.kdl");
  // A file that exists: y replaces it; typing starts another name.
  const asked = { ...run(["space", "enter"]), existing: "out.mcp.kdl" };
  const replaced = press(asked, "y");
  assert.equal(replaced.done, "write");
  assert.equal(replaced.replace, "out.mcp.kdl");
  const renamed = press(press(asked, "c"), "enter");
  assert.equal(renamed.done, "write");
  assert.equal(outputPath(renamed), "c");
  assert.equal(renamed.replace, undefined);
  assert.deepEqual([...renamed.selected], ["GET /pets"], "the selection is kept");
});

Deno.test("screenSize(): a terminal reporting 0 columns or rows is drawn as 80x24", () => {
  assert.deepEqual(screenSize({ columns: 0, rows: 0 }), { columns: 80, rows: 24 });
  assert.deepEqual(screenSize({ columns: 120, rows: 0 }), { columns: 120, rows: 24 });
  assert.deepEqual(screenSize(undefined), { columns: 80, rows: 24 });
  assert.deepEqual(screenSize({ columns: 100, rows: 30 }), { columns: 100, rows: 30 });
});
