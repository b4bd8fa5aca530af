/**
 * The container image's default command, run here as the image runs it: the
 * `ENTRYPOINT` + `CMD` of the `Dockerfile` (held to `scripts/build.ts` by
 * build_definition_test.ts), with only the image's permissions
 * (`IMAGE.permissions`: no --allow-run, no --allow-write), the guardfile at the
 * path the image mounts it replaced by a file here.
 *
 * - Without `WEIR_INBOUND_TOKEN` it refuses at start (exit 1), naming the
 *   variable and what to put in it, before it binds 0.0.0.0:8080.
 * - With it, it serves: `/healthz` and the image's `HEALTHCHECK` command
 *   answer, a caller without the token is refused, and the official client
 *   with the token lists the guardfile's tools. (Here it listens on
 *   127.0.0.1:0 instead of 0.0.0.0:8080: tests bind loopback and a free port;
 *   the token is required on either address.)
 *
 * The image itself is built and run by the release workflow
 * (`scripts/image_smoke.sh`), which this machine cannot do (no Docker daemon).
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { IMAGE } from "../../scripts/build.ts";
import { CLI, CONFIG, ROOT, runCommand, untilListening } from "../support/cli.ts";

const DOCKERFILE = await Deno.readTextFile(`${ROOT}Dockerfile`);
const CMD: string[] = JSON.parse(/^CMD (\[.*\])$/m.exec(DOCKERFILE)![1]);
const HEALTHCHECK: string[] = JSON.parse(
  /^\s*CMD (\[.*\])$/m.exec(
    DOCKERFILE.slice(DOCKERFILE.indexOf("HEALTHCHECK")),
  )![1],
);
const MOUNTED = "/config/guardfile.mcp.kdl";

const work = await Deno.makeTempDir({ prefix: "weir-image-" });
const guardfile = `${work}/guardfile.mcp.kdl`;
await Deno.copyFile(`${ROOT}guardfiles/open-meteo.mcp.kdl`, guardfile);
globalThis.addEventListener("unload", () => Deno.removeSync(work, { recursive: true }));

/** `weir ARGS` with the image binary's permissions and no WEIR_* variable but `env`'s. */
function weir(args: string[], env: Record<string, string>): Deno.CommandOptions {
  const base = Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([name]) => !name.startsWith("WEIR_")),
  );
  return {
    args: ["run", "--quiet", "--no-prompt", "--config", CONFIG, ...IMAGE.permissions, CLI, ...args],
    env: { ...base, ...env },
    clearEnv: true,
    cwd: work,
  };
}

const commandHere = (command: string[]) => command.map((a) => a === MOUNTED ? guardfile : a);

Deno.test("the image's default command names the guardfile it mounts", () => {
  assert.ok(CMD.includes(MOUNTED), `${CMD}`);
  assert.deepEqual(CMD, IMAGE.command);
});

Deno.test("the default command without WEIR_INBOUND_TOKEN refuses at start, saying what to set", async () => {
  const r = await runCommand(Deno.execPath(), {
    ...weir(commandHere(CMD), {}),
    signal: AbortSignal.timeout(60_000), // were it to serve, it would not stop by itself
  });
  // A start-up configuration refusal: exit 2 (docs/cli.md "Exit codes").
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /--inbound-token-env WEIR_INBOUND_TOKEN: the variable is not set or holds no token; set it to one or more bearer tokens/,
  );
  assert.doesNotMatch(r.stderr, /"event":"serving"/);
  assert.equal(r.stdout, "");
});

Deno.test("the default command with WEIR_INBOUND_TOKEN serves, answers its health check, and requires the token", async () => {
  const token = Array.from(
    crypto.getRandomValues(new Uint8Array(32)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  const args = commandHere(CMD).map((a) => a === "0.0.0.0:8080" ? "127.0.0.1:0" : a);
  assert.notDeepEqual(args, commandHere(CMD), "the listen address was replaced");
  const child = new Deno.Command(Deno.execPath(), {
    ...weir(args, { WEIR_INBOUND_TOKEN: token }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const served = await untilListening(child, "the image's default command", { timeoutMs: 30_000 });
  try {
    const health = await fetch(`${served.url}/healthz`);
    assert.equal(health.status, 200);
    const body = await health.json();
    assert.deepEqual(body, { status: "ok", surface: body.surface });
    assert.match(body.surface, /^[0-9a-f]{16}$/);
    // The image's HEALTHCHECK, pointed at this port.
    const check = HEALTHCHECK.slice(1).map((a) => a.replace("http://127.0.0.1:8080", served.url));
    assert.equal(HEALTHCHECK[0], IMAGE.entrypoint);
    const h = await runCommand(Deno.execPath(), weir(check, {}));
    assert.equal(h.code, 0, h.stderr);

    const anonymous = await fetch(`${served.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    await anonymous.body?.cancel();
    assert.ok([401, 403].includes(anonymous.status), `${anonymous.status}`);

    const client = new Client({ name: "image-test", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      assert.ok(names.includes("get_forecast"), `${names}`);
    } finally {
      await client.close();
    }
  } finally {
    assert.equal(await served.stop(), 0);
  }
});
