/**
 * Inside `wrap`: the upstream's `base-url`, `auth`, `header`s, `restrict`s,
 * `database` and the `can` grants (each read by src/guardfile/grant.ts), as
 * the part of the {@link Guardfile} model they make. Pure, like the rest of
 * src/guardfile. Grammar: `docs/guardfile.md`, "Inside `wrap`".
 *
 * @module
 */
import type { Auth, Database, Grant, Guardfile, Restrict, ValueSource } from "./model.ts";
import { type NodeReader, onlyOnce, suggest } from "./nodes.ts";
import { readGrant } from "./grant.ts";
import { readValue } from "./value.ts";
import { compileGlob, type GlobError, globNeedsSlash, globsPattern, globWarnings } from "./glob.ts";
import { patternProblem } from "./pattern.ts";
import { SQL_DRIVERS } from "./model.ts";
import { foldName } from "./name_fold.ts";
import { readTokenExchange } from "./token_exchange.ts";
import { checkHeaderInputClashes, headerKey } from "./header_inputs.ts";

const WRAP_CHILDREN = ["base-url", "auth", "header", "restrict", "database", "can", "proxy"];
const AUTH_SCHEMES = ["header-token", "bearer", "query-param", "token-exchange", "none"];
/** Headers weir sets itself, or that would change how the request is framed or routed. */
const RESERVED_HEADERS = [
  "authorization",
  "proxy-authorization",
  "content-type",
  "content-length",
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
];

/**
 * Headers that ask the upstream to run another method than the request's
 * (Google APIs, ASP.NET, Symfony/Laravel, JAX-RS filters, ...). A grant sends
 * its own method, which describe, `readOnlyHint`, `--read-only` and `weir
 * diff` all rest on, so neither `header` nor `auth header-token` may set one.
 */
export const METHOD_OVERRIDE_HEADERS: readonly string[] = [
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
];

/** Why a method-override header is refused, and what to do. */
function methodOverride(name: string): string {
  return `header "${name}" asks the upstream to run another HTTP method than the grant's ` +
    `(a method override): remove it; a grant that needs another method says so with method "..."`;
}

/** The part of the model `wrap` gives. */
export type WrapBody = Pick<
  Guardfile,
  "name" | "wrapPath" | "baseUrl" | "auth" | "headers" | "restricts" | "grants" | "database"
>;

/** `database <driver> { value ... }`: once, a known driver, one value (a DSN). */
function readDatabase(kids: NodeReader[]): Database | undefined {
  const node = onlyOnce(kids, "database");
  if (!node) return undefined;
  node.onlyProperties();
  if (!node.argCount(1, 1, `the driver, e.g. database pgx { value env "DATABASE_URL" }`)) {
    return undefined;
  }
  const driver = node.stringArg(0, "the database driver");
  if (!driver) return undefined;
  if (!SQL_DRIVERS.includes(driver)) {
    node.error(
      `database driver "${driver}" is not available; weir speaks PostgreSQL: write database pgx { ... }`,
    );
    return undefined;
  }
  const values = node.onlyChildren(["value"]);
  if (values.length === 0) {
    node.error(
      `database needs a DSN: add it, e.g. database ${driver} { value env "DATABASE_URL" }`,
    );
    return undefined;
  }
  for (const extra of values.slice(1)) {
    extra.error(`"database" takes one "value"; use a value chain block for fallbacks`);
  }
  const dsn = readValue(values[0]);
  return dsn && { driver, dsn, position: node.node.position };
}

/** Read `wrap` and its children; `undefined` when it cannot be read at all (errors are recorded). */
export function readWrap(wrap: NodeReader): WrapBody | undefined {
  wrap.onlyProperties();
  const wrapPath: string[] = [];
  if (wrap.node.values.length === 0) {
    wrap.error(`"wrap" needs a name path, e.g. wrap ward mcp tickets`);
  }
  wrap.node.values.forEach((_, i) => {
    const s = wrap.stringArg(i, `wrap argument ${i + 1}`);
    if (s) wrapPath.push(s);
  });
  const kids = wrap.children();
  for (const kid of kids) {
    if (!WRAP_CHILDREN.includes(kid.name)) {
      kid.error(
        `unknown node "${kid.name}" in wrap${suggest(kid.name, WRAP_CHILDREN)}; ` +
          `remove it, or use one of base-url | auth | header | restrict | database | can`,
      );
    }
  }
  const database = readDatabase(kids);
  // The reference needs neither base-url nor auth when every grant is sql.
  const cans = kids.filter((k) => k.name === "can");
  const allSql = cans.length > 0 &&
    cans.every((c) => c.node.children.some((k) => k.name === "sql"));
  for (const proxy of kids.filter((k) => k.name === "proxy")) {
    proxy.error(
      `"proxy" serves a tool of an MCP server, and this wrap names an HTTP API (base-url): ` +
        `grant each of its operations with "can", or wrap the MCP server instead with ` +
        `mcp-server http "<url>" (or stdio "<command>") and no base-url, auth or can`,
    );
  }

  const baseUrl = allSql && !kids.some((k) => k.name === "base-url") ? "" : readBaseUrl(wrap, kids);
  const auth: Auth | undefined = allSql && !kids.some((k) => k.name === "auth")
    ? { scheme: "none" }
    : readAuth(wrap, kids);
  const headers = readHeaders(kids);
  const grants: Grant[] = [];
  const byTool = new Map<string, Grant>();
  for (const can of kids.filter((k) => k.name === "can")) {
    const grant = readGrant(can);
    if (!grant) continue;
    const other = byTool.get(grant.tool);
    if (other) {
      can.error(
        `duplicate tool name "${grant.tool}" from grant "can ${grant.verb} ${grant.resource}": ` +
          `two grants mint the same tool; merge them or rename the resource`,
      );
      continue;
    }
    byTool.set(grant.tool, grant);
    grants.push(grant);
  }
  if (cans.length === 0) {
    // A deny-everything surface (what `weir scaffold` writes before anything is
    // chosen) is valid: it serves the info tool and withheld stubs, reaches nothing.
    wrap.warn(
      `grants nothing: no "can" grant, so serve lists no granted tool (only the info tool and ` +
        `withheld stubs, if any) and reaches no upstream; add "can <verb> <resource> ` +
        `{ path "..." }" to grant an operation`,
    );
  }
  const restricts = readRestricts(kids, grants);
  const sqlGrants = grants.filter((g) => g.sql);
  if (sqlGrants.length > 0 && !database && !kids.some((k) => k.name === "database")) {
    wrap.error(
      `grant "${sqlGrants[0].tool}" is a sql grant, which needs a database: add ` +
        `database pgx { value env "DATABASE_URL" } inside wrap`,
    );
  }
  if (database && !cans.some((c) => c.node.children.some((k) => k.name === "sql"))) {
    wrap.error(
      `"database" is declared but no grant uses it (no grant has a sql block); remove it`,
    );
  }
  if (auth) checkAuthCollisions(auth, headers, grants, kids);
  checkHeaderInputClashes(wrap, grants, [
    ...headers.map(([name]) => name),
    ...(auth?.scheme === "header-token" ? [auth.header] : []),
  ]);
  if (baseUrl === undefined || !auth) return undefined;
  return {
    name: wrapPath[wrapPath.length - 1] ?? "weir",
    wrapPath,
    baseUrl,
    ...(database ? { database } : {}),
    auth,
    headers,
    restricts,
    grants: grants.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)),
  };
}

function readBaseUrl(wrap: NodeReader, kids: NodeReader[]): string | ValueSource | undefined {
  const node = onlyOnce(kids, "base-url");
  if (!node) {
    wrap.error(
      `missing "base-url": add base-url "https://api.example.com" (the one host this server may reach)`,
    );
    return undefined;
  }
  node.onlyProperties();
  if (node.node.children.length > 0) {
    if (node.node.values.length > 0) {
      node.error(`"base-url" takes a URL or a value block, not both; remove one`);
      return undefined;
    }
    const values = node.onlyChildren(["value"]);
    if (values.length === 0) return undefined;
    const last = values[values.length - 1];
    for (const extra of values.slice(0, -1)) {
      extra.error(`"base-url" takes one "value"; use a value chain block for fallbacks`);
    }
    return readValue(last);
  }
  if (!node.argCount(1, 1, "the upstream URL")) return undefined;
  const raw = node.stringArg(0, "base-url");
  if (!raw) return undefined;
  const normalized = normalizeBaseUrl(raw);
  if (typeof normalized !== "string") {
    node.error(normalized.error);
    return undefined;
  }
  return normalized;
}

/**
 * Normalize a base URL as the reference does (`https://` when no scheme,
 * trailing `/` trimmed) and refuse what weir will not send to: a non-HTTP
 * scheme, credentials in the URL, a query or a fragment.
 */
export function normalizeBaseUrl(raw: string): string | { error: string } {
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(raw) ? raw : `https://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return { error: `base-url ${JSON.stringify(raw)} is not a URL; write it as https://host/path` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return {
      error:
        `base-url must be http:// or https://, not ${url.protocol}//; use the upstream's HTTP address`,
    };
  }
  if (url.username || url.password) {
    return { error: `base-url must not carry credentials; use an "auth" block` };
  }
  if (url.search || url.hash || /[?#]/.test(withScheme)) {
    return { error: `base-url must not have a query or fragment; declare query inputs on grants` };
  }
  return url.href.replace(/\/+$/, "");
}

function readAuth(wrap: NodeReader, kids: NodeReader[]): Auth | undefined {
  const node = onlyOnce(kids, "auth");
  if (!node) {
    wrap.error(
      `\`auth\` block is required: say how weir authenticates upstream, e.g. ` +
        `auth bearer { value env "API_TOKEN" }, or auth none for a credential-free API`,
    );
    return undefined;
  }
  node.onlyProperties();
  if (!node.argCount(1, 1, `the scheme: ${AUTH_SCHEMES.join(", ")}`)) return undefined;
  const scheme = node.stringArg(0, "the auth scheme");
  if (!scheme) return undefined;
  switch (scheme) {
    case "none":
      if (node.node.children.length > 0) {
        node.error(
          `auth none takes no block: it sends no credential; remove the block, or use another scheme`,
        );
        return undefined;
      }
      return { scheme: "none" };
    case "bearer": {
      const kids = node.onlyChildren(["value"]);
      const value = onlyOnce(kids, "value");
      if (!value) {
        node.error(`auth bearer needs value, e.g. value env "API_TOKEN"`);
        return undefined;
      }
      const source = readValue(value);
      return source && { scheme: "bearer", value: source };
    }
    case "header-token": {
      const kids = node.onlyChildren(["header", "prefix", "value"]);
      const header = onlyOnce(kids, "header");
      const prefix = onlyOnce(kids, "prefix");
      const value = onlyOnce(kids, "value");
      let headerName: string | undefined;
      if (!header) node.error(`auth header-token needs header "<Name>", e.g. header "X-Api-Key"`);
      else {
        header.onlyProperties();
        header.noChildren();
        if (header.argCount(1, 1, "the header name")) headerName = header.stringArg(0, "header");
        if (headerName && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(headerName)) {
          header.error(
            `"${headerName}" is not a valid HTTP header name (RFC 9110 token); rename it`,
          );
          headerName = undefined;
        } else if (headerName && METHOD_OVERRIDE_HEADERS.includes(headerName.toLowerCase())) {
          header.error(methodOverride(headerName));
          headerName = undefined;
        }
      }
      let prefixText = "";
      if (prefix) {
        prefix.onlyProperties();
        prefix.noChildren();
        if (prefix.argCount(1, 1, "the prefix text")) {
          const p = prefix.node.values[0];
          if (typeof p !== "string") {
            prefix.error(`prefix must be a quoted string: write it in double quotes`);
          } else prefixText = p;
        }
      }
      if (!value) node.error(`auth header-token needs value, e.g. value env "API_TOKEN"`);
      const source = value && readValue(value);
      if (!headerName || !source) return undefined;
      return { scheme: "header-token", header: headerName, prefix: prefixText, value: source };
    }
    case "query-param": {
      const params: { name: string; value: ValueSource }[] = [];
      for (const param of node.onlyChildren(["param"])) {
        param.onlyProperties();
        if (!param.argCount(1, 1, "the query parameter name")) continue;
        const name = param.stringArg(0, "param");
        const value = onlyOnce(param.onlyChildren(["value"]), "value");
        if (!value) {
          param.error(`param ${name ? `"${name}" ` : ""}needs value, e.g. value env "API_KEY"`);
          continue;
        }
        const source = readValue(value);
        if (name && source) params.push({ name, value: source });
      }
      if (params.length === 0 && node.node.children.length === 0) {
        node.error(
          `auth query-param needs at least one param: add param "<name>" { value env "API_KEY"; }`,
        );
      }
      return params.length > 0 ? { scheme: "query-param", params } : undefined;
    }
    case "token-exchange": {
      const exchange = readTokenExchange(node, { connection: false });
      return exchange && { scheme: "token-exchange", exchange };
    }
    default:
      node.error(
        `unknown auth scheme "${scheme}"${suggest(scheme, AUTH_SCHEMES)}; use ${
          AUTH_SCHEMES.join(", ")
        }`,
      );
      return undefined;
  }
}

/** Nothing may silently replace the credential, or silently drop a caller's input. */
function checkAuthCollisions(
  auth: Auth,
  headers: [string, string][],
  grants: Grant[],
  kids: NodeReader[],
): void {
  const authNode = kids.find((k) => k.name === "auth")!;
  if (auth.scheme === "header-token") {
    // Compared as servers read names (case, and "_" as "-"): src/guardfile/header_inputs.ts.
    const clash = headers.find(([name]) => headerKey(name) === headerKey(auth.header));
    if (clash) {
      authNode.error(
        `header "${clash[0]}" would replace the credential auth header-token sends in ` +
          `"${auth.header}" (names ignore case, and servers read "_" as "-"); remove the header node`,
      );
    }
  }
  if (auth.scheme === "query-param") {
    for (const { name } of auth.params) {
      for (const g of grants) {
        const input = g.query.find((q) => q.wire === name);
        // Exactly, or as an upstream that reads names loosely would (case, width, separators).
        const twin = input ? undefined : g.query.find((q) => foldName(q.wire) === foldName(name));
        if (input) {
          authNode.error(
            `auth query-param "${name}" is also a query input of ${g.tool} ("${input.name}"): ` +
              `the caller's value would be silently replaced; remove that input`,
          );
        } else if (twin) {
          authNode.error(
            `auth query-param "${name}" and the query input "${twin.name}" of ${g.tool} (sent ` +
              `as "${twin.wire}") differ only by letter case, width or separators: an upstream ` +
              `that matches names loosely could take the caller's value for the credential; ` +
              `remove that input, or rename it`,
          );
        }
      }
    }
  }
}

function readHeaders(kids: NodeReader[]): [string, string][] {
  const out: [string, string][] = [];
  for (const node of kids.filter((k) => k.name === "header")) {
    node.onlyProperties();
    node.noChildren();
    if (!node.argCount(2, 2, `a name and a value, e.g. header "Accept" "application/json"`)) {
      continue;
    }
    const name = node.stringArg(0, "the header name");
    const value = node.stringArg(1, "the header value");
    if (!name || value === undefined) continue;
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      node.error(`"${name}" is not a valid HTTP header name (RFC 9110 token); rename it`);
    } else if (RESERVED_HEADERS.includes(headerKey(name))) {
      node.error(`header "${name}" is reserved: weir sets it (credentials belong in "auth")`);
    } else if (METHOD_OVERRIDE_HEADERS.includes(headerKey(name))) {
      node.error(methodOverride(name));
    } else if (/[\r\n\x00]/.test(value)) {
      node.error(`header "${name}" value contains a line break or NUL`);
    } else if (out.some(([n]) => headerKey(n) === headerKey(name))) {
      node.error(
        `header "${name}" is declared twice (names ignore case, and servers read "_" as "-"); ` +
          `keep one`,
      );
    } else {
      out.push([name, value]);
    }
  }
  return out;
}

function readRestricts(kids: NodeReader[], grants: Grant[]): Restrict[] {
  const out: Restrict[] = [];
  const used = new Set(grants.flatMap((g) => g.pathParams));
  for (const node of kids.filter((k) => k.name === "restrict")) {
    node.onlyProperties();
    node.noChildren();
    if (
      !node.argCount(
        3,
        Infinity,
        `a parameter, "matches" and globs: restrict owner matches "team-*"`,
      )
    ) {
      continue;
    }
    const param = node.stringArg(0, "the restricted parameter");
    if (node.node.values[1] !== "matches") {
      node.error(
        `the second argument of restrict must be the word matches: write restrict owner matches "team-*"`,
      );
      continue;
    }
    const globs: string[] = [];
    for (let i = 2; i < node.node.values.length; i++) {
      const glob = node.stringArg(i, `glob ${i - 1}`);
      if (glob === undefined) continue;
      try {
        compileGlob(glob);
        globs.push(glob);
        for (const warning of globWarnings(glob)) node.warn(warning);
      } catch (error) {
        node.error(`${(error as GlobError).message}; a malformed glob would match nothing: fix it`);
      }
    }
    if (!param) continue;
    if (!used.has(param)) {
      node.error(
        `restrict names "${param}", which no grant's path uses, so it would restrict nothing; ` +
          `fix the name (path parameters: ${[...used].sort().join(", ") || "none"})`,
      );
      continue;
    }
    if (globs.length !== node.node.values.length - 2) continue;
    // The globs are the parameter's advertised pattern, one expression the core compiles.
    const joined = globsPattern(globs);
    const problem = joined && patternProblem(joined, Infinity);
    if (problem) {
      node.error(
        `the globs of restrict ${param} together make one regular expression (the advertised ` +
          `schema's pattern) that ${problem}`,
      );
      continue;
    }
    const oneSegment = grants.flatMap((g) => g.params).filter((p) => p.name === param)
      .every((p) => p.slashes === "refuse");
    for (const glob of oneSegment ? globs.filter(globNeedsSlash) : []) {
      node.warn(
        `glob ${JSON.stringify(glob)} needs a "/", which path parameter "${param}" refuses (it ` +
          `fills one segment), so no value passes it: declare param "${param}" ` +
          `slashes="segments", or drop the "/"`,
      );
    }
    out.push({ param, globs, position: node.node.position });
  }
  return out;
}
