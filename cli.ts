#!/usr/bin/env -S deno run --allow-net --allow-env --allow-read --allow-run
/**
 * The `weir` command line: lint a guardfile, serve it over stdio or HTTP,
 * describe its surface, or run the demo.
 *
 * Each command lives in its own module, imported only when that command runs
 * (and by a specifier Deno cannot follow before it runs, so no command's
 * start walks another's modules): `weir help` and `weir --version` load no
 * guardfile parser, `weir serve` loads nothing that only lint or the demo
 * use. To add a command, add one entry to {@linkcode COMMANDS} (summary, help
 * text opening with its usage, and a `run` that loads its module), its module
 * to {@linkcode COMMAND_MODULES}, and write the module,
 * usually `src/cli/<name>.ts` exporting `run(args): Promise<number>` that
 * throws `UsageError` for a bad command line.
 *
 * Exit codes: 0 success; 1 a guardfile has errors, cannot be read, or serving
 * failed; 2 the command line itself is wrong (unknown command or flag, missing
 * argument) or a start-up setting it names is (an unset or too-short variable).
 * docs/cli.md "Exit codes" has the table.
 *
 * @example Run a command in-process (what `weir --version` does)
 * ```ts
 * import { main } from "@weir/weir/cli";
 *
 * const code = await main(["--version"]); // prints "weir <version>", the commit, Deno's version
 * if (code !== 0) throw new Error(`exit ${code}`);
 * ```
 *
 * @module
 */
import config from "./deno.json" with { type: "json" };
import { UsageError, usageLine } from "./src/cli/usage_error.ts";
import { importModule, loadModulesBeside, UnreadableModuleError } from "./src/ops/lazy.ts";

// Commands, modes' modules and workers load from beside this file, with its extension: the
// sources from a checkout or JSR, the bundle's own files in the bundle (`cli.js`).
loadModulesBeside(import.meta.url);

/** weir's version, as published: the `version` field of deno.json. */
export const VERSION: string = config.version;

/** One command: what `weir help` shows and how to run it. */
interface Command {
  /** What the command does, for `weir help` (wrapped lines, no indentation). */
  summary: string;
  /**
   * `weir help NAME` and `weir NAME --help`. Its first paragraph ("Usage: weir NAME ...")
   * is also the command's synopsis in `weir help`, so the two cannot disagree.
   */
  help: string;
  /** Import the command's module and run it; throws `UsageError` for a bad command line. */
  run: (args: string[]) => Promise<number>;
}

/**
 * Each command's module, relative to this file, and the function it runs
 * (`run(args)` unless named). The bundle holds each as its own entry and
 * `deno compile` embeds them (`INCLUDE` in scripts/build.ts), since neither can
 * follow {@linkcode load}'s imports; tests/release/build_definition_test.ts
 * holds the table to the modules.
 */
export const COMMAND_MODULES: Readonly<Record<string, string>> = {
  lint: "./src/cli/lint.ts",
  serve: "./src/cli/serve.ts",
  describe: "./src/cli/describe.ts",
  scaffold: "./src/cli/scaffold.ts",
  diff: "./src/cli/diff.ts",
  verify: "./src/cli/verify.ts",
  "serve-upstream": "./src/modes/serve_upstream.ts#serveUpstreamMain",
  "lint-upstream": "./src/modes/lint_upstream.ts#lintUpstreamMain",
  healthcheck: "./src/cli/healthcheck.ts",
  demo: "./src/cli/demo.ts",
};

/** A command module's entry point: the arguments after the command's name, the exit code. */
type Entry = (args: string[], mode?: "ssm" | "s3") => Promise<number>;

/**
 * Import a command's module when the command runs and return its entry point.
 * The specifier is not a string literal, so Deno does not walk every
 * command's module graph before any command starts (a literal `import()` is
 * part of the start-up graph: about 13 ms of every start; bench/README.md,
 * "Cold start"), and a command walks only its own. Run from source files,
 * such an import needs read permission for them, which every command but
 * `--version` and `help` has anyway (a guardfile, a value file); from JSR it
 * is an import of jsr.io.
 */
async function load(name: string): Promise<Entry> {
  const [path, entry = "run"] = COMMAND_MODULES[name].split("#");
  const module = await importModule<Record<string, Entry>>(path);
  return module[entry];
}

const COMMANDS: Record<string, Command> = {
  lint: {
    summary: `Check guardfiles with the same loader as serve (no network, no secrets).
Prints the served tool names, one per line, and the surface's size in tokens;
errors go to stderr with file:line:column, and the exit code is 1.`,
    help: `Usage: weir lint [--methods] [--format text|json] [--max-tokens N] [--max-tool-tokens N]
                 [--read-only] [--schema-profile NAME] FILE...

Loads each guardfile exactly as serve would, without listening or reading secrets,
and measures what it would list: tools, o200k tokens in all and per tool, the
largest tools (stderr: "weir: FILE: surface: ..."; JSON: each file's "size").

  --methods             Print "name<TAB>METHOD" (WITHHELD for withheld stubs, - for the
                        info tool).
  --format json         One JSON document on stdout: {"ok": bool, "files": [...]}, each file
                        with its tools, size and diagnostics (line, column, node path, message).
  --max-tokens N        Fail when all listed tools together take more than N tokens.
  --max-tool-tokens N   Fail when any one listed tool takes more than N tokens.
                        Both override the guardfile's surface max-tokens= / max-tool-tokens=.
  --read-only, --schema-profile NAME
                        Measure the surface as serve would list it with these flags.

With several files, each text line starts with the file path and a TAB.
Every finding is reported at once, errors first, then warnings (e.g. a verb that fell
through to POST), even in a file that has errors. Warnings go to stderr and never change
stdout or the exit code. Exit 1 when any file has an error, cannot be read, or is over a
budget (the message names the largest tools).`,
    run: async (args) => (await load("lint"))(args),
  },
  serve: {
    summary: `Serve a guardfile as an MCP server over stdio or stateless Streamable HTTP
(MCP at POST /mcp, the tool API at POST /api/<tool>, GET /healthz, GET /readyz).
An AWS policy (wrap ward mcp aws ssm|s3) is served as that mode.`,
    help: `Usage: weir serve FILE (--stdio | --http [HOST:]PORT) [options]

  --stdio                    Newline-delimited JSON-RPC on stdin/stdout (logs on stderr).
  --http [HOST:]PORT         Listen for HTTP. HOST defaults to 127.0.0.1; PORT 0 picks one.
                             Routes: POST /mcp, POST /api/<tool>, GET /healthz (liveness),
                             GET /readyz (readiness: 503 once shutdown begins).
  --allow-origin ORIGIN      A browser origin allowed to call, answered with CORS headers
                             (repeatable). By default only the server's own origin.
  --allow-host HOST[:PORT]   Also answer requests naming this Host (repeatable), e.g. behind
                             a Host-preserving reverse proxy. On loopback, only loopback
                             Host names are answered by default (DNS rebinding protection).
  --inbound-token-env VAR    Require "Authorization: Bearer <token>" on /mcp and /api, the
                             token one of those in VAR (comma- or space-separated, for
                             rotation; each at least 16 characters; compared in constant
                             time). Required to listen beyond loopback.
  --tool-token-env VAR:TOOL[,TOOL...]
                             Also accept the tokens in VAR, limited to these served tools:
                             tools/list, tools/call and /api/<tool> show and run only them
                             (repeatable, one variable each; the guardfile may say the same
                             with inbound-token nodes). Lists then depend on the caller and
                             are marked cacheScope "private". Not with OAuth.
  --no-inbound-auth          Listen beyond loopback without inbound authentication (only
                             behind a proxy that authenticates every caller).
  --admin-token-env VAR      Enable POST /admin/reload and GET /admin/describe, each needing
                             a token from VAR (its own variable, never the inbound one).
  --oauth-issuer URL         Serve as an OAuth 2.1 resource server (MCP authorization spec)
                             for access tokens from this authorization server; its metadata
                             is read at start-up (RFC 8414 / OpenID discovery). Needs
                             --oauth-resource; not with --inbound-token-env or --stdio.
  --oauth-resource URL       This server's canonical URI, e.g. https://mcp.example.com/mcp:
                             the audience tokens must carry (RFC 8707). Grants' "scope"
                             values are then enforced and filter tools/list. The guardfile
                             may say the same: oauth issuer="URL" resource="URL" (flags win).
  --oauth-introspection-client-id ID, --oauth-introspection-secret-env VAR
                             Also accept opaque tokens, asking the issuer's RFC 7662
                             introspection endpoint with these client credentials.
  --oauth-profile NAME       The identity provider's ways: generic (default), entra, okta,
                             auth0 or keycloak (which issuers, audiences and scope claims
                             pass; how a token exchange is asked). docs/oauth.md.
  --oauth-audience AUD       The provider's own audience for this server (Entra's api://<GUID>,
                             Okta's authorization server audience, Auth0's API identifier, a
                             Keycloak client), accepted beside --oauth-resource.
  --upstream-timeout MS      Abandon an upstream call after MS milliseconds (default 30000;
                             0 disables).
  --max-response-bytes N     Refuse upstream answers larger than N bytes (default 8388608).
  --read-only                Serve only what changes nothing (GET and HEAD grants, sql reads;
                             S3 reads; a wrapped MCP server's tools saying readOnlyHint: true);
                             every other tool is listed as a withheld stub saying "read-only
                             mode". The guardfile may say surface read-only=#true.
  --max-staleness DURATION   A guardfile wrapping an MCP server: never forward a call on a
                             verification of its definitions older than this (default 5s;
                             0: list its tools before every call). The mcp-server block may
                             say max-staleness "5s" (the flag wins).
  --schema-profile NAME      The JSON Schema dialect tools are listed in: full (default, JSON
                             Schema 2020-12), gemini (one type per schema, no unions, bounds
                             and patterns in words) or openai-strict (every input required,
                             optional ones nullable, objects closed). Arguments are checked
                             against the full schema whatever the profile. The guardfile may
                             say surface schema-profile="NAME" (the flag wins).
  --log-level LEVEL          debug, info (default), warn or error; else WEIR_LOG_LEVEL.
                             One JSON object per line on stderr: an audit line per call
                             (tool, outcome, status, duration) and per refusal (its rule).
  --drain-timeout MS         On SIGTERM/SIGINT (or end of stdin): stop taking requests, let
                             calls in flight finish for up to MS milliseconds (default
                             10000), cancel the rest with a shutting_down tool error, log
                             one "shutdown" line, exit 0.
  --body-timeout MS          A request body must arrive within MS milliseconds (default
                             15000; 0 disables): slower is 408 and the connection dropped.
  --max-concurrent N         Requests handled at once over HTTP (default 1024; 0 disables):
                             past it, 503 with Retry-After: 1.
  --shutdown-grace MS        On SIGTERM/SIGINT over HTTP, first answer GET /readyz with 503
                             and keep serving everything for MS milliseconds (default 0) so
                             load balancers stop routing here; then drain.
  --state-keys-env VAR       Sign cursors and confirmations (requestState) with the keys in
                             VAR (comma-, space- or newline-separated, newest first: the
                             first signs, all verify; each at least 32 characters, e.g.
                             openssl rand -base64 48). Give every replica the same keys.
                             Without it (or --state-keys-file), a random per-process key.
  --state-keys-file PATH     The same, from a file (e.g. a mounted Secret).
  --state-store-env VAR      Record answered confirmations in the Redis at the URL in VAR,
                             so each runs once across replicas (default: the guardfile's
                             rate-limit store, if any). Needed with state keys when the
                             guardfile confirms a tool; unreachable refuses gated calls.

Upstream requests use weir's own HTTP/1.1 client with kept-alive connections. With
HTTP_PROXY, HTTPS_PROXY or ALL_PROXY set they go through fetch and that proxy instead
(NO_PROXY honoured); WEIR_UPSTREAM_CLIENT=fetch|http1 chooses without a proxy. A proxy
variable that is not a proxy URL stops serve at start (exit 2) rather than going direct.

SIGHUP re-reads FILE, lints it as "weir lint" does, and swaps the served surface only
when it has no error (calls in flight finish on the old one); a broken file keeps the
old surface serving and logs every error with file:line:column.

Secrets named by the guardfile (value env "X", value file "...") are read at every call,
never at start-up. They are redacted from every result and error (as sent, percent-encoded
or JSON-escaped) and never logged; a credential shorter than 8 characters, or holding a line
break or control character, is refused by name. Pins are redacted only with secret=#true
or from="query:...".`,
    run: async (args) => (await load("serve"))(args),
  },
  "serve-ssm": {
    summary: `serve, insisting that FILE is an AWS SSM reader policy (wrap ward mcp aws ssm).`,
    help: `Usage: weir serve-ssm FILE (--stdio | --http [HOST:]PORT) [options]

Serves an exact-parameter AWS SSM reader (wrap ward mcp aws ssm { region; parameter "/name";
can get parameter }): get_parameter(name) reads only the declared names and refuses any
other before AWS sees a request. Options as for serve ("weir help serve"); serve itself
also recognises the policy. Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
AWS_SESSION_TOKEN, read at each call. Endpoint: AWS_ENDPOINT_URL_SSM, else AWS_ENDPOINT_URL,
else the region's public endpoint.`,
    run: async (args) => (await load("serve"))(args, "ssm"),
  },
  "serve-s3": {
    summary: `serve, insisting that FILE is an AWS S3 publisher policy (wrap ward mcp aws s3).`,
    help: `Usage: weir serve-s3 FILE (--stdio | --http [HOST:]PORT) [options]

Serves a one-bucket S3 publisher (wrap ward mcp aws s3 { bucket; base-url; prefix; max-bytes;
content-type ...; can put object; can list objects; can get object-url }). Options as for
serve ("weir help serve"); serve itself also recognises the policy. Credentials as for
serve-ssm. Endpoint: AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL (path-style addressing),
else the bucket's public endpoint.`,
    run: async (args) => (await load("serve"))(args, "s3"),
  },
  describe: {
    summary: `Print the served surface as a person reads it: each tool's method, path,
inputs with types and bounds, restrictions, and withheld tools with reasons.`,
    help: `Usage: weir describe [--format text|json|openapi|html] [--read-only] FILE

Prints each served tool: method, path template, inputs (types, bounds, rules, required,
metacharacter opt-outs), restrictions on path parameters, pins, cache, the rate limit, and
withheld tools with their reasons. --format openapi prints the OpenAPI 3.1 document of the
HTTP tool API (POST /api/<tool>; withheld tools marked deprecated), declaring only the
inbound authentication the guardfile itself names (inbound-token callers, oauth).
--format html prints one self-contained review page (no script, loads nothing) to sign
off: every tool with its operation, arguments, constraints and controls; withheld ones.

  --format text|json|openapi|html
                               Text (default), the same as JSON, the OpenAPI document, or
                               the review page.
  --read-only                  The surface serve --read-only would serve: every tool that
                               changes something becomes a withheld stub ("read-only mode").`,
    run: async (args) => (await load("describe"))(args),
  },
  scaffold: {
    summary: `Start a guardfile from an OpenAPI 3.x or Swagger 2.0 document: every
operation listed, none granted until chosen (in a terminal: a chooser).`,
    help: `Usage: weir scaffold SPEC [--select SELECTOR]... [--select-reads] [--output FILE]
                     [--server NAME] [--force] [--interactive | --no-interactive]

Reads SPEC (an OpenAPI 3.0/3.1 or Swagger 2.0 document, JSON or YAML, a file) and writes a
guardfile that grants only the operations chosen. Every other operation is listed as a grant
that is off ("/-can ...": delete the "/-" to turn it on); operations a guardfile cannot
express are comments that say why; destructive ones not chosen are offered as withheld
stubs. Each grant carries the document's path, typed path parameters, query fields and
arrays with their enums, bounds and patterns, header inputs, and JSON or form body fields;
base-url comes from the document's server, auth from its security scheme or an API key
declared as a header parameter (the credential read from an environment variable the file
names).

  --select SELECTOR   Grant one operation: "METHOD /path" as the document writes it, an
                      operationId, or the tool name (repeatable).
  --select-reads      Grant every GET operation.
  --output FILE       Write FILE (whole or not at all) instead of standard output; an
                      existing FILE is refused without --force.
  --force             Let --output replace an existing file (the chooser asks instead:
                      y replaces it, or type another name).
  --server NAME       The server name (wrap ward mcp NAME); default from the title.
  --interactive       Choose in the terminal (the default when standard input and output
                      are a terminal and nothing is selected): arrows move, space selects,
                      / filters, enter writes, q leaves without writing.
  --no-interactive    Write the file with nothing granted, even in a terminal.

With nothing chosen the file grants nothing: lint warns, serve lists only the info tool.
A summary (granted, off, not expressible, the share of GET operations expressed) goes to
stderr. Exit codes: 0 written, 1 the document or a selected operation cannot be used (or
the chooser was left), 2 usage errors.`,
    run: async (args) => (await load("scaffold"))(args),
  },
  diff: {
    summary: `What an agent can do under NEW that it could not under OLD, and the
reverse, per tool; widening changes first (for review and CI).`,
    help: `Usage: weir diff [--format text|json|html] [--fail-on widen|any]
                 [--definitions F | --live] (OLD NEW | --git REV FILE)

Compares the surfaces two guardfiles serve (the surface model describe --format json
prints: the tool schemas serve enforces), not their text. Every field of it is compared
by its declared rule: tools added or removed, a changed method, path or wrapped tool,
inputs (types, bounds, enums, patterns, required, where and how a value is placed, the
metacharacter gate, hidden), restrict, pins and whether secret, withholds, confirm,
rate-limit and where its state lives, cache, scopes, GraphQL documents, SQL statements,
inbound-token callers and where their tokens are read, OAuth, upstream, credentials and
headers; literal values are compared, never printed; instructions, resources and prompts
that change are listed. A change that lets a request through that was refused before is
a widening. A removed and an added tool doing the same operation are a rename, compared
as one tool. Each line is marked "+ WIDENS", "- narrows" or "~ changes"; widening first.
Spec-mode files, AWS policies and files that wrap an MCP server are all compared.

  --git REV           OLD is FILE as it was at git revision REV (git show REV:FILE); a
                      FILE REV does not have is compared with nothing (all of it is new).
  --format json       {"old", "new", "widened", "narrowed", "changes": [{"tool", "effect",
                      "what"}]}, effect one of widen, narrow, change.
  --format html       One self-contained review page (no script, loads nothing):
                      widenings first, then narrowings, then other changes.
  --fail-on widen     Exit 1 when anything widened (a pull request check).
  --fail-on any       Exit 1 when anything changed.
  --definitions F     A wrapped MCP server's tools from F (a saved tools/list result, or
                      the fingerprints file lint-upstream FILE --write-fingerprints F
                      writes): the surfaces served from them are compared, schemas too.
                      Without it (or --live) the server's tools are held fixed.
  --live              Each wrap file's MCP server lists its tools now.

Exit codes: 0 compared, 1 a guardfile does not load, a wrapped server's tools cannot be
had, or --fail-on matched, 2 usage errors.`,
    run: async (args) => (await load("diff"))(args),
  },
  verify: {
    summary: `Prove a guardfile's surface: a few hundred generated calls per tool, served
against a recording stand-in of its upstream; exit 1 on any call that escapes it.`,
    help: `Usage: weir verify FILE [--cases N] [--seed S] [--tool T]... [--format text|json|junit]
                   [--definitions F]

Serves FILE (a spec-mode guardfile, or one that wraps an MCP server) against a stand-in
of its upstream that weir starts on 127.0.0.1 and that records every request and echoes
it back, credentials included. For each tool it generates calls from what the tool
advertises: valid values at every boundary and every hostile form the guard knows (dot
segments and encoded separators in every decoded form, ill-formed text, number
spellings, deep nesting, name twins, extra keys, wrong types, oversize values, other
tools' names), over MCP (HTTP under 2025-11-25 and 2026-07-28, stdio) and the tool API.
Every call must hold: at most one upstream request; exactly the called grant's method and
path template, each value inside its own segment, query and body as declared, pins as
pinned, allowed values as sent; nothing for a withheld or unnamed tool; a person asked
before a gated call; no byte of a credential or secret pin in any answer, log line or
telemetry event.
Credentials, pins and DSNs are generated stand-ins (verify reads none of yours); the
rate limit is lifted so the calls do not queue. A file that exchanges each caller's token
(token exchange) is served with OAuth against a stand-in identity provider and called by
several callers: each request upstream must carry its own caller's exchanged token, and a
caller whose token cannot be exchanged reaches nothing and is asked nothing.

  --cases N           Calls per tool (default 200).
  --seed S            Draw the calls from seed S: a report's seed replays its run.
  --tool T            Only tool T (repeatable).
  --format text|json|junit
                      Text (default), one JSON document, or a JUnit XML report for CI.
  --definitions F     For a file that wraps an MCP server: the server's tool definitions
                      from F (a saved tools/list result, {"tools": [...]}) instead of
                      asking the server (a server weir cannot reach from here).

Exit codes: 0 every call held, 1 a violation (each printed with its seed and the command
that replays it) or the file cannot be loaded or verified, 2 usage errors.`,
    run: async (args) => (await load("verify"))(args),
  },
  "serve-upstream": {
    summary: `Serve exactly the allowlisted tools of an existing MCP server (HTTP, or a
stdio command), each definition verified against its start-up fingerprint.`,
    help: `Usage: weir serve-upstream --tool T [--tool T...] (--stdio | --http [HOST:]PORT)
                           (--upstream URL | -- CMD [ARG...]) [options]

Serves exactly the allowlisted tools of an existing MCP server (an HTTP URL, or a
command weir starts and talks to over stdio). Each tool's definition is verified
against its start-up fingerprint: again when the server says its tools changed, when
its 2026-07-28 ttlMs runs out, and before any call made on a verification older than
--max-staleness. A tool weir cannot serve as written (a schema keyword it cannot
enforce, a pin that does not fit), whose definition drifted, or whose definition fails
the tool-poisoning scan (hidden instructions, invisible characters, requests for files
or secrets, addresses to send data to...) is listed as a NOT AVAILABLE stub saying why;
the others keep serving. Calls go out once, arguments as sent; no redirect is followed.
MCP 2025-11-25 tasks of tools that allow them are carried, each task bound to its caller.

The same, reviewable and reloadable, with renames and argument rules: a guardfile
with "mcp-server" and "proxy" nodes, served by "weir serve FILE" (see
docs/wrapping-mcp-servers.md for each flag's file equivalent).

  --tool NAME                   An upstream tool to serve (repeatable, at least one).
  --name NAME                   The server name clients see (default weir-upstream).
  --pin TOOL.ARG=VALUE          Always send VALUE for ARG, which the tool then no longer lists;
                                a caller sending ARG is refused (repeatable).
  --accept-finding TOOL=ID      Serve TOOL despite this finding of the definition scan (the id
                                lint-upstream prints, e.g. address:0123456789abcdef; repeatable).
  --upstream-header 'N=T'       A header for an HTTP upstream; T holds {env:VAR}, {file:PATH}
                                or {literal:TEXT} spans, read at every request (repeatable).
  --connect-timeout DURATION    Keep retrying the first connection this long (default 0: once).
  --request-timeout DURATION    Bound on each upstream request (default 60s; 0 disables).
  --max-response-bytes N        Refuse upstream answers larger than N bytes (default 8388608).
  --max-staleness DURATION      Never forward a call on a verification of the definitions
                                older than this (default 5s; 0: list the tools before every
                                call).
  --read-only                   Serve only tools whose definition says readOnlyHint: true;
                                the others are withheld stubs saying "read-only mode".
  --schema-profile NAME         full (default), gemini or openai-strict, as for serve; a tool
                                the profile cannot list soundly is a stub naming the keyword.
  --stdio | --http [HOST:]PORT  How clients reach weir (as for serve).
  --allow-origin ORIGIN         A browser origin allowed to call, with CORS (repeatable).
  --allow-host HOST[:PORT]      Also answer this Host, e.g. behind a proxy (repeatable).
  --inbound-token-env VAR       Require "Authorization: Bearer <token>" over HTTP (VAR holds one
                                or more tokens); beyond loopback this or --no-inbound-auth is
                                required.
  --tool-token-env VAR:T1,T2    A token (in VAR) that may list and call only these tools
                                (repeatable: one subset per token); lists are then private.
  --no-inbound-auth             Listen beyond loopback with no inbound auth (a proxy in front
                                authenticates).
  --oauth-issuer URL, --oauth-resource URL, --oauth-introspection-client-id ID,
  --oauth-introspection-secret-env VAR, --oauth-profile NAME, --oauth-audience AUD
                                As for serve: an OAuth 2.1 resource server (any valid token
                                may call the tools no --tool-scope names).
  --tool-scope TOOL=SCOPE[ SCOPE...]
                                OAuth scopes a caller's token must all carry to list and call
                                TOOL (repeatable, once per tool; needs --oauth-issuer).
  --token-exchange-audience AUD, --token-exchange-resource URL
                                Send each caller's identity upstream: its token is exchanged
                                (RFC 8693; Entra: on-behalf-of) for one for this upstream,
                                sent as Authorization: Bearer; never the caller's own token.
                                Needs --oauth-issuer and --upstream URL. Kept per caller,
                                scopes and upstream until it expires.
  --token-exchange-client-id ID  weir's client at the identity provider, authenticated with
  --token-exchange-secret-env VAR | --token-exchange-secret-file PATH
                                a client secret (HTTP Basic; --token-exchange-secret-post
                                sends it as form fields), or
  --token-exchange-key-file PATH [--token-exchange-key-alg ALG] [--token-exchange-key-id KID]
                                a private key (PKCS#8 PEM or JWK) for private_key_jwt.
  --token-exchange-scope SCOPE  Scopes asked for (repeatable; default: each tool's --tool-scope).
  --token-exchange-endpoint URL The token endpoint (default: the issuer's metadata).
  --token-exchange-subject-token-type URI
                                subject_token_type (default: an access token; Auth0 needs its
                                custom exchange profile's).
  --token-exchange-client-credentials [--token-exchange-client-credentials-scope SCOPE]
                                weir's own requests (handshake, listings) carry weir's own
                                token from the same provider (client credentials grant), for
                                an MCP server that wants a token on every request.
  --log-level LEVEL             debug, info (default), warn or error; else WEIR_LOG_LEVEL.
  --drain-timeout MS            On SIGTERM/SIGINT or the end of stdin: let calls in flight
                                finish this long (default 10000), then exit 0.
  --body-timeout MS, --max-concurrent N   As for serve (15000; 1024).
  --shutdown-grace MS           As for serve: GET /readyz answers 503 this long before the drain.
  --state-keys-env VAR, --state-keys-file PATH, --state-store-env VAR
                                As for serve: the keys that sign cursors (same on every replica).

A stdio upstream gets weir's environment minus the variables of weir's own secrets
(tokens, state keys, the store's URL), and needs Deno's --allow-run (deno run -A).
Exit codes: 0 stopped cleanly, 1 start-up or serving failed, 2 usage errors.`,
    run: async (args) => (await load("serve-upstream"))(args),
  },
  "lint-upstream": {
    summary: `Check an allowlist for CI: mutation-looking names, presence upstream,
readOnlyHint, fingerprints against a file written earlier.`,
    help: `Usage: weir lint-upstream --tool T [--tool T...] [--read-only heuristic|strict]
                          [--upstream URL | -- CMD [ARG...]] [options]
       weir lint-upstream FILE [--fingerprints F] [--write-fingerprints F] [--format text|json]

Checks an allowlist as serve-upstream would, without listening. With FILE (a guardfile
with an mcp-server node), connects to the server it names and reports each proxy as
"weir serve FILE" would decide it: present, missing, or the stub (a rule contradicting
the server's schema is unservable, naming both; one that fails the definition scan is
flagged: replace its text or accept the finding in the file), with fingerprints as below.

  --tool NAME                   An allowlisted tool (repeatable, at least one).
  --read-only heuristic         Offline, by name: pass only names with a read verb (get, list,
                                search, ...) and no mutation word; an unknown verb counts as a
                                write.
  --read-only strict            Withhold tools without annotations.readOnlyHint: true (needs an
                                upstream).
  --upstream URL | -- CMD       Connect and report serve-upstream's decision for each tool:
                                present, missing, or the stub it would list (unservable,
                                drifted, withheld, flagged) with the stub's words; each
                                finding of the definition scan names the tool, the rule,
                                the place and the span, and its id.
  --pin TOOL.ARG=VALUE          As for serve-upstream (a pin that does not fit: unservable).
  --accept-finding TOOL=ID      As for serve-upstream: the finding no longer fails the tool.
  --fingerprints FILE           Compare each tool's SHA-256 fingerprint with FILE.
  --write-fingerprints FILE     When clean, write the fingerprints to FILE, with the
                                definitions they are of (weir diff --definitions reads them).
  --upstream-header 'N=T'       As for serve-upstream.
  --connect-timeout DURATION    Keep retrying the connection this long (default 0: once).
  --format text|json            Text (default): "name<TAB>status" per tool on stdout, problems on
                                stderr. json: one document on stdout.

Exit codes: 0 clean, 1 problems found (or the upstream unreachable), 2 usage errors.`,
    run: async (args) => (await load("lint-upstream"))(args),
  },
  healthcheck: {
    summary: `Exit 0 when a running weir answers GET /healthz (for container health checks).`,
    help: `Usage: weir healthcheck [URL] [--timeout MS]

GETs URL (default http://127.0.0.1:8080/healthz, where the container image serves) and
exits 0 on a 2xx answer, 1 otherwise (saying whether nothing listens there, it did not
answer in time, or what it answered). For images with no shell or curl, e.g. a Dockerfile
HEALTHCHECK.

  --timeout MS   Give up after MS milliseconds (default 3000).`,
    run: async (args) => (await load("healthcheck"))(args),
  },
  demo: {
    summary: `Serve guardfiles/demo.mcp.kdl against a small local upstream and run a
scripted session with the official MCP client.`,
    help: `Usage: weir demo

Starts a small ticket API on 127.0.0.1, serves guardfiles/demo.mcp.kdl in front of it,
and drives it with the official MCP client: list tools, read, write, call the withheld
tool, and break a restrict rule. Prints each exchange. Exit 0 when every step behaved.`,
    run: async (args) => (await load("demo"))(args),
  },
};

/** A command's synopsis: its help's "Usage:" paragraph, indented by two. */
function synopsis(name: string): string {
  const block = COMMANDS[name].help.split("\n\n")[0].replace(/^Usage: /, "");
  return block.split("\n").map((line) => `  ${line.replace(/^ {7}/, "")}`).join("\n");
}

function usage(): string {
  const names = Object.keys(COMMANDS);
  const width = Math.max(...names.map((n) => n.length)) + 2;
  const indent = " ".repeat(2 + width);
  const commands = names.map((name) => {
    const [first, ...more] = COMMANDS[name].summary.split("\n");
    return [`  ${name.padEnd(width)}${first}`, ...more.map((l) => indent + l)].join("\n");
  });
  return `weir ${VERSION}: serve exactly what a guardfile grants, as a guarded MCP server

Usage:
${names.map(synopsis).join("\n")}
  weir help [COMMAND]
  weir --version

Commands:
${commands.join("\n")}

Exit codes: 0 success, 1 findings (guardfile errors) or a failure, 2 usage or start-up
configuration errors (a flag, or the variable or file it names).
Run "weir help COMMAND" for a command's options.`;
}

/**
 * Run the CLI.
 * @param args the arguments after the program name
 * @returns the exit code: 0 success, 1 failure, 2 usage error
 */
export async function main(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  const command = Object.hasOwn(COMMANDS, name ?? "") ? COMMANDS[name] : undefined;
  try {
    if (command) {
      if (rest.includes("--help") || rest.includes("-h")) {
        console.log(command.help);
        return 0;
      }
      return await command.run(rest);
    }
    switch (name) {
      case "help":
      case "--help":
      case "-h": {
        // `weir help --help` and `weir help help` are the general usage too.
        const topic = ["--help", "-h", "help"].includes(rest[0]) ? undefined : rest[0];
        if (topic !== undefined && !Object.hasOwn(COMMANDS, topic)) {
          throw new UsageError(
            `no help for "${topic}"; commands: ${Object.keys(COMMANDS).join(", ")}`,
          );
        }
        console.log(topic === undefined ? usage() : COMMANDS[topic].help);
        return 0;
      }
      case "--version":
      case "-V":
        // A literal import (four small modules, walked at start): `--version` needs no
        // read permission, which an import by URL of a local file does.
        console.log((await import("./src/cli/version.ts")).versionText());
        return 0;
      case undefined:
        console.error(usage());
        return 2;
      default:
        throw new UsageError(
          `unknown command "${name}"; commands: ${Object.keys(COMMANDS).join(", ")}, help`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(usageLine(command ? name : undefined, error.message));
      return 2;
    }
    if (error instanceof UnreadableModuleError) {
      console.error(`weir: ${error.message}`);
      return 2;
    }
    const npm = npmFailure(error);
    if (npm) {
      console.error(`weir: ${npm}`);
      return 1;
    }
    throw error;
  }
}

/**
 * What to tell when an npm package loaded on first use (`LAZY_NPM` in
 * scripts/build.ts: the OpenAPI parser, fast-check, ...) could not be fetched:
 * the sources and the bundle fetch it from the npm registry then, the binary
 * and the image hold it. Undefined for any other error.
 */
function npmFailure(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const name = /^Failed loading \S+ for package "([^"]+)"/.exec(error.message)?.[1];
  if (!name) return undefined;
  const why = error.message.split("\n").at(-1)!.replace(/^\s*\d+: /, "").trim();
  return `could not load the npm package ${name}, which this command needs (${why}): Deno ` +
    `fetches it from the npm registry on first use; run it once where the registry is ` +
    `reachable, or use the weir binary or image, which hold it`;
}

/**
 * `deno task weir` runs cli.ts in the checkout (a task's working directory is
 * its deno.json's); the task passes the directory it was started from
 * (`INIT_CWD`) as `WEIR_TASK_CWD`, so relative paths (a guardfile, `--output`,
 * a stdio MCP server's command) read as the user typed them. Nothing else sets
 * it: the binary and `deno run cli.ts` keep their working directory.
 */
function enterTaskDirectory(): void {
  const variable = "WEIR_TASK_CWD";
  if (Deno.permissions.querySync({ name: "env", variable }).state !== "granted") return;
  const dir = Deno.env.get(variable);
  if (!dir) return;
  Deno.env.delete(variable); // not passed on to a stdio MCP server weir starts
  try {
    Deno.chdir(dir);
  } catch {
    // A directory that went away: paths stay relative to the checkout, as before the task set it.
  }
}

/**
 * Run weir as a program: {@linkcode main} with this process's arguments, in
 * the directory `deno task weir` was typed in (`WEIR_TASK_CWD`), then exit
 * with its code. What `cli.ts` does when it is the main module, and what the
 * JSR package's entry, `bundle/cli.js`, calls (scripts/jsr_package.ts).
 */
export async function runProgram(): Promise<never> {
  enterTaskDirectory();
  Deno.exit(await main(Deno.args));
}

if (import.meta.main) await runProgram();
