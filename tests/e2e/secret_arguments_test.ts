/**
 * Secrets in arguments (stage (a) of the control pipeline, issue 35 item 1):
 * an argument that holds a secret weir itself holds for the call (the
 * upstream credential, a secret pin, an `mcp-server` header secret, a secret
 * argument pin, the database password, the AWS secret key), in any form an
 * echo might use, is refused (403 `policy_denied`, audit rule
 * `secret_argument`) before anything is sent, no person is asked and no slot
 * is spent; the refusal names the argument, never the value, and no log line
 * holds it. Through the shipped CLI: `weir serve` of a spec-mode file (the
 * tool API, the v2 client pinned to 2026-07-28 over HTTP, the v1 client on
 * 2025-11-25 over stdio), `weir serve-upstream --upstream-header`, the
 * guardfile `mcp-server` form, a sql grant, and `weir serve-s3`. The forms
 * come from tests/support/secret_echoes.ts, written apart from the redactor.
 */
import assert from "node:assert/strict";
import { StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { callApi, serveHttp, tempGuardfile } from "../support/cli.ts";
import { startRecorder } from "../support/upstream.ts";
import { startSdkUpstream } from "../support/sdk_upstream.ts";
import { startWrapper } from "../support/upstream_cli.ts";
import { base64Holds, secretEchoes } from "../support/secret_echoes.ts";
import { confirmingClientV2, serveConfirming } from "../support/elicit.ts";
import { awsEnv, CREDENTIALS, startS3 } from "../support/aws.ts";

const TOKEN = "tk-upstream-4c8e2a9f1b7d";
const PIN = "pin-secret-7a1d9e3c5b";
const ENV = { SA_TOKEN: TOKEN, SA_PIN: PIN };

/** No form of any of `secrets` in `text` (what weir answered or logged). */
function assertNothingOf(secrets: string[], text: string, what: string): void {
  for (const secret of secrets) {
    for (const [form, echo] of Object.entries(secretEchoes(secret))) {
      assert.ok(!text.includes(echo), `${what} holds the secret (${form})`);
    }
    assert.ok(!base64Holds(text, secret), `${what} holds the secret in base64`);
  }
}

/** The refusal every case must come to, naming `where` and nothing of the value. */
function assertRefused(answer: { status: number; text: string }, where: string): void {
  assert.equal(answer.status, 403, answer.text);
  assert.match(answer.text, /^policy_denied: /);
  assert.ok(answer.text.includes(where), `names ${where}: ${answer.text}`);
  assert.match(answer.text, /nothing was sent/);
}

const SPEC_FILE = (upstream: string) =>
  `confirm "comment_issue" message="Post this comment?"
rate-limit "100/1h"
pin "get_issue" { query "account" env "SA_PIN" secret=#true; }
wrap ward mcp tickets {
    base-url "${upstream}"
    auth bearer {
        value env "SA_TOKEN"
    }
    can comment issue {
        path "/repos/{owner}/{repo}/issues/{n}/comments"
        body {
            field "body" type="string" required=#true
            array "labels" items="string"
        }
    }
    can get pair {
        path "/pairs/{a}-{b}"
    }
    can get issue {
        path "/repos/{owner}/{repo}/issues/{n}"
        query {
            field "q" type="string"
            field "page" type="integer"
        }
    }
}
`;

Deno.test("spec mode: an argument holding the credential or a secret pin, in any form, is refused before anything is sent", async (t) => {
  const upstream = await startRecorder(() => Response.json({ ok: true }));
  const file = await tempGuardfile(SPEC_FILE(upstream.url));
  const weir = await serveHttp(file, { env: ENV });
  const where = { owner: "acme", repo: "site", n: "7" };
  let refusals = 0;
  try {
    await t.step(
      "every echo form of the credential, in a gated tool's body (no person asked)",
      async () => {
        for (const [form, echo] of Object.entries(secretEchoes(TOKEN))) {
          const answer = await callApi(weir.url, "comment_issue", {
            ...where,
            body: `see ${echo}`,
          });
          assertRefused(answer, 'argument "body" of "comment_issue"');
          assertNothingOf([TOKEN, PIN], JSON.stringify(answer.body), `the answer to ${form}`);
          refusals++;
        }
      },
    );
    await t.step("the secret pin, in a query input, a path value and an array item", async () => {
      for (
        const [tool, args, at] of [
          ["get_issue", { ...where, q: PIN }, 'argument "q"'],
          ["get_issue", { ...where, q: btoa(`user:${PIN}`) }, 'argument "q"'],
          ["get_issue", { ...where, repo: encodeURIComponent(PIN) }, 'argument "repo"'],
          [
            "comment_issue",
            // A case-changed pin is another value: only the credential at /2 is refused.
            { ...where, body: "hi", labels: ["ok", PIN.toUpperCase(), TOKEN] },
            'argument "labels" at /2',
          ],
        ] as const
      ) {
        const answer = await callApi(weir.url, tool, args);
        assertRefused(answer, at);
        assertNothingOf([TOKEN, PIN], JSON.stringify(answer.body), at);
        refusals++;
      }
    });
    await t.step("two path values that spell the credential only side by side", async () => {
      const at = TOKEN.indexOf("-");
      const answer = await callApi(weir.url, "get_pair", {
        a: TOKEN.slice(0, at),
        b: TOKEN.slice(at + 1),
      });
      assertRefused(answer, 'the path of "get_pair" (its path values in place) holds a secret');
      refusals++;
    });
    await t.step(
      "a value that is not the secret passes, with weir's own secrets sent as set",
      async () => {
        const ok = await callApi(weir.url, "get_issue", {
          ...where,
          q: TOKEN.slice(0, 12),
          page: 2,
        });
        assert.equal(ok.status, 200, ok.text);
        assert.equal(upstream.requests.length, 1, "only the well-formed call reached the upstream");
        assert.equal(upstream.requests[0].headers.get("authorization"), `Bearer ${TOKEN}`);
        assert.match(upstream.requests[0].query, new RegExp(`account=${PIN}`));
      },
    );
  } finally {
    assert.equal(await weir.stop(), 0);
    await upstream.close();
  }
  const log = weir.stderr();
  assert.equal(log.match(/"rule":"secret_argument"/g)?.length, refusals, log);
  assertNothingOf([TOKEN, PIN], log, "the log");
});

/** Call `comment_issue` holding the credential with an official client that accepts any question. */
async function officialRefusal(
  revision: "2026-07-28" | "2025-11-25",
  file: string,
): Promise<{ text: string; asked: number }> {
  const { client, answer, close } = await serveConfirming(revision, file, ENV);
  try {
    const result = await client.callTool({
      name: "comment_issue",
      arguments: { owner: "acme", repo: "site", n: "7", body: `token=${TOKEN}` },
    }) as { isError?: boolean; content: { text: string }[] };
    assert.equal(result.isError, true);
    return { text: result.content[0].text, asked: answer.asked.length };
  } finally {
    await close();
  }
}

for (const revision of ["2026-07-28", "2025-11-25"] as const) {
  Deno.test(`spec mode (${revision}, official client): refused at (a), no person asked`, async () => {
    const upstream = await startRecorder();
    const file = await tempGuardfile(SPEC_FILE(upstream.url));
    try {
      const { text, asked } = await officialRefusal(revision, file);
      assert.match(text, /^policy_denied: argument "body" of "comment_issue" holds a secret/);
      assertNothingOf([TOKEN], text, "the refusal");
      assert.equal(asked, 0, "no person was asked");
      assert.equal(upstream.requests.length, 0);
    } finally {
      await upstream.close();
    }
  });
}

const POST_TOOL = {
  name: "post",
  description: "Posts a note.",
  inputSchema: {
    type: "object",
    properties: { account: { type: "string" }, note: { type: "string" } },
  },
};

Deno.test("serve-upstream --upstream-header and the mcp-server form: a header secret or a secret pin in an argument is refused", async (t) => {
  const HEADER = "hdr-secret-2b7e9c4a1f";
  const ACCOUNT = "acct-secret-8d3f1a6c0e";
  for (const revision of ["2025-11-25", "2026-07-28"] as const) {
    const up = await startSdkUpstream({ revision, framing: "json", tools: [POST_TOOL] });
    try {
      await t.step(`serve-upstream flags (${revision})`, async () => {
        const weir = await startWrapper(
          [
            "--upstream",
            up.url,
            "--tool",
            "post",
            "--upstream-header",
            "Authorization=Bearer {env:SA_HEADER}",
          ],
          { env: { SA_HEADER: HEADER } },
        );
        try {
          for (const note of [HEADER, `x ${btoa(HEADER)}`, encodeURIComponent(`a&${HEADER}`)]) {
            assertRefused(await callApi(weir.url, "post", { note }), 'argument "note" of "post"');
          }
          const nested = await callApi(weir.url, "post", { note: "hi", extra: { [HEADER]: 1 } });
          assertRefused(nested, 'argument "extra" at /[redacted]');
          assertNothingOf([HEADER], nested.text, "the refusal");
          assert.equal(up.calls().length, 0, "nothing reached the MCP server");
          assert.equal((await callApi(weir.url, "post", { note: "hi" })).status, 200);
          assert.equal(up.calls().length, 1);
        } finally {
          await weir.stop();
        }
        assertNothingOf([HEADER], weir.stderr(), "the log");
      });
      await t.step(`the guardfile mcp-server form with a secret pin (${revision})`, async () => {
        const file = await tempGuardfile(`confirm "post" message="Post it?"
pin "post" { argument "account" env "SA_ACCOUNT" secret=#true; }
wrap ward mcp notes {
    mcp-server http "${up.url}" {
        header "Authorization" {
            prefix "Bearer "
            value env "SA_HEADER"
        }
    }
    proxy post
}
`);
        const weir = await serveHttp(file, { env: { SA_HEADER: HEADER, SA_ACCOUNT: ACCOUNT } });
        const { client, answer } = confirmingClientV2("secret-args", "accept");
        try {
          await client.connect(new HttpV2(new URL(`${weir.url}/mcp`)));
          for (
            const note of [ACCOUNT, HEADER.replace(/-/g, "%2D"), secretEchoes(HEADER)["hex upper"]]
          ) {
            const result = await client.callTool({ name: "post", arguments: { note } }) as {
              isError?: boolean;
              content: { text: string }[];
            };
            assert.equal(result.isError, true, note);
            assert.match(result.content[0].text, /argument "note" of "post" holds a secret/);
            assertNothingOf([HEADER, ACCOUNT], result.content[0].text, "the refusal");
          }
          assert.equal(answer.asked.length, 0, "no person was asked");
          assert.equal(up.calls().length, 1, "nothing more reached the MCP server");
        } finally {
          await client.close();
          await weir.stop();
        }
        assertNothingOf([HEADER, ACCOUNT], weir.stderr(), "the log");
      });
    } finally {
      await up.stop();
    }
  }
});

const DB_PASSWORD = "db-pass-6e2c8a0f4b";

/**
 * `weir serve` of a gated sql grant whose DSN is read from a file at each call
 * (nothing listens on its port 9: a call that reached the database would fail
 * as unavailable), and the v2 client accepting every question.
 */
async function withSqlGrant(
  body: (
    call: (note: string) => Promise<{ isError?: boolean; content: { text: string }[] }>,
    asked: () => number,
    dsnFile: string,
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "weir-secret-args-" });
  const dsnFile = `${dir}/dsn`;
  await Deno.writeTextFile(dsnFile, `postgres://app:${DB_PASSWORD}@127.0.0.1:9/shop`);
  const file = await tempGuardfile(`confirm "create_order" message="Create it?"
wrap ward mcp shop {
    database pgx { value file "${dsnFile}" }
    can create order {
        sql {
            statement "INSERT INTO orders (note) VALUES ($1)"
            param "note" type="string" required=#true
        }
    }
}
`);
  const weir = await serveHttp(file);
  const { client, answer } = confirmingClientV2("secret-args", "accept");
  try {
    await client.connect(new HttpV2(new URL(`${weir.url}/mcp`)));
    await body(
      (note) =>
        client.callTool({ name: "create_order", arguments: { note } }) as Promise<{
          isError?: boolean;
          content: { text: string }[];
        }>,
      () => answer.asked.length,
      dsnFile,
    );
  } finally {
    await client.close();
    await weir.stop();
    await Deno.remove(dir, { recursive: true });
  }
  assertNothingOf([DB_PASSWORD], weir.stderr(), "the log");
}

Deno.test("a sql grant: the database password in an argument is refused before any connection, no person asked", async () => {
  await withSqlGrant(async (call, asked) => {
    for (const note of [DB_PASSWORD, `pw=${encodeURIComponent(DB_PASSWORD)}`]) {
      const refused = await call(note);
      assert.equal(refused.isError, true);
      assert.match(refused.content[0].text, /argument "note" of "create_order" holds a secret/);
      assertNothingOf([DB_PASSWORD], refused.content[0].text, "the refusal");
    }
    assert.equal(asked(), 0, "no person was asked");
  });
});

Deno.test("a sql grant whose DSN turned bad is refused before a person is asked (stage (a), not (e))", async () => {
  await withSqlGrant(async (call, asked, dsnFile) => {
    await Deno.writeTextFile(dsnFile, "not a url");
    const bad = await call("a note");
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /^dsn_invalid: /);
    await Deno.remove(dsnFile);
    const gone = await call("a note");
    assert.match(gone.content[0].text, /^dsn_missing: /);
    assert.equal(asked(), 0, "no person was asked for a call that could not run");
  });
});

Deno.test("serve-s3: the AWS secret key or session token in a key or in the bytes is refused; nothing lands", async () => {
  const BUCKET = "weir-secret-args";
  const s3 = await startS3([BUCKET]);
  const file = await tempGuardfile(`wrap ward mcp aws s3 {
    region "us-east-1"
    bucket "${BUCKET}"
    base-url "https://files.example.com"
    prefix "charts"
    max-bytes 65536
    content-type "application/json"
    can put object
    can list objects
}
`);
  const weir = await serveHttp(file, {
    command: "serve-s3",
    env: awsEnv({ AWS_ENDPOINT_URL_S3: s3.url }),
  });
  const base64 = (text: string) => new TextEncoder().encode(text).toBase64();
  const { secretAccessKey, sessionToken } = CREDENTIALS;
  /** A JSON text spelling every character of `secret` as a `\uXXXX` escape. */
  const escaped = (secret: string) =>
    `{"t":"${
      [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")
    }"}`;
  const put = (key: string, text: string) => ({
    key,
    content_type: "application/json",
    content_base64: base64(text),
  });
  try {
    for (
      const [tool, args, at] of [
        ["put_object", put(`${secretAccessKey}.json`, "1"), 'argument "key"'],
        [
          "put_object",
          put("a.json", JSON.stringify({ k: secretAccessKey })),
          'argument "content_base64"',
        ],
        ["put_object", put("b.json", escaped(sessionToken)), 'argument "content_base64" (decoded)'],
        [
          "put_object",
          put("c.json", `{"h":"${secretEchoes(sessionToken).hex}"}`),
          'argument "content_base64" (decoded)',
        ],
        ["list_objects", { prefix: secretAccessKey }, 'argument "prefix"'],
      ] as const
    ) {
      const answer = await callApi(weir.url, tool, args);
      assertRefused(answer, at);
      assertNothingOf([secretAccessKey, sessionToken], JSON.stringify(answer.body), at);
    }
    assert.deepEqual(await s3.keys(BUCKET), [], "nothing landed");
    assert.equal(s3.requests.length, 0, "nothing was sent to S3");
    const ok = await callApi(weir.url, "put_object", {
      key: "ok.json",
      content_type: "application/json",
      content_base64: base64(JSON.stringify({ fine: true })),
    });
    assert.equal(ok.status, 200, ok.text);
  } finally {
    await weir.stop();
    await s3.close();
  }
  assertNothingOf(
    [CREDENTIALS.secretAccessKey, CREDENTIALS.sessionToken],
    weir.stderr(),
    "the log",
  );
});

Deno.test("the mcp-server form: a secret pin the MCP server types as a number is redacted from answers and refused in arguments", async () => {
  const ACCOUNT = 40917263581;
  const up = await startSdkUpstream({
    revision: "2026-07-28",
    framing: "json",
    tools: [{
      name: "bill",
      description: "Bills an account.",
      inputSchema: {
        type: "object",
        properties: { account: { type: "integer" }, note: {} },
      },
    }],
    onCall: ({ arguments: args }) => ({
      content: [{
        type: "text",
        text: `billed ${args?.account} for ${JSON.stringify(args?.note)}`,
      }],
    }),
  });
  const file = await tempGuardfile(`pin "bill" { argument "account" env "SA_ACCOUNT" secret=#true; }
wrap ward mcp billing {
    mcp-server http "${up.url}"
    proxy bill
}
`);
  const weir = await serveHttp(file, { env: { SA_ACCOUNT: String(ACCOUNT) } });
  try {
    const ok = await callApi(weir.url, "bill", { note: "march" });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.text, 'billed [redacted] for "march"');
    for (const note of [ACCOUNT, String(ACCOUNT), { n: [ACCOUNT] }]) {
      const refused = await callApi(weir.url, "bill", { note });
      assertRefused(refused, 'argument "note"');
      assert.ok(!JSON.stringify(refused.body).includes(String(ACCOUNT)));
    }
    assert.equal(up.calls().length, 1, "only the first call reached the MCP server");
  } finally {
    await weir.stop();
    await up.stop();
  }
});

Deno.test("a call refused at (a) sends nothing upstream, not even the tools/list that re-verifies (serve-upstream --max-staleness 0)", async () => {
  const HEADER = "hdr-secret-2b7e9c4a1f";
  const up = await startSdkUpstream({
    revision: "2025-11-25",
    framing: "json",
    tools: [POST_TOOL],
  });
  const weir = await startWrapper(
    [
      "--upstream",
      up.url,
      "--tool",
      "post",
      "--pin",
      "post.account=acme",
      "--max-staleness",
      "0",
      "--upstream-header",
      "Authorization=Bearer {env:SA_HEADER}",
    ],
    { env: { SA_HEADER: HEADER } },
  );
  const lists = () => up.bodies.filter((b) => JSON.parse(b).method === "tools/list").length;
  try {
    const before = lists();
    for (
      const args of [
        { note: HEADER },
        { account: "other" },
        { Account: "acme" },
      ]
    ) {
      const refused = await callApi(weir.url, "post", args);
      assert.equal(refused.status, 403, refused.text);
    }
    assert.equal(lists(), before, "no tools/list for a refused call");
    assert.equal(up.calls().length, 0);
    assert.equal((await callApi(weir.url, "post", { note: "hi" })).status, 200);
    assert.equal(lists(), before + 1, "a well-formed call re-verifies first (max-staleness 0)");
  } finally {
    await weir.stop();
    await up.stop();
  }
});
