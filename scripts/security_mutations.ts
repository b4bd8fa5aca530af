/**
 * One-line mutations of weir's security rules, for scripts/mutation_run.ts:
 * each weakens one rule the way a careless edit would (a check dropped, a
 * comparison loosened, a stage moved), names the files of the code that
 * holds it, and the test files a developer changing that code would run.
 * A mutation every one of those tests still passes is a survivor: a rule no
 * test holds. Issue 34 item 10.
 *
 * `from` must occur exactly once in `file` (the run reports a mutation whose
 * code moved as `stale`: re-point it).
 *
 * @module
 */

/** One mutation. */
export interface Mutation {
  /** Short unique id (`area-n`). */
  id: string;
  /** The rule it weakens, in words. */
  rule: string;
  /** The file it edits, from the repository root. */
  file: string;
  /** The exact text replaced (one occurrence in the file). */
  from: string;
  /** What replaces it. */
  to: string;
  /** Test files run against the mutant (from the repository root). */
  tests: string[];
}

const PATH_TESTS = [
  "tests/guard/path_rules_test.ts",
  "tests/guard/request_test.ts",
  "tests/guard/path_forms_test.ts",
  "tests/guard/decoded_forms_test.ts",
  "tests/guard/glob_slashes_test.ts",
];
const WRAP_RULE_TESTS = [
  "tests/guard/restricted_value_test.ts",
  "tests/e2e/mcp_wrap_attacks_test.ts",
  "tests/e2e/multi_typed_rules_test.ts",
  "tests/e2e/mcp_wrap_test.ts",
];
const SECRET_TESTS = ["tests/guard/secrets_test.ts", "tests/guard/secret_forms_test.ts"];
const HEADER_NAME_TESTS = ["tests/cli/header_inputs_lint_test.ts"];
const TWIN_LINT_TESTS = ["tests/cli/name_twins_lint_test.ts", "tests/guardfile/pin_inputs_test.ts"];
const CONFIRM_TESTS = ["tests/guard/confirm_state_test.ts", "tests/e2e/confirm_test.ts"];
const TOKEN_TESTS = [
  "tests/inbound/static_tokens_test.ts",
  "tests/inbound/tool_tokens_test.ts",
  "tests/e2e/auth_test.ts",
];
const OAUTH_TESTS = [
  "tests/oauth/introspection_test.ts",
  "tests/oauth/resource_server_test.ts",
  "tests/oauth/jwks_test.ts",
  "tests/e2e/oauth_tokens_test.ts",
];
const PIPELINE_TESTS = [
  "tests/guard/pipeline_order_test.ts",
  "tests/guard/pipeline_table_test.ts",
  "tests/e2e/controls_test.ts",
  "tests/e2e/rate_limit_test.ts",
];

/** The mutations, by area of the list. */
export const MUTATIONS: readonly Mutation[] = [
  // --- path values (spec mode) ---
  {
    id: "path-1",
    rule: "a path value with \\ is refused",
    file: "src/guard/request.ts",
    from: `    if (value.includes("\\\\")) {`,
    to: `    if (false && value.includes("\\\\")) {`,
    tests: PATH_TESTS,
  },
  {
    id: "path-2",
    rule: "a one-segment path value with / is refused",
    file: "src/guard/request.ts",
    from: `    if (param.slashes === "refuse" && value.includes("/")) {`,
    to: `    if (param.slashes === "refuse" && value.startsWith("/")) {`,
    tests: PATH_TESTS,
  },
  {
    id: "path-3",
    rule: "a decoded form may not hold a / the value did not",
    file: "src/guard/request.ts",
    from: `    if (form.includes("\\\\") || count(form, "/") > slashes) {`,
    to: `    if (form.includes("\\\\") || count(form, "/") > slashes + 1) {`,
    tests: PATH_TESTS,
  },
  {
    id: "path-4",
    rule: "a decoded form may not hold a dot segment",
    file: "src/guard/request.ts",
    from: `    const dot = form.split(/[/\\\\]/).find(isDotPiece);`,
    to: `    const dot = form.split(/[/\\\\]/).slice(1).find(isDotPiece);`,
    tests: PATH_TESTS,
  },
  {
    id: "path-5",
    rule: "a path segment that is a dot segment in any decoding is refused",
    file: "src/guard/request.ts",
    from: `  return decodedForms(segment).forms.some(isDotPiece);`,
    to: `  return isDotPiece(segment);`,
    tests: PATH_TESTS,
  },
  {
    id: "path-6",
    rule: "the NFKC form of a path value may not hold a separator",
    file: "src/guard/request.ts",
    from: `  if (compatible.includes("\\\\") || count(compatible, "/") > slashes) {`,
    to: `  if (compatible.includes("\\\\")) {`,
    tests: PATH_TESTS,
  },
  {
    id: "path-7",
    rule: "an empty path value is refused",
    file: "src/guard/request.ts",
    from:
      `  if (value === "") throw denied("empty_value", \`path parameter "\${name}" is empty\`);`,
    to: `  if (value === "" && false) throw denied("empty_value", "");`,
    tests: PATH_TESTS,
  },
  {
    id: "path-8",
    rule: "a value still percent-encoded after the last decoding round is refused",
    file: "src/guard/request.ts",
    from: `  const { forms, unsettled } = decodedForms(value);
  if (unsettled) {
    throw denied(
      "encoded_too_deep",
      \`\${what} is still`,
    to: `  const { forms, unsettled } = decodedForms(value);
  if (unsettled && false) {
    throw denied(
      "encoded_too_deep",
      \`\${what} is still`,
    tests: PATH_TESTS,
  },
  // --- restrict ---
  {
    id: "restrict-1",
    rule: "every decoded form of a restricted path value must match (spec mode)",
    file: "src/guard/request.ts",
    from: `      if (!forms.every(rule.match)) {`,
    to: `      if (!forms.some(rule.match)) {`,
    tests: [...PATH_TESTS, "tests/guardfile/glob_test.ts"],
  },
  {
    id: "restrict-2",
    rule: "the globs of one restrict node are OR'd, nodes AND'd (spec mode)",
    file: "src/guard/request.ts",
    from: `    for (const rule of restricts.get(name) ?? []) {`,
    to: `    for (const rule of (restricts.get(name) ?? []).slice(0, 1)) {`,
    tests: [...PATH_TESTS, "tests/guardfile/glob_test.ts"],
  },
  {
    id: "restrict-3",
    rule: "* of a glob stops at /",
    file: "src/guardfile/glob.ts",
    from: `    else if (atom.kind === "star") source += "[^/]*";`,
    to: `    else if (atom.kind === "star") source += "[\\\\s\\\\S]*";`,
    tests: [...PATH_TESTS, "tests/guardfile/glob_test.ts"],
  },
  {
    id: "restrict-4",
    rule: "a wrapped argument's restricted value: every decoded and NFKC form must match",
    file: "src/guard/restricted_value.ts",
    from: `    for (const form of [decoded, compatibilityForm(decoded)]) {`,
    to: `    for (const form of [decoded]) {`,
    tests: WRAP_RULE_TESTS,
  },
  {
    id: "restrict-5",
    rule: "a wrapped argument's restricted value may not hold a dot segment",
    file: "src/guard/restricted_value.ts",
    from: `      const dot = form.split("/").find(isDotPiece);`,
    to: `      const dot = form.split("/").slice(1).find(isDotPiece);`,
    tests: WRAP_RULE_TESTS,
  },
  {
    id: "restrict-6",
    rule: "a wrapped argument's restrict is checked on every call",
    file: "src/wrap/call.ts",
    from: `        if (!Object.hasOwn(args, key)) continue;`,
    to: `        if (!Object.hasOwn(args, key) || typeof args[key] === "string") continue;`,
    tests: WRAP_RULE_TESTS,
  },
  // --- pins ---
  {
    id: "pin-1",
    rule: "a query pin may not share its upstream name with a caller input's upstream= name",
    file: "src/guardfile/query_pin.ts",
    from: `  if (grant && grant.query.some((g) => g.name === name || g.wire === name)) {`,
    to: `  if (grant && grant.query.some((g) => g.name === name)) {`,
    tests: ["tests/guardfile/pin_inputs_test.ts", "tests/guardfile/lint_parity_test.ts"],
  },
  {
    id: "pin-2",
    rule: "a wrapped pin's value overrides the caller's (the pin is written last)",
    file: "src/mcp_upstream/overrides.ts",
    from: `  for (const [name, value] of pins) {
    define(sent, name, value);`,
    to: `  for (const [name, value] of pins) {
    if (!Object.hasOwn(sent, name)) define(sent, name, value);`,
    tests: ["tests/mcp_upstream/overrides_test.ts", ...WRAP_RULE_TESTS],
  },
  {
    id: "pin-3",
    rule: "serve-upstream --pin: a caller who sends a pinned argument is refused",
    file: "src/mcp_upstream/pins.ts",
    from: `    if (Object.hasOwn(args, pin.arg)) {
      return {
        ok: false,
        arg: pin.arg,`,
    to: `    if (Object.hasOwn(args, pin.arg) && false) {
      return {
        ok: false,
        arg: pin.arg,`,
    tests: ["tests/mcp_upstream/pins_test.ts", "tests/e2e/serve_upstream_exact_test.ts"],
  },
  {
    id: "pin-4",
    rule: "a wrapped argument pin may not also be served",
    file: "src/guardfile/mcp_wrap_siblings.ts",
    from: `    const rule = proxy.arguments.find((a) => a.upstream === name || a.name === name);`,
    to: `    const rule = proxy.arguments.find((a) => a.name === name);`,
    tests: ["tests/guardfile/pin_inputs_test.ts", "tests/guardfile/lint_parity_test.ts"],
  },
  {
    id: "pin-5",
    rule: "spec mode sends each query pin of the grant",
    file: "src/guard/outgoing.ts",
    from: `    pins.push({ name: pin.name, value, secret });`,
    to: `    if (secret) pins.push({ name: pin.name, value, secret });`,
    tests: [
      "tests/guard/query_pins_test.ts",
      "tests/guard/request_test.ts",
      "tests/e2e/controls_test.ts",
      "tests/e2e/inputs_test.ts",
    ],
  },
  // --- secrets ---
  {
    id: "secret-1",
    rule: "HTML numeric references (decimal) of a secret are redacted",
    file: "src/guard/secrets.ts",
    from: "  alternatives.push(`&#0*${code};`, `&#[xX]0*${hexPattern(code, 1)};`);",
    to: "  alternatives.push(`&#[xX]0*${hexPattern(code, 1)};`);",
    tests: SECRET_TESTS,
  },
  {
    id: "secret-2",
    rule: "HTML numeric references (hex) of a secret are redacted",
    file: "src/guard/secrets.ts",
    from: "  alternatives.push(`&#0*${code};`, `&#[xX]0*${hexPattern(code, 1)};`);",
    to: "  alternatives.push(`&#0*${code};`);",
    tests: SECRET_TESTS,
  },
  {
    id: "secret-3",
    rule: "a secret percent-encoded twice is redacted",
    file: "src/guard/secrets.ts",
    from: '  alternatives.push(bytes.map((b) => `%25${hexPattern(b, 2)}`).join(""));',
    to: "",
    tests: SECRET_TESTS,
  },
  {
    id: "secret-4",
    rule: "a secret inside longer base64 is redacted at every byte alignment",
    file: "src/guard/secrets.ts",
    from: "  for (let k = 0; k < 3; k++) {",
    to: "  for (let k = 0; k < 1; k++) {",
    tests: SECRET_TESTS,
  },
  {
    id: "secret-5",
    rule: "object keys of an answer are redacted too",
    file: "src/guard/secrets.ts",
    from: "          Object.defineProperty(out, this.text(k), {",
    to: "          Object.defineProperty(out, k, {",
    tests: SECRET_TESTS,
  },
  {
    id: "secret-6",
    rule: "a credential too short to redact is refused before it is sent",
    file: "src/guard/outgoing.ts",
    from: "  if (resolved.secret && resolved.value.length < MIN_SECRET_LENGTH) {",
    to: "  if (resolved.secret && resolved.value.length < 2) {",
    tests: [...SECRET_TESTS, "tests/e2e/auth_test.ts", "tests/guard/request_test.ts"],
  },
  {
    id: "secret-7",
    rule: "a JSON \\u escape of each character is redacted",
    file: "src/guard/secrets.ts",
    from: '  alternatives.push(units.map((u) => `\\\\\\\\u${hexPattern(u, 4)}`).join(""));',
    to: "",
    tests: SECRET_TESTS,
  },
  // --- withholds and read-only ---
  {
    id: "withhold-1",
    rule: "a withheld tool's call is refused before anything else",
    file: "src/guard/pipeline.ts",
    from: "  const w = pipeline.withheld.get(name);",
    to: "  const w = pipeline.withheld.get(name.toLowerCase()) && undefined;",
    tests: [...PIPELINE_TESTS, "tests/e2e/read_only_test.ts"],
  },
  {
    id: "withhold-2",
    rule: "a spelling of a withheld name that would serve it is an error",
    file: "src/guardfile/spellings.ts",
    from: `  if (withheld && served) {
    return finding(
      "error",`,
    to: `  if (withheld && served) {
    return finding(
      "warning",`,
    tests: ["tests/guardfile/spellings_test.ts", "tests/guardfile/lint_parity_test.ts"],
  },
  {
    id: "withhold-3",
    rule: "--read-only withholds every grant that is not a read",
    file: "src/guardfile/surface.ts",
    from: "    grants: guardfile.grants.filter(grantReadsOnly),",
    to: "    grants: guardfile.grants,",
    tests: ["tests/e2e/read_only_test.ts", "tests/surface/read_definition_test.ts"],
  },
  {
    id: "withhold-4",
    rule: "a grant may not mint a withheld name",
    file: "src/guardfile/parse.ts",
    from: "    if (served.has(tool)) {",
    to: "    if (served.has(tool) && false) {",
    tests: ["tests/guardfile/lint_parity_test.ts", "tests/guardfile/spellings_test.ts"],
  },
  // --- confirm state ---
  {
    id: "confirm-1",
    rule: "a confirmation's state is for this tool and these arguments only",
    file: "src/guard/confirm.ts",
    from: `    if (state.tool !== tool || state.digest !== digest) return "other_call";`,
    to: `    if (state.tool !== tool) return "other_call";`,
    tests: CONFIRM_TESTS,
  },
  {
    id: "confirm-2",
    rule: "a confirmation's state expires",
    file: "src/guard/confirm.ts",
    from: `    if (state.exp < Date.now()) return "expired";`,
    to: ``,
    tests: CONFIRM_TESTS,
  },
  {
    id: "confirm-3",
    rule: "a confirmation is spent once (a replayed state asks again)",
    file: "src/guard/confirm.ts",
    from: `    if (outcome === "used") return "spent";`,
    to: ``,
    tests: CONFIRM_TESTS,
  },
  {
    id: "confirm-4",
    rule: "a declined confirmation refuses the call",
    file: "src/guard/confirm.ts",
    from: `      if (answer.action === "accept") return;`,
    to: `      if (answer.action !== "cancel") return;`,
    tests: CONFIRM_TESTS,
  },
  {
    id: "confirm-5",
    rule: "a confirmation's state is bound to its caller",
    file: "src/guard/confirm.ts",
    from:
      `    const opened = await this.#keys.open(CONFIRM_INPUT, input.requestState, ctx.caller);`,
    to: `    const opened = await this.#keys.open(CONFIRM_INPUT, input.requestState, undefined);`,
    tests: CONFIRM_TESTS,
  },
  // --- inbound tokens ---
  {
    // Replaces a first token-1 (the byte loop over the presented token's length
    // instead of the expected one's): an equivalent mutant, since the length
    // difference is already in the result; only the timing changes, which no
    // test may assert.
    id: "token-1",
    rule: "a token counts only as Bearer <token> (RFC 6750), not bare or in another scheme",
    file: "src/inbound/static_tokens.ts",
    from: `    const got = encoder.encode(BEARER_CREDENTIAL.exec(value)?.[1] ?? "");`,
    to: `    const got = encoder.encode(value.replace(/^\\S+ +/, ""));`,
    tests: TOKEN_TESTS,
  },
  {
    id: "token-2",
    rule: "a bearer token's length must equal a configured one's",
    file: "src/inbound/static_tokens.ts",
    from: `  let diff = got.length ^ expected.length;`,
    to: `  let diff = 0;`,
    tests: TOKEN_TESTS,
  },
  {
    id: "token-3",
    rule: "a configured token shorter than the minimum is refused at start",
    file: "src/inbound/static_tokens.ts",
    from: `    if (t.length < MIN_TOKEN_LENGTH) {`,
    to: `    if (t.length < 1) {`,
    tests: TOKEN_TESTS,
  },
  {
    id: "token-4",
    rule: "a token limited to some tools calls only those",
    file: "src/inbound/static_tokens.ts",
    from:
      `      const tools = grant.tools ? new Set(grant.tools) : limited ? "*" as const : undefined;`,
    to: `      const tools = limited ? "*" as const : undefined;`,
    tests: TOKEN_TESTS,
  },
  // --- Origin and Host ---
  {
    id: "origin-1",
    rule: "a Host not allowed is refused (DNS rebinding)",
    file: "src/inbound/checks.ts",
    from:
      `  if (hosts !== "any" && !hosts.includes(host) && !hosts.some((h) => h.toLowerCase() === host)) {`,
    to: `  if (hosts !== "any" && host === "") {`,
    tests: ["tests/inbound/origin_host_test.ts", "tests/e2e/http_test.ts"],
  },
  {
    id: "origin-2",
    rule: "an Origin not allowed is refused",
    file: "src/inbound/checks.ts",
    from: `  if (options.allowedOrigins === "any" || options.allowedOrigins.includes(origin)) {`,
    to: `  if (options.allowedOrigins === "any" || origin !== "") {`,
    tests: ["tests/inbound/origin_host_test.ts", "tests/e2e/http_test.ts"],
  },
  {
    id: "origin-3",
    rule: "same-origin is the exact Host this server vouched for",
    file: "src/inbound/checks.ts",
    from:
      '    hosts !== "any" && host !== "" && (lower === `http://${host}` || lower === `https://${host}`)',
    to: '    hosts !== "any" && host !== "" && lower.includes(host)',
    tests: ["tests/inbound/origin_host_test.ts", "tests/e2e/http_test.ts"],
  },
  // --- the allowlist (serve-upstream, the wrap form) ---
  {
    id: "allowlist-1",
    rule: "an allowlisted name is the upstream's exact name",
    file: "src/mcp_upstream/decision.ts",
    from: `  const entries = byName.get(name);`,
    to: `  const entries = byName.get(name) ??
    [...byName].find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];`,
    tests: [
      "tests/mcp_upstream/decision_test.ts",
      "tests/mcp_upstream/allowlist_test.ts",
      "tests/e2e/serve_upstream_exact_test.ts",
    ],
  },
  {
    id: "allowlist-2",
    rule: "a call of a name not served is refused, whatever the catalog says",
    file: "src/wrap/host.ts",
    from: `    const state = this.#states.get(name);
    if (!state) {`,
    to: `    const state = this.#states.get(name) ?? this.#states.values().next().value;
    if (!state) {`,
    tests: [
      "tests/mcp_upstream/decision_test.ts",
      "tests/e2e/mcp_wrap_test.ts",
      "tests/e2e/serve_upstream_exact_test.ts",
    ],
  },
  // --- at most once, no redirect ---
  {
    id: "once-1",
    rule: "an unsafe request written on a reused connection is not sent again",
    file: "src/outbound/http1_client.ts",
    from: `          (SAFE.has(request.method) || !error.written)`,
    to: `          (SAFE.has(request.method) || error.written || !error.written)`,
    tests: ["tests/outbound/http1_client_test.ts", "tests/e2e/hostile_upstream_http1_test.ts"],
  },
  {
    id: "once-2",
    rule: "no redirect is followed (spec mode, fetch route)",
    file: "src/guard/send.ts",
    from: `      redirect: "manual",
      signal: combined,`,
    to: `      redirect: "follow",
      signal: combined,`,
    tests: ["tests/e2e/redirect_target_test.ts", "tests/e2e/upstream_client_parity_test.ts"],
  },
  {
    id: "once-3",
    rule: "no redirect is followed (the wrapped MCP server's HTTP hop)",
    file: "src/mcp_upstream/http_fetch.ts",
    from: `redirect: "manual" });`,
    to: `redirect: "follow" });`,
    tests: ["tests/e2e/serve_upstream_hop_test.ts", "tests/e2e/redirect_target_test.ts"],
  },
  // --- caps ---
  {
    id: "cap-1",
    rule: "a request body over the cap is refused (declared length)",
    file: "src/inbound/body.ts",
    from: `  if (declared !== null && Number(declared) > max) {`,
    to: `  if (declared !== null && Number(declared) > max * 2) {`,
    tests: ["tests/inbound/body_cap_test.ts", "tests/inbound/body_cap_split_test.ts"],
  },
  {
    id: "cap-2",
    rule: "a streamed request body over the cap is refused",
    file: "src/transport/bytes.ts",
    from: `      if (total + value.byteLength > max) {`,
    to: `      if (total + value.byteLength > max * 2) {`,
    tests: [
      "tests/inbound/body_cap_test.ts",
      "tests/inbound/body_cap_split_test.ts",
      "tests/transport/read_capped_test.ts",
    ],
  },
  {
    id: "cap-2b",
    rule: "a 408 leaves its connection to be closed by the pending body read, never dropped",
    file: "src/inbound/body.ts",
    from: `        \`body not received within \${deadlineMs} ms\`,
        "close",`,
    to: `        \`body not received within \${deadlineMs} ms\`,
        "drop",`,
    tests: ["tests/ops/slow_clients_test.ts"],
  },
  {
    id: "cap-3",
    rule: "an upstream answer over the cap is refused (weir's HTTP/1.1 client, declared length)",
    file: "src/outbound/http1_answer.ts",
    from:
      `      body = framing.length > cap ? null : await readLength(connection, framing.length);`,
    to:
      `      body = framing.length > cap * 2 ? null : await readLength(connection, framing.length);`,
    tests: [
      "tests/outbound/http1_client_test.ts",
      "tests/e2e/upstream_limits_test.ts",
      "tests/e2e/limits_test.ts",
    ],
  },
  {
    id: "cap-4",
    rule: "an upstream answer over the cap is refused (weir's HTTP/1.1 client, chunked)",
    file: "src/outbound/http1_answer.ts",
    from: `        if (total > cap) {
          body = null;`,
    to: `        if (total > cap * 2) {
          body = null;`,
    tests: [
      "tests/outbound/http1_client_test.ts",
      "tests/e2e/upstream_limits_test.ts",
      "tests/e2e/limits_test.ts",
    ],
  },
  {
    id: "cap-5",
    rule: "an upstream answer over the cap is refused (fetch route, declared length)",
    file: "src/guard/send.ts",
    from: `  if (Number(declared ?? "NaN") > limits.maxResponseBytes) {`,
    to: `  if (Number(declared ?? "NaN") > limits.maxResponseBytes * 2) {`,
    tests: ["tests/e2e/upstream_limits_test.ts", "tests/e2e/upstream_client_parity_test.ts"],
  },
  // --- OAuth audience and scopes ---
  {
    id: "oauth-1",
    rule: "a JWT must name this resource in aud",
    file: "src/oauth/access_tokens.ts",
    from: `          audience: accepted.audiences,
          clockTolerance: skew,`,
    to: `          clockTolerance: skew,`,
    tests: OAUTH_TESTS,
  },
  {
    id: "oauth-2",
    rule: "a JWT must come from the issuer",
    file: "src/oauth/access_tokens.ts",
    from: `          issuer: accepted.issuers,
          audience: accepted.audiences,`,
    to: `          audience: accepted.audiences,`,
    tests: OAUTH_TESTS,
  },
  {
    id: "oauth-3",
    rule: "a tool's scopes must all be carried",
    file: "src/oauth/resource_server.ts",
    from: `    needs(tool).filter((s) => !caller.scopes.has(s));`,
    to: `    needs(tool).filter((s) => !caller.scopes.has(s)).slice(1);`,
    tests: OAUTH_TESTS,
  },
  {
    id: "oauth-4",
    rule: "an introspected token must name this resource in aud",
    file: "src/oauth/access_tokens.ts",
    from: `    if (!Array.isArray(aud) || !aud.some((a) => accepted.audiences.includes(a))) {`,
    to: `    if (!Array.isArray(aud)) {`,
    tests: OAUTH_TESTS,
  },
  {
    id: "oauth-5",
    rule: "a JWT of another typ than an access token is refused",
    file: "src/oauth/access_tokens.ts",
    from: `      if (typ !== undefined && !ACCESS_TOKEN_TYPES.has(String(typ).toLowerCase())) {`,
    to: `      if (typ === "none") {`,
    tests: OAUTH_TESTS,
  },
  // --- name twins ---
  {
    id: "twin-1",
    rule: "a key that folds (case, width, NFKC, separators) onto a constrained argument is refused",
    file: "src/guardfile/name_fold.ts",
    from: `  return name.normalize("NFKC").replace(FORMAT, "").toUpperCase().toLowerCase()`,
    to: `  return name.replace(FORMAT, "").toUpperCase().toLowerCase()`,
    tests: ["tests/guardfile/name_fold_test.ts", "tests/e2e/name_twins_test.ts"],
  },
  {
    id: "twin-2",
    rule: "separators fold too (repo_name, repo-name, repoName)",
    file: "src/guardfile/name_fold.ts",
    from: `  return foldCaseAndWidth(name).replace(SEPARATORS, "");`,
    to: `  return foldCaseAndWidth(name);`,
    tests: ["tests/guardfile/name_fold_test.ts", "tests/e2e/name_twins_test.ts"],
  },
  {
    id: "twin-3",
    rule: "a wrapped call is checked for name twins",
    file: "src/wrap/call.ts",
    from: `    if (twin) throw twin;`,
    to: ``,
    tests: ["tests/e2e/name_twins_test.ts", ...WRAP_RULE_TESTS],
  },
  // --- rules that decide two names are one (siblings of pin-1 and allowlist-1) ---
  {
    id: "name-1",
    rule: "a fixed header whose name a server reads as the credential's is refused (_ as -)",
    file: "src/guardfile/wrap.ts",
    from: `    const clash = headers.find(([name]) => headerKey(name) === headerKey(auth.header));`,
    to:
      `    const clash = headers.find(([name]) => name.toLowerCase() === auth.header.toLowerCase());`,
    tests: HEADER_NAME_TESTS,
  },
  {
    id: "name-2",
    rule: "header names compare as servers read them: case and _ as - (headerKey)",
    file: "src/guardfile/header_inputs.ts",
    from: `  return name.toLowerCase().replaceAll("_", "-");`,
    to: `  return name.toLowerCase();`,
    tests: HEADER_NAME_TESTS,
  },
  {
    id: "name-3",
    rule: "a header input that would replace a fixed or credential header is refused",
    file: "src/guardfile/header_inputs.ts",
    from: `      const clash = fixed.find((f) => headerKey(f) === headerKey(h.wire));`,
    to: `      const clash = fixed.find((f) => f.toLowerCase() === h.wire.toLowerCase());`,
    tests: HEADER_NAME_TESTS,
  },
  {
    id: "name-4",
    rule: "the wrap form's fixed headers compare as servers read them (duplicates)",
    file: "src/guardfile/mcp_wrap_server.ts",
    from: `    if (out.some((h) => headerKey(h.name) === headerKey(name))) {`,
    to: `    if (out.some((h) => h.name.toLowerCase() === name.toLowerCase())) {`,
    tests: HEADER_NAME_TESTS,
  },
  {
    id: "name-5",
    rule: "a query pin's loose twin among the caller's keys is refused",
    file: "src/guardfile/query_pin.ts",
    from:
      `  const twin = grant && wireKeys(grant).find((k) => foldName(k.key) === foldName(name));`,
    to: `  const twin = grant && wireKeys(grant).find((k) => k.key === name);`,
    tests: TWIN_LINT_TESTS,
  },
  {
    id: "name-6",
    rule: "the auth query-param credential's loose twin among query inputs is refused",
    file: "src/guardfile/wrap.ts",
    from:
      `        const twin = input ? undefined : g.query.find((q) => foldName(q.wire) === foldName(name));`,
    to:
      `        const twin = input ? undefined : g.query.find((q) => q.wire.toLowerCase() === name.toLowerCase());`,
    tests: TWIN_LINT_TESTS,
  },
  {
    id: "name-7",
    rule: "a grant's body keys are among the keys checked for twins",
    file: "src/guardfile/grant.ts",
    from: '    ...grant.body.map((b) => ({ key: b.name, what: `body input "${b.name}"` })),',
    to: "",
    tests: TWIN_LINT_TESTS,
  },
  {
    id: "name-8",
    rule: "a wrapped pin's loose twin among the served arguments is refused",
    file: "src/guardfile/mcp_wrap_siblings.ts",
    from:
      `      : proxy.arguments.find((a) => !a.hide && foldName(a.upstream) === foldName(name));`,
    to: `      : proxy.arguments.find((a) => !a.hide && a.upstream === name);`,
    tests: TWIN_LINT_TESTS,
  },
  // --- every encoding a secret can take in an answer (siblings of secret-1/2) ---
  {
    id: "secret-8",
    rule: 'JSON short escapes of a secret (\\/, \\", \\\\) are redacted',
    file: "src/guard/secrets.ts",
    from: `  if (SHORT_ESCAPES[c]) alternatives.push(escapeRegex(SHORT_ESCAPES[c]));`,
    to: ``,
    tests: SECRET_TESTS,
  },
  {
    id: "secret-9",
    rule: "a form-encoded secret (+ for a space) is redacted",
    file: "src/guard/secrets.ts",
    from: `  if (c === " ") alternatives.push("\\\\+");`,
    to: ``,
    tests: SECRET_TESTS,
  },
  {
    id: "secret-10",
    rule: "HTML named references of a secret (&amp;, &lowbar;, &sol;) are redacted",
    file: "src/guard/secrets.ts",
    from: "  for (const named of HTML_NAMED[c] ?? []) alternatives.push(`&${named};`);",
    to: "",
    tests: SECRET_TESTS,
  },
  {
    id: "secret-11",
    rule: "unpadded base64url of a secret is redacted",
    file: "src/guard/secrets.ts",
    from: `    toUrlAlphabet(b64).replace(/=+$/, ""),
    ...base64Cores(bytes)`,
    to: `    ...base64Cores(bytes)`,
    tests: SECRET_TESTS,
  },
  {
    id: "secret-12",
    rule: "upper-case hex of a secret is redacted",
    file: "src/guard/secrets.ts",
    from: `    hex.toUpperCase(),`,
    to: ``,
    tests: SECRET_TESTS,
  },
  {
    id: "secret-13",
    rule: "base64 of a secret wrapped into lines (MIME, PEM) is redacted",
    file: "src/guard/secrets.ts",
    from: `    if (!HAS_BREAK.test(out)) return out;`,
    to: `    return out;`,
    tests: SECRET_TESTS,
  },
  {
    id: "secret-14",
    rule: "a secret that is base64 of text is redacted decoded too",
    file: "src/guard/secrets.ts",
    from: `  if (decodedBase64 !== undefined) spelled.push(decodedBase64);`,
    to: ``,
    tests: SECRET_TESTS,
  },
  {
    id: "secret-15",
    rule: "a secret that is percent-encoded text is redacted decoded too",
    file: "src/guard/secrets.ts",
    from: `      spelled.push(decodeURIComponent(secret.replaceAll("+", " ")));`,
    to: ``,
    tests: SECRET_TESTS,
  },
  {
    id: "secret-16",
    rule: "escapes of a secret match in either hex case (%2f, %2F, \\u002F)",
    file: "src/guard/secrets.ts",
    from: "    .replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`);",
    to: ";",
    tests: SECRET_TESTS,
  },
  {
    id: "secret-17",
    rule: "an argument holding a registered secret in any form is refused (Redactor.finds)",
    file: "src/guard/secrets.ts",
    from: `    if (holds(this.#pattern, text)) return true;`,
    to: `    if (text.includes([...this.#secrets][0])) return true;`,
    tests: ["tests/e2e/secret_arguments_test.ts", ...SECRET_TESTS],
  },
  {
    id: "secret-18",
    rule: "\\xHH escapes of a secret (ESAPI encodeForJavaScript) are redacted",
    file: "src/guard/secrets.ts",
    from: "  if (code <= 0xff) alternatives.push(`\\\\\\\\x${hexPattern(code, 2)}`);",
    to: "",
    tests: SECRET_TESTS,
  },
  {
    id: "secret-19",
    rule: "a secret's ' written \\' (addslashes, repr, JSEscapeString) is redacted",
    file: "src/guard/secrets.ts",
    from: `  "'": "\\\\'",`,
    to: ``,
    tests: SECRET_TESTS,
  },
  // --- the control pipeline's stage order ---
  {
    id: "stage-1",
    rule: "a call refused at (a) spends no budget: the slot is taken after the checks",
    file: "src/guard/pipeline.ts",
    from: `  try {
    await checkCall(pipeline, call, ctx);`,
    to: `  try {
    if (pipeline.bucket) slot = await takeBudget(pipeline, call);
    await checkCall(pipeline, call, ctx);`,
    tests: PIPELINE_TESTS,
  },
  {
    id: "stage-2",
    rule: "a call refused at (a) asks no person: (d) comes after (a)",
    file: "src/guard/pipeline.ts",
    from: `  try {
    await checkCall(pipeline, call, ctx);`,
    to: `  try {
    if (pipeline.gate.gates(name)) await askPerson(pipeline, call, ctx);
    await checkCall(pipeline, call, ctx);`,
    tests: [...PIPELINE_TESTS, ...CONFIRM_TESTS],
  },
  {
    id: "stage-3",
    rule: "a sent call's slot is spent (not given back)",
    file: "src/guard/pipeline.ts",
    from: `    slot = false;
    await sendOnce(pipeline, call, ctx);`,
    to: `    await sendOnce(pipeline, call, ctx);`,
    tests: PIPELINE_TESTS,
  },
  {
    id: "stage-4",
    rule: "(b) a caller's tool access is held by the pipeline too",
    file: "src/guard/pipeline.ts",
    from: `  if (ctx.tools && !ctx.tools.allows(call.tool)) {`,
    to: `  if (ctx.tools && !ctx.tools.allows(call.tool) && false) {`,
    tests: [...PIPELINE_TESTS, "tests/inbound/tool_tokens_test.ts"],
  },
  {
    id: "stage-5",
    rule: "a cached answer is not handed out before the person confirms",
    file: "src/guard/pipeline.ts",
    from: `    if (pipeline.gate.gates(name)) await askPerson(pipeline, call, ctx);
    if (hit) {`,
    to: `    if (!hit && pipeline.gate.gates(name)) await askPerson(pipeline, call, ctx);
    if (hit) {`,
    tests: [...PIPELINE_TESTS, ...CONFIRM_TESTS],
  },
  {
    id: "stage-6",
    rule: "reject-empty-argument is checked in (a)",
    file: "src/guard/pipeline.ts",
    from: `  if (blank) checkBlankArguments(call.tool, blank, call.args);`,
    to: ``,
    tests: PIPELINE_TESTS,
  },
  {
    id: "stage-7",
    rule: "a cached answer is each caller's own when the caller's identity goes upstream",
    file: "src/guard/pipeline.ts",
    from: '      ? `${ResponseCache.key(call.args)}\\n${ctx.caller ?? ""}`',
    to: "      ? `${ResponseCache.key(call.args)}`",
    tests: [...PIPELINE_TESTS, "tests/e2e/token_exchange_test.ts"],
  },
];
