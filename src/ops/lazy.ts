/**
 * Modules a mode imports by URL when it starts, not by a string literal.
 *
 * Deno walks every string-literal `import()` of the start graph before the
 * program runs, whether it is ever taken or not; an `import()` of a URL it
 * walks only when the program takes it. `weir serve`'s literal imports reached
 * about 580 KB of TypeScript it mostly never runs (the wrap and AWS modes,
 * HTTP listening, inbound OAuth, token exchange), all read at each start.
 * The same holds a module a static import would load for a feature the file
 * may not use (telemetry, sql grants).
 *
 * Each module here is listed by its path from the repository root: a checkout
 * imports the file (needing read permission, which serve has for its
 * guardfile), a JSR install fetches it next to the rest, and `deno compile`
 * embeds it (`scripts/build.ts` `INCLUDE`; tests/release/build_definition_test.ts
 * holds the two lists together). Give the module's type at the call:
 * `await lazy<typeof import("../modes/serve_aws.ts")>("serve_aws")`.
 *
 * @module
 */

/** The modules loaded by URL, by name: paths from the repository root. */
export const LAZY_MODULES = {
  serve_aws: "src/modes/serve_aws.ts",
  serve_mcp_wrap: "src/modes/serve_mcp_wrap.ts",
  listen_http: "src/serving/listen_http.ts",
  oauth_resource_server: "src/oauth/resource_server.ts",
  oauth_access_tokens: "src/oauth/access_tokens.ts",
  oauth_profiles: "src/oauth/profiles.ts",
  oauth_exchange_setup: "src/oauth/exchange_setup.ts",
  oauth_token_exchange: "src/oauth/token_exchange.ts",
  telemetry: "src/ops/telemetry.ts",
  guard_sql: "src/guard/sql.ts",
  backtracking_analysis: "src/mcp/backtracking_analysis.ts",
} as const;

/** A name of {@link LAZY_MODULES}. */
export type LazyName = keyof typeof LAZY_MODULES;

/**
 * Import one of {@link LAZY_MODULES} by its URL (see the module doc).
 * @throws whatever the import throws (a missing read permission names the file)
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lazy } from "./lazy.ts";
 * const { profileOf } = await lazy<typeof import("../oauth/profiles.ts")>("oauth_profiles");
 * assert.equal(typeof profileOf, "function");
 * ```
 */
export function lazy<T>(name: LazyName): Promise<T> {
  return import(new URL(`../../${LAZY_MODULES[name]}`, import.meta.url).href);
}
