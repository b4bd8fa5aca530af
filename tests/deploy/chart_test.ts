/**
 * The Helm chart (deploy/helm/weir), rendered by a real `helm template` for
 * spec and upstream modes. The objects are asserted field by field, every
 * render is validated against the Kubernetes schemas (tests/support/kube_schema.ts),
 * the rendered output passes yamllint, and the weir command line the Deployment
 * would run is run here with the real CLI: the pod's guardfile (from the
 * ConfigMap) and its probe paths answer as Kubernetes would see them.
 *
 * helm comes from $WEIR_HELM, .cache/tools/helm (`scripts/get-helm.sh`, which
 * `.ci/run` calls) or PATH; without one the tests say so and are skipped.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ROOT, tempGuardfile, weirCommand } from "../support/cli.ts";
import { kubeSchemaProblems } from "../support/kube_schema.ts";

const CHART = `${ROOT}deploy/helm/weir`;
const GUARDFILE = `${ROOT}guardfiles/demo.mcp.kdl`;

async function works(path: string): Promise<boolean> {
  try {
    const out = await new Deno.Command(path, { args: ["version", "--short"], stdout: "null" })
      .output();
    return out.success;
  } catch {
    return false;
  }
}

async function findHelm(): Promise<string | undefined> {
  for (const candidate of [Deno.env.get("WEIR_HELM"), `${ROOT}.cache/tools/helm`, "helm"]) {
    if (candidate && await works(candidate)) return candidate;
  }
  return undefined;
}

const HELM = await findHelm();
const YAMLLINT = await (async () => {
  try {
    return (await new Deno.Command("yamllint", { args: ["--version"], stdout: "null" }).output())
      .success;
  } catch {
    return false;
  }
})();
const skip = HELM ? "" : " (skipped: no helm; run scripts/get-helm.sh or set WEIR_HELM)";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

interface Rendered {
  code: number;
  text: string;
  stderr: string;
  objects: Obj[];
}

async function render(args: string[]): Promise<Rendered> {
  const out = await new Deno.Command(HELM!, {
    args: ["template", "rel", CHART, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const objects = out.success
    ? parseAllDocuments(text).map((d) => d.toJS()).filter((o) => o !== null)
    : [];
  // Every object any render makes is valid Kubernetes (what kubeconform would check).
  assert.deepEqual(kubeSchemaProblems(objects), [], `schema problems in: helm template ${args}`);
  return { code: out.code, text, stderr: new TextDecoder().decode(out.stderr), objects };
}

function one(objects: Obj[], kind: string): Obj {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `one ${kind} in ${objects.map((o) => o.kind)}`);
  return found[0];
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function yamllint(text: string): Promise<void> {
  if (!YAMLLINT) {
    console.log("yamllint not installed: rendered YAML not linted");
    return;
  }
  const child = new Deno.Command("yamllint", {
    args: ["-c", `${ROOT}.yamllint.yaml`, "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(text));
  await w.close();
  const out = await child.output();
  assert.ok(out.success, new TextDecoder().decode(out.stdout));
}

/**
 * Run the container's command line with the real CLI: `/config/...` is the
 * ConfigMap's file written to a temp dir, and the listen address (the pod's
 * 0.0.0.0:PORT) becomes 127.0.0.1:0. Resolves once weir listens.
 */
async function runPod(args: string[], files: Record<string, string>, env: Record<string, string>) {
  const dir = await Deno.makeTempDir();
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  const mapped = args.map((a) => a.startsWith("/config/") ? `${dir}/${a.slice(8)}` : a)
    .map((a, i, all) => all[i - 1] === "--http" ? "127.0.0.1:0" : a);
  const { command, args: pre } = weirCommand();
  const child = new Deno.Command(command, {
    args: [...pre, ...mapped],
    env,
    cwd: dir,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.getReader();
  const decoder = new TextDecoder();
  let err = "";
  let url = "";
  const deadline = Date.now() + 30_000;
  while (!url && Date.now() < deadline) {
    const { done, value } = await reader.read();
    if (done) break;
    err += decoder.decode(value);
    url = /"mcp":"(http:\/\/[^"]+)\/mcp"/.exec(err)?.[1] ?? "";
  }
  const pump = (async () => {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      err += decoder.decode(r.value);
    }
  })();
  const signal = (name: Deno.Signal) => {
    try {
      child.kill(name);
    } catch { /* gone */ }
  };
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
    await pump;
    await Deno.remove(dir, { recursive: true });
  };
  if (!url) {
    await stop();
    throw new Error(`the chart's command line did not start weir: ${mapped.join(" ")}\n${err}`);
  }
  return { url, stop, stderr: () => err, signal, status: child.status };
}

async function listTools(url: string, token?: string): Promise<string[]> {
  const client = new Client({ name: "chart-test", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : undefined,
    }),
  );
  try {
    return (await client.listTools()).tools.map((t: { name: string }) => t.name).sort();
  } finally {
    await client.close();
  }
}

const TOKEN = "chart-test-token-0123456789";
/** A guardfile with a confirm gate (its upstream is never called here). */
const CONFIRMING = `${ROOT}tests/fixtures/controls.mcp.kdl`;
const STATE_KEY = "chart-test-state-key-0123456789abcdefghij";

Deno.test({
  name: `chart: helm lint passes for spec and upstream values${skip}`,
  ignore: !HELM,
  fn: async () => {
    for (
      const values of [
        ["--set-file", `guardfile=${GUARDFILE}`, "--set", "inboundAuth.disabled=true"],
        [
          "--set",
          "runtime.mode=upstream,upstream.url=http://up:3000/mcp,upstream.tools={a},inboundAuth.existingSecret=s",
        ],
      ]
    ) {
      const out = await new Deno.Command(HELM!, {
        args: ["lint", "--strict", CHART, ...values],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.ok(out.success, new TextDecoder().decode(out.stdout));
    }
  },
});

Deno.test({
  name:
    `chart: spec mode renders a hardened Deployment whose command line serves the guardfile${skip}`,
  ignore: !HELM,
  fn: async () => {
    const guardfile = await Deno.readTextFile(GUARDFILE);
    const r = await render([
      "--set-file",
      `guardfile=${GUARDFILE}`,
      "--set",
      "guardfileName=tickets,inboundAuth.existingSecret=weir-inbound,replicaCount=2",
      "--set",
      "stateKeys.existingSecret=weir-state",
      "--set",
      "secret.TICKETS_TOKEN.secretName=tickets,secret.TICKETS_TOKEN.key=token",
      "--set",
      "redis.url=redis://cache:6379/0",
    ]);
    assert.equal(r.code, 0, r.stderr);
    await yamllint(r.text);
    assert.deepEqual(r.objects.map((o) => o.kind).sort(), [
      "ConfigMap",
      "Deployment",
      "PodDisruptionBudget",
      "Service",
    ]);

    const cm = one(r.objects, "ConfigMap");
    assert.equal(cm.metadata.name, "rel-weir-guardfile");
    assert.equal(cm.data["tickets.mcp.kdl"], guardfile, "the ConfigMap holds the guardfile as is");

    const deploy = one(r.objects, "Deployment");
    assert.equal(deploy.spec.replicas, 2);
    assert.equal(deploy.spec.revisionHistoryLimit, 3);
    const pod = deploy.spec.template;
    assert.equal(pod.metadata.annotations["checksum/guardfile"], await sha256(guardfile));
    assert.match(pod.metadata.annotations["checksum/runtime"], /^[0-9a-f]{64}$/);
    assert.equal(pod.spec.automountServiceAccountToken, false);
    assert.equal(pod.spec.securityContext.runAsNonRoot, true);
    const [c] = pod.spec.containers;
    assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
      const path = probe === "readinessProbe" ? "/readyz" : "/healthz";
      assert.equal(c[probe].httpGet.path, path, probe);
      assert.equal(c[probe].httpGet.port, "http", probe);
    }
    assert.equal(c.ports[0].name, "http");
    assert.deepEqual(
      c.volumeMounts.map((m: Obj) => m.mountPath).sort(),
      ["/config", "/tmp"],
    );
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e]));
    assert.deepEqual(env.WEIR_INBOUND_TOKEN.valueFrom.secretKeyRef, {
      name: "weir-inbound",
      key: "token",
    });
    assert.deepEqual(env.TICKETS_TOKEN.valueFrom.secretKeyRef, { name: "tickets", key: "token" });
    assert.equal(env.REDIS_URL.value, "redis://cache:6379/0");
    assert.deepEqual(c.args.slice(0, 2), ["serve", "/config/tickets.mcp.kdl"]);
    assert.ok(c.args.includes("--inbound-token-env"));

    // The pod's command line, run for real: the probe path answers and MCP
    // serves the guardfile's tools to a caller with the token, and no one else.
    const pod1 = await runPod(c.args, { "tickets.mcp.kdl": guardfile }, {
      WEIR_INBOUND_TOKEN: TOKEN,
      WEIR_STATE_KEYS: STATE_KEY,
      REDIS_URL: "redis://127.0.0.1:1",
    });
    try {
      const health = await fetch(`${pod1.url}${c.readinessProbe.httpGet.path}`);
      assert.equal(health.status, 200);
      await health.body?.cancel();
      const tools = await listTools(pod1.url, TOKEN);
      assert.ok(tools.includes("list_ticket") && tools.includes("delete_ticket"), `${tools}`);
      const anonymous = await fetch(`${pod1.url}/mcp`, { method: "POST", body: "{}" });
      // A missing static bearer token is 401 with a Bearer challenge (RFC 6750 section 3).
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers.get("www-authenticate") ?? "", /^Bearer\b/);
      await anonymous.body?.cancel();
    } finally {
      await pod1.stop();
    }

    // A changed guardfile changes the checksum, so the pods roll.
    const changedFile = await tempGuardfile(guardfile.replace("demo", "demo2"));
    const changed = await render([
      "--set-file",
      `guardfile=${changedFile}`,
      "--set",
      "inboundAuth.disabled=true",
    ]);
    await Deno.remove(changedFile);
    assert.notEqual(
      one(changed.objects, "Deployment").spec.template.metadata.annotations["checksum/guardfile"],
      pod.metadata.annotations["checksum/guardfile"],
    );
  },
});

Deno.test({
  name: `chart: upstream mode runs serve-upstream with the allowlist, secrets and sidecars${skip}`,
  ignore: !HELM,
  fn: async () => {
    // The upstream: weir itself serving the demo guardfile on loopback.
    const guardfile = await Deno.readTextFile(GUARDFILE);
    const upstream = await runPod(["serve", "/config/demo.mcp.kdl", "--http", "x"], {
      "demo.mcp.kdl": guardfile,
    }, {});
    try {
      const r = await render([
        "--set",
        `runtime.mode=upstream,upstream.url=${upstream.url}/mcp,upstream.connectTimeout=10s`,
        "--set",
        "upstream.tools={list_ticket,get_ticket},inboundAuth.disabled=true",
        "--set",
        "secret.GH_TOKEN=/weir/github/token,secret.OTHER.secretName=other,secret.OTHER.key=k",
        "--set",
        "extraContainers[0].name=sidecar,extraContainers[0].image=example/sidecar:1",
        "--set",
        "service.nodePort=30080,redis.existingSecret=redis",
      ]);
      assert.equal(r.code, 0, r.stderr);
      await yamllint(r.text);
      assert.deepEqual(
        r.objects.map((o) => o.kind).sort(),
        ["Deployment", "ExternalSecret", "Service"],
      );
      const external = one(r.objects, "ExternalSecret");
      assert.deepEqual(external.spec.data, [
        { secretKey: "GH_TOKEN", remoteRef: { key: "/weir/github/token" } },
      ]);
      assert.equal(external.spec.secretStoreRef.name, "aws-parameter-store");
      const svc = one(r.objects, "Service");
      assert.equal(svc.spec.type, "NodePort");
      assert.equal(svc.spec.ports[0].nodePort, 30080);
      const pod = one(r.objects, "Deployment").spec.template.spec;
      assert.deepEqual(pod.containers.map((c: Obj) => c.name), ["weir", "sidecar"]);
      const [c] = pod.containers;
      assert.equal(c.args[0], "serve-upstream");
      assert.ok(!c.volumeMounts.some((m: Obj) => m.mountPath === "/config"));
      const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e]));
      assert.deepEqual(env.GH_TOKEN.valueFrom.secretKeyRef, {
        name: "rel-weir-secret",
        key: "GH_TOKEN",
      });
      assert.deepEqual(env.OTHER.valueFrom.secretKeyRef, { name: "other", key: "k" });
      assert.deepEqual(env.REDIS_URL.valueFrom.secretKeyRef, { name: "redis", key: "url" });

      const proxy = await runPod(c.args, {}, {});
      try {
        const health = await fetch(`${proxy.url}${c.livenessProbe.httpGet.path}`);
        assert.equal(health.status, 200);
        await health.body?.cancel();
        assert.deepEqual(await listTools(proxy.url), ["get_ticket", "list_ticket"]);
      } finally {
        await proxy.stop();
      }

      const noSecrets = await render([
        "--set",
        "runtime.mode=upstream,upstream.url=http://u/mcp,upstream.tools={a},inboundAuth.disabled=true",
        "--set",
        "secret.OTHER.secretName=other,secret.OTHER.key=k,runtime.injectSecrets=false",
      ]);
      const names = one(noSecrets.objects, "Deployment").spec.template.spec.containers[0].env
        .map((e: Obj) => e.name);
      assert.ok(!names.includes("OTHER"), `${names}`);
    } finally {
      await upstream.stop();
    }
  },
});

Deno.test({
  name: `chart: values that cannot make a working weir fail the render and say why${skip}`,
  ignore: !HELM,
  fn: async () => {
    const cases: [string[], RegExp][] = [
      [
        ["--set", "runtime.mode=proxy,inboundAuth.disabled=true"],
        /runtime.mode must be spec or upstream/,
      ],
      [["--set", "inboundAuth.disabled=true"], /spec mode needs the guardfile/],
      [["--set", "runtime.mode=upstream,inboundAuth.disabled=true"], /needs upstream.url/],
      [
        ["--set", "runtime.mode=upstream,upstream.url=http://u/mcp,inboundAuth.disabled=true"],
        /at least one tool/,
      ],
      [["--set-file", `guardfile=${GUARDFILE}`], /without inbound auth/],
      [
        [
          "--set-file",
          `guardfile=${GUARDFILE}`,
          "--set",
          "inboundAuth.disabled=true,replicaCount=3",
        ],
        /replicaCount 3 needs stateKeys.existingSecret: every replica must sign cursors and confirmations with the same keys/,
      ],
      [
        ["--set", "runtime.mode=upstream,upstream.url=http://u/mcp,upstream.tools={a}"],
        /without inbound auth/,
      ],
      [
        [
          "--set",
          "runtime.mode=upstream,upstream.url=http://u/mcp,upstream.tools={a},inboundAuth.disabled=true,replicaCount=2",
        ],
        /replicaCount 2 needs stateKeys.existingSecret/,
      ],
      [
        [
          "--set-file",
          `guardfile=${CONFIRMING}`,
          "--set",
          "inboundAuth.disabled=true,replicaCount=3,stateKeys.existingSecret=k",
        ],
        /stateKeys.existingSecret with a guardfile that confirms a tool needs redis.url or redis.existingSecret/,
      ],
      [
        [
          "--set-file",
          `guardfile=${GUARDFILE}`,
          "--set",
          "inboundAuth.disabled=true,replicaCount=0",
        ],
        /replicaCount must be a whole number \(1 or more\), not 0/,
      ],
      [
        [
          "--set-file",
          `guardfile=${GUARDFILE}`,
          "--set",
          "inboundAuth.disabled=true,shutdown.drainSeconds=2.5",
        ],
        /shutdown.drainSeconds must be a whole number of seconds/,
      ],
      [
        ["--set-file", `guardfile=${GUARDFILE}`, "--set", "inboundAuth.disabled=true,secret.X=1"],
        /secret.X must be a secret-store path/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await render(args);
      assert.notEqual(r.code, 0, args.join(" "));
      assert.match(r.stderr, message);
    }
  },
});

Deno.test({
  name:
    `chart: replicaCount 3 renders readiness, preStop, the grace period, a PDB, the shared keys and Redis${skip}`,
  ignore: !HELM,
  fn: async () => {
    const r = await render([
      "--set-file",
      `guardfile=${CONFIRMING}`,
      "--set",
      "guardfileName=controls,inboundAuth.existingSecret=weir-inbound,replicaCount=3",
      "--set",
      "stateKeys.existingSecret=weir-state,redis.existingSecret=redis,redis.env=CONTROLS_REDIS_URL",
      "--set",
      "shutdown.preStopSeconds=4,shutdown.graceSeconds=6,shutdown.drainSeconds=20",
    ]);
    assert.equal(r.code, 0, r.stderr);
    await yamllint(r.text);
    const deploy = one(r.objects, "Deployment");
    assert.equal(deploy.spec.replicas, 3);
    const pod = deploy.spec.template.spec;
    // preStop + grace + drain + 5 s for the cut calls to answer and the exit.
    assert.equal(pod.terminationGracePeriodSeconds, 4 + 6 + 20 + 5);
    const [c] = pod.containers;
    assert.deepEqual(c.lifecycle, { preStop: { sleep: { seconds: 4 } } });
    assert.equal(c.readinessProbe.httpGet.path, "/readyz");
    assert.equal(c.livenessProbe.httpGet.path, "/healthz");
    const arg = (flag: string) => c.args[c.args.indexOf(flag) + 1];
    assert.equal(arg("--shutdown-grace"), "6000");
    assert.equal(arg("--drain-timeout"), "20000");
    assert.equal(arg("--state-keys-env"), "WEIR_STATE_KEYS");
    assert.equal(arg("--state-store-env"), "CONTROLS_REDIS_URL");
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e]));
    assert.deepEqual(env.WEIR_STATE_KEYS.valueFrom.secretKeyRef, {
      name: "weir-state",
      key: "keys",
    });
    assert.deepEqual(env.CONTROLS_REDIS_URL.valueFrom.secretKeyRef, { name: "redis", key: "url" });
    const pdb = one(r.objects, "PodDisruptionBudget");
    assert.equal(pdb.spec.maxUnavailable, 1);
    assert.deepEqual(pdb.spec.selector.matchLabels, deploy.spec.selector.matchLabels);

    // One replica renders no PDB, and preStopSeconds=0 leaves the hook out.
    const single = await render([
      "--set-file",
      `guardfile=${GUARDFILE}`,
      "--set",
      "inboundAuth.disabled=true,shutdown.preStopSeconds=0",
    ]);
    assert.ok(!single.objects.some((o) => o.kind === "PodDisruptionBudget"));
    const singlePod = one(single.objects, "Deployment").spec.template.spec;
    assert.equal(singlePod.containers[0].lifecycle, undefined);
    assert.equal(singlePod.terminationGracePeriodSeconds, 0 + 5 + 10 + 5);
    assert.ok(!singlePod.containers[0].args.includes("--state-keys-env"));

    // The pod's command line, run for real: it starts with the shared key and store, is
    // ready, and on SIGTERM turns unready while it still serves, then exits 0.
    const guardfile = await Deno.readTextFile(CONFIRMING);
    const pod1 = await runPod(c.args, { "controls.mcp.kdl": guardfile }, {
      WEIR_INBOUND_TOKEN: TOKEN,
      WEIR_STATE_KEYS: STATE_KEY,
      CONTROLS_REDIS_URL: "redis://127.0.0.1:1",
      CONTROLS_BASE_URL: "http://127.0.0.1:9",
      CONTROLS_DSN: "postgres://u@127.0.0.1:1/db",
    });
    try {
      assert.match(pod1.stderr(), /"event":"state_keys","source":"env WEIR_STATE_KEYS","keys":1/);
      const ready = await fetch(`${pod1.url}${c.readinessProbe.httpGet.path}`);
      assert.equal(ready.status, 200);
      await ready.body?.cancel();
      pod1.signal("SIGTERM");
      let status = 200;
      for (let i = 0; i < 100 && status === 200; i++) {
        const probe = await fetch(`${pod1.url}/readyz`);
        status = probe.status;
        await probe.body?.cancel();
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(status, 503, "unready once SIGTERM arrives");
      const live = await fetch(`${pod1.url}${c.livenessProbe.httpGet.path}`);
      assert.equal(live.status, 200, "still serving through the grace period");
      await live.body?.cancel();
      assert.equal((await pod1.status).code, 0);
    } finally {
      await pod1.stop();
    }
  },
});

/** The env a rendered weir container gets, with each Secret it names filled by a test value. */
function podEnv(container: Obj, secrets: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (typeof e.value === "string") env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) env[e.name] = secrets[e.name] ?? "unused-secret-value";
  }
  return env;
}

Deno.test({
  name:
    `chart: a render that succeeds starts weir; one weir would refuse to start fails, saying why (a confirm written any way KDL allows)${skip}`,
  ignore: !HELM,
  fn: async () => {
    const body = `wrap ward mcp tickets {
    base-url "http://127.0.0.1:9"
    auth none
    can delete ticket { path "/tickets/{id}"; }
}
`;
    const confirming = [
      `confirm "delete_ticket" message="Delete it?"\n`,
      `  confirm\t"delete_ticket" message="Delete it?"\n`,
      `withhold "x" { reason "y"; }; confirm "delete_ticket" message="Delete it?"\n`,
      `withhold "x" { reason "y"; }\n"confirm" "delete_ticket" message="Delete it?"\n`,
      `#"confirm"# "delete_ticket" message="Delete it?"\n`,
      `/* gate */ confirm "delete_ticket" message="Delete it?"\n`,
    ];
    const plain = [`withhold "x" { reason "ask a person to confirm"; }\n`, ""];
    const secrets = { WEIR_INBOUND_TOKEN: TOKEN, WEIR_STATE_KEYS: STATE_KEY };
    for (
      const [head, confirms] of [
        ...confirming.map((h) => [h, true] as const),
        ...plain.map((h) => [h, false] as const),
      ]
    ) {
      const file = await tempGuardfile(`${head}${body}`);
      try {
        for (const replicas of [1, 2]) {
          const what = `replicaCount=${replicas}, shared keys, no Redis, guardfile ${
            JSON.stringify(head)
          }`;
          const r = await render([
            "--set-file",
            `guardfile=${file}`,
            "--set",
            `inboundAuth.existingSecret=tok,replicaCount=${replicas},stateKeys.existingSecret=keys`,
          ]);
          if (confirms) {
            assert.notEqual(r.code, 0, `${what}: rendered a pod weir refuses to start`);
            assert.match(
              r.stderr,
              /stateKeys.existingSecret with a guardfile that confirms a tool needs redis.url or redis.existingSecret/,
              what,
            );
            continue;
          }
          assert.equal(r.code, 0, `${what}: ${r.stderr}`);
          const [c] = one(r.objects, "Deployment").spec.template.spec.containers;
          const pod = await runPod(c.args, { "rel.mcp.kdl": `${head}${body}` }, podEnv(c, secrets));
          await pod.stop();
        }
      } finally {
        await Deno.remove(file);
      }
    }
  },
});

Deno.test({
  name: `chart: values that make an unsafe deployment fail the render and say why${skip}`,
  ignore: !HELM,
  fn: async () => {
    const base = "inboundAuth.existingSecret=tok,replicaCount=3,stateKeys.existingSecret=keys";
    const cases: [string, RegExp][] = [
      [
        "podDisruptionBudget.maxUnavailable=0",
        /podDisruptionBudget.maxUnavailable 0 lets no pod be evicted: node drains and cluster upgrades would wait forever/,
      ],
      [
        "podDisruptionBudget.maxUnavailable=0%",
        /podDisruptionBudget.maxUnavailable 0% lets no pod be evicted/,
      ],
      [
        "podDisruptionBudget.maxUnavailable=3",
        /podDisruptionBudget.maxUnavailable 3 lets all 3 replicas be evicted at once/,
      ],
      [
        "shutdown.preStopSeconds=0,shutdown.graceSeconds=0",
        /replicaCount 3 with shutdown.preStopSeconds and shutdown.graceSeconds both 0: a pod stops taking connections while the Service still sends it some/,
      ],
      [
        "redis.url=redis://:hunter2@redis:6379",
        /redis.url carries a password, which would be written into the Deployment: put the URL in a Secret and set redis.existingSecret/,
      ],
      [
        "redis.url=rediss://weir:hunter2@redis:6379/0",
        /redis.url carries a password/,
      ],
      ["replicaCount=2.5", /replicaCount must be a whole number \(1 or more\), not 2.5/],
    ];
    for (const [values, message] of cases) {
      const r = await render([
        "--set-file",
        `guardfile=${GUARDFILE}`,
        "--set",
        `${base},${values}`,
      ]);
      assert.notEqual(r.code, 0, values);
      assert.match(r.stderr, message, values);
      assert.ok(!r.stderr.includes("hunter2"), "the password is not repeated");
    }
    // What stays allowed: a percentage, a redis URL without a password, a grace without preStop.
    for (
      const values of [
        "podDisruptionBudget.maxUnavailable=34%",
        "podDisruptionBudget.maxUnavailable=2",
        "redis.url=redis://redis:6379",
        "redis.url=redis://weir@redis:6379",
        "shutdown.preStopSeconds=0",
      ]
    ) {
      const r = await render([
        "--set-file",
        `guardfile=${GUARDFILE}`,
        "--set",
        `${base},${values}`,
      ]);
      assert.equal(r.code, 0, `${values}: ${r.stderr}`);
    }
  },
});

Deno.test({
  name:
    `chart: a guardfile that starts a stdio MCP server is refused at render, saying why and what instead; kubeVersion stated${skip}`,
  ignore: !HELM,
  fn: async () => {
    const everything = await Deno.readTextFile(`${ROOT}guardfiles/everything.mcp.kdl`);
    const stdioForms = [
      everything,
      `wrap ward mcp x { mcp-server stdio "uvx" "some-server"; proxy add; }\n`,
      `wrap ward mcp x {\n  "mcp-server" "stdio" "node" "server.js" {\n  }\n  proxy add\n}\n`,
      `wrap ward mcp x {\n  /* local */ mcp-server #"stdio"# "python3" "-m" "srv"\n  proxy add\n}\n`,
      // KDL lets a line continuation or a block comment sit between a node's name and its value.
      `wrap ward mcp x {\n  mcp-server \\\n    stdio "npx" "-y" "srv"\n  proxy add\n}\n`,
      `wrap ward mcp x {\n  mcp-server \\ // the local one\n    stdio "npx"\n  proxy add\n}\n`,
      `wrap ward mcp x {\n  mcp-server /* a\n  b */ "stdio" "npx"\n  proxy add\n}\n`,
    ];
    /** Render `text` as the guardfile with `sets` (comma-separated `--set` values). */
    const renderGuardfile = async (text: string, sets: string) => {
      const file = await tempGuardfile(text);
      try {
        return await render(["--set-file", `guardfile=${file}`, "--set", sets]);
      } finally {
        await Deno.remove(file);
      }
    };
    for (const text of stdioForms) {
      const r = await renderGuardfile(text, "inboundAuth.existingSecret=tok");
      assert.notEqual(r.code, 0, `rendered a pod that would crash-loop:\n${text}`);
      assert.match(
        r.stderr,
        /the guardfile wraps an MCP server over stdio \(\S*mcp-server\S* (.* )?\S*stdio/,
      );
      assert.match(r.stderr, /the image cannot run it: it holds only the weir binary/);
      assert.match(r.stderr, /Wrap the server over HTTP instead \(mcp-server http/);
      assert.match(r.stderr, /set image\.carriesStdioCommand=true/);
      const own = await renderGuardfile(
        text,
        "inboundAuth.existingSecret=tok,image.carriesStdioCommand=true," +
          "image.repository=example.com/weir-with-node",
      );
      assert.equal(own.code, 0, own.stderr);
    }
    // Over HTTP (the same server, or a slashdashed stdio node beside it) renders.
    for (
      const text of [
        await Deno.readTextFile(`${ROOT}guardfiles/github-mcp.mcp.kdl`),
        `wrap ward mcp x {\n  /-mcp-server stdio "npx" "x"\n  mcp-server http "https://mcp.example/mcp"\n  proxy add\n}\n`,
        `wrap ward mcp x {\n  mcp-server /* not stdio */ \\\n    http "https://mcp.example/mcp"\n  proxy add\n}\n`,
      ]
    ) {
      const r = await renderGuardfile(text, "inboundAuth.existingSecret=tok");
      assert.equal(r.code, 0, `${r.stderr}\n${text}`);
    }
    // preStop.sleep needs Kubernetes 1.30: the chart says so, and helm refuses an older cluster.
    const chart = parse(await Deno.readTextFile(`${CHART}/Chart.yaml`)) as { kubeVersion?: string };
    assert.equal(chart.kubeVersion, ">=1.30.0-0");
    const old = await render([
      "--kube-version",
      "1.29.0",
      "--set-file",
      `guardfile=${ROOT}guardfiles/demo.mcp.kdl`,
      "--set",
      "inboundAuth.existingSecret=tok",
    ]);
    assert.notEqual(old.code, 0);
    assert.match(old.stderr, /chart requires kubeVersion: >=1.30.0-0/);
  },
});

Deno.test({
  name:
    `chart: a rate-limit store whose URL variable the release does not set is refused at render (weir would not start)${skip}`,
  ignore: !HELM,
  fn: async () => {
    const stored = (env: string, store = `store redis env "${env}"`) =>
      `rate-limit "60/1m" {\n  ${store}\n}\nwrap ward mcp t {\n  base-url "https://api.example.com"\n` +
      `  auth none\n  can get thing { path "/things/{id}" }\n}\n`;
    const cases: [string, string, RegExp | null][] = [
      [
        stored("REDIS_URL"),
        "",
        /rate-limit store reads its URL from REDIS_URL, which this release does not set.*set redis.existingSecret \(or redis.url\) with redis.env=REDIS_URL, or secret.REDIS_URL/,
      ],
      [stored("REDIS_URL", `"store" "redis" env "REDIS_URL"`), "", /reads its URL from REDIS_URL/],
      [stored("REDIS_URL"), ",redis.existingSecret=r", null],
      [stored("CACHE_URL"), ",redis.existingSecret=r", /reads its URL from CACHE_URL/],
      [stored("CACHE_URL"), ",redis.existingSecret=r,redis.env=CACHE_URL", null],
      [stored("REDIS_URL"), ",secret.REDIS_URL.secretName=s,secret.REDIS_URL.key=k", null],
      [
        stored("REDIS_URL"),
        ",secret.REDIS_URL.secretName=s,secret.REDIS_URL.key=k,runtime.injectSecrets=false",
        /reads its URL from REDIS_URL/,
      ],
      [stored("REDIS_URL"), ",extraEnv[0].name=REDIS_URL,extraEnv[0].value=redis://r:6379", null],
      [stored("REDIS_URL", `// store redis env "REDIS_URL"`).replace("{\n  //", "{ //"), "", null],
    ];
    for (const [text, sets, refused] of cases) {
      const file = await tempGuardfile(text);
      try {
        const r = await render([
          "--set-file",
          `guardfile=${file}`,
          "--set",
          `inboundAuth.existingSecret=tok${sets}`,
        ]);
        if (refused) {
          assert.notEqual(r.code, 0, `${sets}: rendered a pod weir refuses to start`);
          assert.match(r.stderr, refused);
        } else {
          assert.equal(r.code, 0, `${sets}: ${r.stderr}`);
        }
      } finally {
        await Deno.remove(file);
      }
    }
  },
});
