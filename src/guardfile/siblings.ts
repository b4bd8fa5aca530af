/**
 * The nodes beside `wrap`: context the server offers (`resource`, `prompt`,
 * `icon`) and controls on grants (`cache`, `reject-empty`,
 * `reject-empty-argument`, `pin`, `rate-limit`). Each fails closed on an
 * unknown property or child, and every tool name must be one this file mints.
 * Grammar: `docs/guardfile.md` (sibling nodes).
 *
 * @module
 */
import {
  type Controls,
  forTool,
  type Grant,
  type PromptTemplate,
  type QueryPin,
  type RateStore,
  type ServerIcon,
  type StaticResource,
} from "./model.ts";
import { type NodeReader, onlyOnce, show, suggest } from "./nodes.ts";
import { formatDuration, parseDuration } from "./duration.ts";
import { readQueryPin } from "./query_pin.ts";
import { grantInputNames } from "./grant.ts";
import { uriProblem } from "./uri.ts";

const ROLES = ["assistant", "user"] as const;
/** `extract` kinds: their bound, its default and ceiling (the reference's numbers). */
const EXTRACTIONS: Readonly<
  Record<string, { bound: string; other: string; unit: string; default: number; ceiling: number }>
> = {
  "pdf-text": { bound: "max-pages", other: "max-items", unit: "pages", default: 20, ceiling: 200 },
  "feed-entries": {
    bound: "max-items",
    other: "max-pages",
    unit: "items",
    default: 25,
    ceiling: 250,
  },
};
const CACHE_CEILING_MS = 24 * 3_600_000;

/** `resource` nodes; also warns about each one without `audience`. */
export function readResources(top: NodeReader[]): StaticResource[] {
  const out: StaticResource[] = [];
  for (const node of top.filter((n) => n.name === "resource")) {
    node.onlyProperties(["uri", "mime", "title", "priority"]);
    if (!node.argCount(1, 1, "the resource name")) continue;
    const name = node.stringArg(0, "resource name");
    if (!name) continue;
    const uri = node.node.properties.uri;
    if (uri === undefined || uri === "") {
      node.error(`resource needs uri="<scheme>:..." (a non-empty URI); add one`);
      continue;
    }
    if (typeof uri !== "string" || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri)) {
      node.error(`uri=${show(uri)} must be an absolute URI with a scheme, e.g. "docs://policy"`);
      continue;
    }
    const wrong = uriProblem(uri);
    if (wrong) {
      node.error(`uri=${show(uri)} ${wrong}`);
      continue;
    }
    if (out.some((r) => r.uri === uri)) {
      node.error(`resource uri "${uri}" is declared twice; give each resource its own uri`);
      continue;
    }
    const resource: StaticResource = {
      name: name ?? "",
      uri,
      mimeType: node.stringProp("mime") ?? "text/plain",
      text: "",
      position: node.node.position,
    };
    const title = node.stringProp("title");
    if (title) resource.title = title;
    if ("priority" in node.node.properties) {
      const p = node.node.properties.priority;
      if (typeof p !== "number" || !Number.isFinite(p)) {
        node.error(
          `priority=${show(p)} must be a number between 0 and 1: write one such as priority=0.5`,
        );
      } else if (p < 0 || p > 1) {
        node.error(`priority=${p} is outside 0..1: write a number from 0 to 1`);
      } else {
        resource.priority = p;
      }
    }
    const kids = node.onlyChildren(["description", "audience", "text"]);
    const description = onlyOnce(kids, "description");
    if (description) resource.description = singleText(description);
    const audience = onlyOnce(kids, "audience");
    if (audience) {
      audience.onlyProperties();
      audience.noChildren();
      const roles: ("assistant" | "user")[] = [];
      if (audience.node.values.length === 0) {
        audience.error(
          `audience needs at least one role: write audience "assistant", "user" or both`,
        );
      }
      for (const v of audience.node.values) {
        if (!ROLES.includes(v as "user")) {
          audience.error(`audience role ${show(v)} is unknown; use "assistant" or "user"`);
        } else if (roles.includes(v as "user")) {
          audience.error(`audience role "${v}" is repeated; keep one`);
        } else {
          roles.push(v as "user");
        }
      }
      resource.audience = roles;
    }
    const lines = kids.filter((k) => k.name === "text").map(singleText).filter((t) =>
      t !== undefined
    );
    if (lines.length === 0) {
      node.error(`resource "${name}" needs at least one text "..." line; add one`);
      continue;
    }
    resource.text = lines.join("\n");
    if (!audience) {
      node.warn(
        `resource "${name}" has no audience: say who it is for with audience "assistant", ` +
          `audience "user", or both`,
      );
    }
    out.push(resource);
  }
  return out.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}

/** `prompt` nodes. */
export function readPrompts(top: NodeReader[]): PromptTemplate[] {
  const out: PromptTemplate[] = [];
  for (const node of top.filter((n) => n.name === "prompt")) {
    node.onlyProperties(["title"]);
    if (!node.argCount(1, 1, "the prompt name")) continue;
    const name = node.stringArg(0, "prompt name");
    if (!name) continue;
    if (out.some((p) => p.name === name)) {
      node.error(`prompt "${name}" is declared twice; keep one`);
      continue;
    }
    const prompt: PromptTemplate = { name, arguments: [], text: "" };
    const title = node.stringProp("title");
    if (title) prompt.title = title;
    const kids = node.onlyChildren(["description", "argument", "text"]);
    const description = onlyOnce(kids, "description");
    if (description) prompt.description = singleText(description);
    for (const arg of kids.filter((k) => k.name === "argument")) {
      arg.onlyProperties(["description", "title", "required"]);
      arg.noChildren();
      if (!arg.argCount(1, 1, "the argument name")) continue;
      const argName = arg.stringArg(0, "argument name");
      if (!argName) continue;
      if ("required" in arg.node.properties && typeof arg.node.properties.required !== "boolean") {
        arg.error(
          `required= must be a boolean (#true or #false), found ${
            show(arg.node.properties.required)
          }: write required=#true or drop it`,
        );
        continue;
      }
      if (prompt.arguments.some((a) => a.name === argName)) {
        arg.error(`argument "${argName}" is declared twice; keep one`);
        continue;
      }
      const entry: PromptTemplate["arguments"][number] = {
        name: argName,
        required: arg.node.properties.required === true,
      };
      const d = arg.stringProp("description");
      if (d) entry.description = d;
      const t = arg.stringProp("title");
      if (t) entry.title = t;
      prompt.arguments.push(entry);
    }
    const lines = kids.filter((k) => k.name === "text").map(singleText).filter((t) =>
      t !== undefined
    );
    if (lines.length === 0) {
      node.error(`prompt "${name}" needs at least one text "..." line; add one`);
      continue;
    }
    prompt.text = lines.join("\n");
    out.push(prompt);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `icon` nodes. */
export function readIcons(top: NodeReader[]): ServerIcon[] {
  const out: ServerIcon[] = [];
  for (const node of top.filter((n) => n.name === "icon")) {
    node.onlyProperties(["mime", "sizes"]);
    node.noChildren();
    if (!node.argCount(1, 1, "the icon source (a URL or data: URI)")) continue;
    const src = node.stringArg(0, "icon source");
    if (!src) continue;
    // The core lists it as serverInfo.icons[].src, an absolute URI (a data: URI is one).
    const wrong = uriProblem(src);
    if (wrong) {
      node.error(`icon source ${show(src)} ${wrong}`);
      continue;
    }
    const icon: ServerIcon = { src };
    const mime = node.stringProp("mime") ?? /^data:([^;,]+)[;,]/.exec(src)?.[1];
    if (mime) icon.mimeType = mime;
    const sizes = node.stringProp("sizes");
    if (sizes) icon.sizes = sizes.split(/\s+/).filter(Boolean);
    out.push(icon);
  }
  return out;
}

/** The control nodes, checked against the grants they name. */
export function readControls(top: NodeReader[], grants: Grant[]): Controls {
  const byTool = new Map(grants.map((g) => [g.tool, g]));
  const controls: Controls = {
    extract: {},
    confirm: {},
    cache: {},
    rejectEmpty: [],
    rejectEmptyArguments: {},
    pins: {},
  };
  const grantOf = (node: NodeReader, what: string): Grant | undefined => {
    if (!node.argCount(1, 1, "the tool name")) return undefined;
    const tool = node.stringArg(0, `${what} tool`);
    if (!tool) return undefined;
    const grant = byTool.get(tool);
    if (!grant) {
      node.error(
        `"${tool}" is not a grant-backed tool of this guardfile; ${what} applies to grants: name the tool a "can" grant mints${
          suggest(tool, grants.map((g) => g.tool))
        }`,
      );
    }
    return grant;
  };

  for (const node of top.filter((n) => n.name === "extract")) {
    node.onlyProperties(["as", "max-pages", "max-items"]);
    node.noChildren();
    const grant = grantOf(node, "extract");
    const kind = node.node.properties.as;
    if (kind === undefined) {
      node.error(`extract needs \`as="pdf-text"\` or \`as="feed-entries"\`; add one`);
      continue;
    }
    const rule = EXTRACTIONS[kind as string];
    if (typeof kind !== "string" || !rule) {
      node.error(`as=${show(kind)} is not an extraction; use as="pdf-text" or as="feed-entries"`);
      continue;
    }
    if (rule.other in node.node.properties) {
      node.error(
        `${rule.other}= does not apply: as="${kind}" bounds ${rule.unit} rather than ` +
          `${rule.unit === "pages" ? "items" : "pages"}; use ${rule.bound}=`,
      );
      continue;
    }
    let max = rule.default;
    if (rule.bound in node.node.properties) {
      const raw = node.node.properties[rule.bound];
      if (typeof raw !== "string" || !/^\d+$/.test(raw)) {
        node.error(
          `${rule.bound}=${show(raw)} must be a whole number, quoted: write ${rule.bound}="10"`,
        );
        continue;
      }
      max = Number(raw);
      if (max < 1 || max > rule.ceiling) {
        node.error(`${rule.bound}="${raw}" must be between 1 and ${rule.ceiling}`);
        continue;
      }
    }
    if (!grant) continue;
    if (!grant.rawResponse) {
      node.error(
        `extract "${grant.tool}" needs the grant to declare raw-response (the answer is a ` +
          `${kind === "pdf-text" ? "PDF" : "feed"}, not JSON)`,
      );
      continue;
    }
    if (Object.hasOwn(controls.extract, grant.tool)) {
      node.error(`extract "${grant.tool}" is a duplicate; keep one`);
      continue;
    }
    controls.extract[grant.tool] = { as: kind as "pdf-text" | "feed-entries", max };
  }

  for (const node of top.filter((n) => n.name === "confirm")) {
    node.onlyProperties(["message"]);
    node.noChildren();
    if (node.node.values.length === 0) {
      node.error(
        `confirm needs the tool it gates: add it, e.g. confirm "delete_issue" message="..."`,
      );
      continue;
    }
    const grant = grantOf(node, "confirm");
    let message: string | undefined;
    if ("message" in node.node.properties) {
      const m = node.node.properties.message;
      if (typeof m !== "string" || m.trim() === "") {
        node.error(
          `message= must be a non-empty quoted string; write one, or leave it out for the default`,
        );
        continue;
      }
      message = m.trim();
    }
    if (!grant) continue;
    if (Object.hasOwn(controls.confirm, grant.tool)) {
      node.error(`confirm "${grant.tool}" is a duplicate; keep one`);
      continue;
    }
    controls.confirm[grant.tool] = message ??
      `Allow the assistant to run "${grant.tool}" with these arguments?`;
  }

  for (const node of top.filter((n) => n.name === "cache")) {
    node.onlyProperties(["ttl"]);
    node.noChildren();
    const grant = grantOf(node, "cache");
    const ttl = node.node.properties.ttl;
    if (ttl === undefined) {
      node.error(`cache needs a ttl, e.g. ttl="15m"`);
      continue;
    }
    const ms = typeof ttl === "string" ? parseDuration(ttl) : null;
    if (ms === null) {
      node.error(`ttl=${show(ttl)} must be a duration such as "30s", "15m" or "1h" (quoted)`);
      continue;
    }
    if (ms <= 0) {
      node.error(`ttl=${show(ttl)} must be positive; write a duration such as ttl="5m"`);
      continue;
    }
    if (ms > CACHE_CEILING_MS) {
      node.error(`ttl=${show(ttl)} is over the ${formatDuration(CACHE_CEILING_MS)} ceiling`);
      continue;
    }
    if (!grant) continue;
    if (grant.destructive) {
      node.error(
        `"${grant.tool}" cannot be cached: it is a grant which is destructive ` +
          `(a cached answer would hide that the call did not run again)`,
      );
      continue;
    }
    if (Object.hasOwn(controls.cache, grant.tool)) {
      node.error(`cache "${grant.tool}" is a duplicate; keep one`);
      continue;
    }
    if (Object.hasOwn(controls.confirm, grant.tool)) {
      node.error(
        `"${grant.tool}" cannot be cached: it is confirm-gated, and a cached answer would ` +
          `skip the human gate; remove the cache node`,
      );
      continue;
    }
    controls.cache[grant.tool] = ms;
  }

  for (const node of top.filter((n) => n.name === "reject-empty")) {
    node.onlyProperties();
    node.noChildren();
    const grant = grantOf(node, "reject-empty");
    if (!grant) continue;
    if (controls.rejectEmpty.includes(grant.tool)) {
      node.error(`reject-empty "${grant.tool}" is a duplicate; keep one`);
      continue;
    }
    controls.rejectEmpty.push(grant.tool);
  }

  for (const node of top.filter((n) => n.name === "reject-empty-argument")) {
    node.onlyProperties(["field"]);
    node.noChildren();
    const grant = grantOf(node, "reject-empty-argument");
    const field = node.stringProp("field");
    if (field === undefined) {
      if (!("field" in node.node.properties)) {
        node.error(`reject-empty-argument needs field="<input>"; add it`);
      }
      continue;
    }
    if (!grant) continue;
    const inputs = grantInputNames(grant);
    if (!inputs.includes(field)) {
      node.error(
        `"${grant.tool}" declares no input "${field}"; name one of its inputs (${
          inputs.join(", ") || "none"
        })`,
      );
      continue;
    }
    const list = forTool(controls.rejectEmptyArguments, grant.tool) ??
      (controls.rejectEmptyArguments[grant.tool] = []);
    if (list.includes(field)) {
      node.error(`reject-empty-argument "${grant.tool}" field="${field}" is a duplicate; keep one`);
      continue;
    }
    list.push(field);
  }

  for (const node of top.filter((n) => n.name === "pin")) {
    if (Object.keys(node.node.properties).length > 0) {
      node.error(
        `pin takes a block of query pins, not properties: write pin "<tool>" { query "<name>" env "<VAR>"; }`,
      );
    }
    const grant = grantOf(node, "pin");
    const kids = node.onlyChildren(["query"]);
    if (node.node.children.length === 0) {
      node.error(`pin needs a block: add query "<name>" env "<VAR>" inside it`);
    }
    if (grant && controls.pins[grant.tool]) {
      node.error(`pin "${grant.tool}" is a duplicate; put every pinned query in one block`);
      continue;
    }
    const pins: QueryPin[] = [];
    for (const q of kids) {
      const pin = readQueryPin(q, grant, pins);
      if (pin) pins.push(pin);
    }
    if (grant && pins.length > 0) controls.pins[grant.tool] = pins;
  }

  const limits = top.filter((n) => n.name === "rate-limit");
  for (const extra of limits.slice(1)) extra.error(`"rate-limit" appears more than once; keep one`);
  const limit = limits[0];
  if (limit) {
    limit.onlyProperties();
    const store = readStore(limit);
    if (limit.argCount(1, 1, `"<count>/<duration>", e.g. "60/1m"`)) {
      const spec = limit.stringArg(0, "the rate");
      const m = spec ? /^(\d+)\/(.+)$/.exec(spec) : null;
      const count = m ? Number(m[1]) : NaN;
      const windowMs = m ? parseDuration(m[2]) : null;
      if (spec && (!m || !Number.isInteger(count) || count <= 0)) {
        limit.error(
          `rate ${
            JSON.stringify(spec)
          } needs a positive whole count: write "<count>/<duration>", e.g. "60/1m"`,
        );
      } else if (spec && (windowMs === null || windowMs <= 0)) {
        limit.error(`rate ${JSON.stringify(spec)} needs a positive duration such as 1s, 1m or 24h`);
      } else if (spec) {
        controls.rateLimit = { count, windowMs: windowMs! };
        if (store) controls.rateLimit.store = store;
      }
    }
  }
  return controls;
}

/**
 * The block of `rate-limit`: `store redis env|literal "<url>"` and an optional
 * `bucket "<key>"`. A literal URL is checked here; an `env` one when the
 * server is built (the loader is pure and reads no environment).
 */
function readStore(limit: NodeReader): RateStore | undefined {
  const kids = limit.onlyChildren(["store", "bucket"]);
  const stores = kids.filter((k) => k.name === "store");
  const buckets = kids.filter((k) => k.name === "bucket");
  for (const extra of stores.slice(1)) extra.error(`"store" appears more than once; keep one`);
  for (const extra of buckets.slice(1)) extra.error(`"bucket" appears more than once; keep one`);
  let bucket: string | undefined;
  if (buckets[0]) {
    const b = buckets[0];
    b.onlyProperties();
    b.noChildren();
    if (b.argCount(1, 1, `the bucket key, e.g. bucket "github-api"`)) {
      bucket = b.stringArg(0, "the bucket key");
      if (bucket === "") b.error(`bucket needs a non-empty key`);
    }
    if (!stores[0]) {
      b.error(
        `bucket names a shared bucket, which needs a store: add store redis env "REDIS_URL", or remove bucket`,
      );
    }
  }
  const node = stores[0];
  if (!node) return undefined;
  node.onlyProperties();
  node.noChildren();
  if (!node.argCount(3, 3, `a driver, a provider and an address: store redis env "REDIS_URL"`)) {
    return undefined;
  }
  const driver = node.stringArg(0, "the store driver");
  const provider = node.stringArg(1, "the provider");
  const address = node.stringArg(2, "the address");
  if (driver === undefined || provider === undefined || address === undefined) return undefined;
  if (driver !== "redis") {
    node.error(
      `unknown store driver "${driver}"; the only shared store is redis: write store redis env "REDIS_URL"`,
    );
    return undefined;
  }
  if (provider !== "env" && provider !== "literal") {
    node.error(`store provider "${provider}" is not allowed; use env (or literal)`);
    return undefined;
  }
  if (address === "") {
    node.error(`store ${provider} needs a non-empty address`);
    return undefined;
  }
  if (provider === "literal" && !isRedisUrl(address)) {
    node.error(`store literal is not a redis URL; write redis://host:port (or rediss://)`);
    return undefined;
  }
  const store: RateStore = {
    driver: "redis",
    url: { provider, address },
    position: node.node.position,
  };
  if (bucket) store.bucket = bucket;
  return store;
}

/** `redis://` or `rediss://` with a host; never echoed (it may hold a password). */
export function isRedisUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname !== "";
  } catch {
    return false;
  }
}

function singleText(node: NodeReader): string | undefined {
  node.onlyProperties();
  node.noChildren();
  if (!node.argCount(1, 1, "one quoted string")) return undefined;
  const v = node.node.values[0];
  if (typeof v !== "string") {
    node.error(`${node.name} must be a quoted string: write it in double quotes`);
    return undefined;
  }
  return v;
}
