/**
 * The two AWS policy grammars, `wrap ward mcp aws ssm { … }` (an exact-parameter
 * SSM reader) and `wrap ward mcp aws s3 { … }` (a one-bucket S3 publisher).
 * Pure: text in, model or diagnostics out, like the spec grammar beside it.
 *
 * A reference (mcp-beaver) policy file loads unchanged. weir adds, and never
 * changes:
 *
 * - SSM: several `parameter "/exact/name"` nodes; `tool="<resource>"` on a
 *   parameter binds the convenience grant `can get <resource>` to it (with a
 *   single parameter the binding is implicit, as in the reference); either
 *   grant may be left out (at least one is needed).
 * - S3: any non-empty subset of the three grants; markup media types include
 *   every `+xml` type as well as the reference's five; `max-bytes` is capped at
 *   {@link S3_MAX_BYTES_CEILING} (the body is held in memory); `bucket`,
 *   `region`, `prefix` and `base-url` are checked for shape at lint time.
 *
 * Grammar and examples: docs/aws.md and
 * guardfiles/ssm-forgejo-token.mcp.kdl, guardfiles/s3-assets.mcp.kdl.
 *
 * @module
 */
import { type Diagnostic, Diagnostics } from "./diagnostics.ts";
import { type KdlNode, parseKdl } from "./kdl.ts";
import { NodeReader, onlyOnce, show, suggest } from "./nodes.ts";
import { readSurface, SURFACE_NODE } from "./surface.ts";
import type {
  AwsLoadResult,
  AwsMode,
  S3Policy,
  S3Tool,
  SsmConvenienceTool,
  SsmPolicy,
} from "./aws_model.ts";
import { awsModeOf } from "./modes.ts";

export { awsModeOf };

export type * from "./aws_model.ts";

/** Default region of both modes (the reference's). */
export const DEFAULT_REGION = "us-east-1";
/** Default `max-bytes` (8 MiB, the reference's). */
export const S3_DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
/** Largest `max-bytes` weir accepts (64 MiB): the object travels base64 in one JSON body. */
export const S3_MAX_BYTES_CEILING = 64 * 1024 * 1024;
/** S3's own limit on an object key, in UTF-8 bytes. */
export const S3_MAX_KEY_BYTES = 1024;

/**
 * Media types that are markup a browser renders (HTML, XHTML, SVG, XML and
 * every `+xml` type): served from the publisher's origin they are a
 * stored-XSS and phishing surface, so a policy may not allow them.
 */
export function isMarkupType(mediaType: string): boolean {
  const t = mediaType.toLowerCase().split(";")[0].trim();
  return t === "text/html" || t === "application/xhtml+xml" || t === "image/svg+xml" ||
    t === "application/xml" || t === "text/xml" || t.endsWith("+xml") || t === "text/xsl";
}

const SSM_CHILDREN = ["region", "parameter", "can"];
const S3_CHILDREN = ["region", "bucket", "base-url", "prefix", "max-bytes", "content-type", "can"];
const S3_GRANTS: Record<string, S3Tool> = {
  "put object": "put_object",
  "list objects": "list_objects",
  "get object-url": "get_object_url",
};
/** RFC 6838 section 4.2 restricted-name characters. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
/** SSM parameter names: letters, digits, `_ . -`, and `/` for hierarchies (AWS docs). */
const SSM_NAME = /^[A-Za-z0-9_.\-/]+$/;
/** Key characters (a public URL path: nothing that needs escaping). */
const KEY_CHARS = /^[A-Za-z0-9._\-/]*$/;

/** The server name of a policy file: its base name without `.kdl`, then without `.mcp`. */
export function serverNameOf(file: string, fallback: string): string {
  const base = file.split(/[\\/]/).pop() ?? "";
  const name = base.replace(/\.kdl$/, "").replace(/\.mcp$/, "");
  return name || fallback;
}

/**
 * Load an AWS policy.
 *
 * @param text the file's contents
 * @param file the path, for messages and the server name
 * @returns `undefined` when the file is not an AWS policy (its first top-level `wrap`
 *   does not read `wrap ward mcp aws ssm` or `... aws s3`; a cheap text test comes first);
 *   else the mode, the policy (absent when any error was found) and every diagnostic
 */
export function parseAwsPolicy(text: string, file: string): AwsLoadResult | undefined {
  if (!/\bwrap\s+ward\s+mcp\s+aws\s+(ssm|s3)\b/.test(text)) return undefined;
  const parsed = parseKdl(text);
  if ("errors" in parsed) return undefined;
  const mode = awsModeOf(parsed.nodes);
  if (!mode) return undefined;
  return readAwsPolicyNodes(parsed.nodes, file, mode);
}

/**
 * Read an AWS policy from its parsed KDL nodes, whose mode
 * {@link awsModeOf} decided (src/guardfile/load.ts parses once and hands them here).
 * @returns the mode, the policy (absent when any error was found) and every diagnostic
 */
export function readAwsPolicyNodes(nodes: KdlNode[], file: string, mode: AwsMode): AwsLoadResult {
  const diags = new Diagnostics();
  const top = nodes.map((n) => new NodeReader(n, diags));
  const wraps = top.filter((n) => n.name === "wrap");
  for (const node of top) {
    if (node.name !== "wrap" && node.name !== SURFACE_NODE) {
      node.error(
        `unknown top-level node "${node.name}" in an AWS ${mode.toUpperCase()} policy: ` +
          `the whole policy lives inside "wrap ward mcp aws ${mode} { … }" (beside it only ` +
          `"surface"): move it there or remove it`,
      );
    }
  }
  for (const extra of wraps.slice(1)) {
    extra.error(`a second "wrap" block; a policy has exactly one: remove it`);
  }
  const wrap = wraps[0];
  wrap.onlyProperties();
  const surface = readSurface(top);
  const read = mode === "ssm" ? readSsm(wrap, file) : readS3(wrap, file);
  const policy = read && { ...read, surface };
  // File order: by line and column.
  const at = (d: Diagnostic) => d.position ? d.position.line * 1e6 + d.position.column : 0;
  const diagnostics = diags.items.map((d, i) => ({ d, i }))
    .sort((a, b) => at(a.d) - at(b.d) || a.i - b.i).map(({ d }) => d);
  return diags.failed ? { mode, diagnostics } : { mode, policy, diagnostics };
}

function checkChildren(wrap: NodeReader, allowed: string[], mode: AwsMode): NodeReader[] {
  const kids = wrap.children();
  for (const kid of kids) {
    if (!allowed.includes(kid.name)) {
      kid.error(
        `unknown node "${kid.name}" in an AWS ${mode.toUpperCase()} policy${
          suggest(kid.name, allowed)
        }; remove it, or use one of ${allowed.join(" | ")}`,
      );
    }
    if (kid.node.children.length > 0) kid.error(`"${kid.name}" takes no block`);
  }
  return kids.filter((k) => allowed.includes(k.name));
}

function readRegion(kids: NodeReader[]): string {
  const node = onlyOnce(kids, "region");
  if (!node) return DEFAULT_REGION;
  node.onlyProperties();
  if (!node.argCount(1, 1, "the AWS region, e.g. us-east-1")) return DEFAULT_REGION;
  const region = node.stringArg(0, "region");
  if (!region) return DEFAULT_REGION;
  if (!/^[a-z]{2}(-[a-z0-9]+)+-\d{1,2}$/.test(region)) {
    node.error(`region ${show(region)} is not an AWS region name such as "us-east-1"`);
  }
  return region;
}

/** The resource of a `can` grant, `verb resource`, or undefined after reporting. */
function grantKey(can: NodeReader): string | undefined {
  can.onlyProperties();
  if (!can.argCount(2, 2, "a verb and a resource")) return undefined;
  const verb = can.stringArg(0, "the verb");
  const resource = can.stringArg(1, "the resource");
  return verb && resource ? `${verb} ${resource}` : undefined;
}

function readSsm(wrap: NodeReader, file: string): Omit<SsmPolicy, "surface"> {
  const kids = checkChildren(wrap, SSM_CHILDREN, "ssm");
  const region = readRegion(kids);
  const parameters: { name: string; node: NodeReader; resource?: string }[] = [];
  for (const node of kids.filter((k) => k.name === "parameter")) {
    node.onlyProperties(["tool"]);
    if (!node.argCount(1, 1, "the exact parameter name")) continue;
    const name = node.stringArg(0, "the parameter name");
    if (!name) continue;
    if (!SSM_NAME.test(name) || name.length > 2048) {
      node.error(
        `parameter ${show(name)} is not an SSM parameter name: use letters, digits, ` +
          `_ . - and / only (no version or label selector such as ":3")`,
      );
      continue;
    }
    if (parameters.some((p) => p.name === name)) {
      node.error(`parameter ${show(name)} is declared twice; keep one`);
      continue;
    }
    const resource = node.stringProp("tool", "tool=");
    if (resource !== undefined && parameters.some((p) => p.resource === resource)) {
      node.error(`tool="${resource}" already binds another parameter; a tool reads one parameter`);
      continue;
    }
    parameters.push({ name, node, resource });
  }
  if (parameters.length === 0) {
    wrap.error(
      `no "parameter": name the exact SSM parameter this server may read, e.g. ` +
        `parameter "/team/service/read-token"`,
    );
  }
  let getParameter = false;
  const convenience: { resource: string; node: NodeReader }[] = [];
  for (const can of kids.filter((k) => k.name === "can")) {
    const key = grantKey(can);
    if (!key) continue;
    const [verb, resource] = key.split(" ");
    if (verb !== "get") {
      can.error(
        `unsupported SSM grant "can ${key}": this reader only reads; grant ` +
          `"can get parameter" and/or "can get <name>" for a declared parameter`,
      );
      continue;
    }
    if (resource === "parameter") {
      if (getParameter) can.error(`"can get parameter" appears twice; keep one`);
      getParameter = true;
      continue;
    }
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(resource)) {
      can.error(`resource ${show(resource)} must be letters, digits, - and _ (it names a tool)`);
      continue;
    }
    const minted = `get_${resource.replaceAll("-", "_")}`;
    if (minted.length > 128) {
      can.error(
        `"can get ${resource.slice(0, 20)}..." mints a tool name of ${minted.length} characters; ` +
          `an MCP tool name is at most 128: shorten the resource to 124 characters or fewer`,
      );
      continue;
    }
    const twin = convenience.find((c) => `get_${c.resource.replaceAll("-", "_")}` === minted);
    if (twin) {
      can.error(
        `"can get ${resource}" mints "${minted}" as "can get ${twin.resource}" does; keep one`,
      );
      continue;
    }
    convenience.push({ resource, node: can });
  }
  if (!getParameter && convenience.length === 0) {
    wrap.error(`nothing to mount: add "can get parameter" (and/or "can get <name>")`);
  }
  const toolOf = (resource: string) => `get_${resource.replaceAll("-", "_")}`;
  const bound: SsmConvenienceTool[] = [];
  for (const c of convenience) {
    // Bound by tool= on a parameter; or, the reference form, the one parameter there is.
    const target = parameters.find((p) => p.resource === c.resource) ??
      (parameters.length === 1 && parameters[0].resource === undefined ? parameters[0] : undefined);
    if (!target) {
      c.node.error(
        `"can get ${c.resource}" reads no parameter: ` +
          (parameters.length > 1
            ? `with several parameters, bind it with parameter "/exact/name" tool="${c.resource}"`
            : `declare the parameter it reads`),
      );
      continue;
    }
    if (toolOf(c.resource) === "get_parameter") {
      c.node.error(`"can get ${c.resource}" would mint "get_parameter", the general getter`);
      continue;
    }
    bound.push({ tool: toolOf(c.resource), parameter: target.name });
  }
  for (const p of parameters) {
    if (p.resource !== undefined && !convenience.some((c) => c.resource === p.resource)) {
      p.node.error(
        `tool="${p.resource}" names no grant: add "can get ${p.resource}", or remove tool=`,
      );
    }
  }
  return {
    mode: "ssm",
    file,
    name: serverNameOf(file, "ssm"),
    region,
    parameters: parameters.map((p) => p.name),
    getParameter,
    convenience: bound.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0)),
  };
}

/** Which key rule a key breaks (see {@link keyFault}). */
export type KeyFault = "empty" | "characters" | "separator" | "dot_segment";

/**
 * Check a key (or key prefix) against the publisher's key rules: characters
 * `[A-Za-z0-9._-/]`, no leading or trailing `/` (a trailing one is allowed for a
 * listing prefix), no empty, `.` or `..` segment.
 *
 * @returns `undefined` when the key is acceptable, else which rule it breaks
 *   and why, in words (no key text inside)
 */
export function keyFault(
  key: string,
  options: { listing?: boolean } = {},
): { fault: KeyFault; text: string } | undefined {
  const fault = (f: KeyFault, text: string) => ({ fault: f, text });
  if (key === "") return options.listing ? undefined : fault("empty", "is empty");
  if (!KEY_CHARS.test(key)) {
    return fault("characters", "may only use letters, digits, dash, underscore, dot and slash");
  }
  if (key.startsWith("/")) {
    return fault("separator", "starts with / (keys are relative to the policy prefix)");
  }
  if (!options.listing && key.endsWith("/")) {
    return fault("separator", "ends with / (it must name an object)");
  }
  const segments = key.split("/");
  if (options.listing && key.endsWith("/")) segments.pop();
  for (const s of segments) {
    if (s === "") return fault("empty", "has an empty path segment (//)");
    if (s === "." || s === "..") return fault("dot_segment", `has a "${s}" segment (no traversal)`);
  }
  return undefined;
}

/** {@link keyFault}'s words only. */
export function keyProblem(key: string, options: { listing?: boolean } = {}): string | undefined {
  return keyFault(key, options)?.text;
}

function readS3(wrap: NodeReader, file: string): Omit<S3Policy, "surface"> {
  const kids = checkChildren(wrap, S3_CHILDREN, "s3");
  const region = readRegion(kids);
  const one = (name: string, what: string): string | undefined => {
    const node = onlyOnce(kids, name);
    if (!node) return undefined;
    node.onlyProperties();
    if (!node.argCount(1, 1, what)) return undefined;
    return node.stringArg(0, name);
  };
  const bucket = one("bucket", "the bucket name");
  if (!kids.some((k) => k.name === "bucket")) {
    wrap.error(`missing "bucket": name the one bucket this publisher writes, e.g. bucket "assets"`);
  } else if (
    bucket !== undefined &&
    (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes(".."))
  ) {
    kids.find((k) => k.name === "bucket")!.error(
      `bucket ${show(bucket)} is not an S3 bucket name: write the bucket's name as S3 has it ` +
        `(3 to 63 of a-z 0-9 . -, starting and ending with a letter or digit)`,
    );
  }
  let baseUrl = one("base-url", "the public URL the objects are served from");
  const baseNode = kids.find((k) => k.name === "base-url");
  if (!baseNode) {
    wrap.error(
      `missing "base-url": the public root the objects are served from, e.g. base-url "https://files.example.com"`,
    );
  } else if (baseUrl !== undefined) {
    if (!plainHttpUrl(baseUrl)) {
      baseNode.error(
        `base-url ${show(baseUrl)} must be an absolute http(s) URL without query, fragment or ` +
          `credentials, e.g. "https://files.example.com"`,
      );
    }
    baseUrl = baseUrl.replace(/\/+$/, "");
  }
  let prefix = "";
  const prefixNode = onlyOnce(kids, "prefix");
  if (prefixNode) {
    prefixNode.onlyProperties();
    if (prefixNode.argCount(1, 1, "the key prefix")) {
      const raw = prefixNode.node.values[0];
      if (typeof raw !== "string") {
        prefixNode.error(
          `prefix must be a quoted string, found ${show(raw)}: write it in double quotes`,
        );
      } else {
        const trimmed = raw.replace(/^\/+|\/+$/g, "");
        const problem = trimmed === "" ? undefined : keyProblem(trimmed);
        if (problem) {
          prefixNode.error(
            `prefix ${show(raw)} ${problem}; write the key prefix as a relative path of ` +
              `letters, digits and - _ . such as "charts/2024"`,
          );
        } else if (trimmed) prefix = `${trimmed}/`;
      }
    }
  }
  let maxBytes = S3_DEFAULT_MAX_BYTES;
  const maxNode = onlyOnce(kids, "max-bytes");
  if (maxNode) {
    maxNode.onlyProperties();
    if (maxNode.argCount(1, 1, "the largest object, in bytes")) {
      const raw = maxNode.node.values[0];
      const n = typeof raw === "number"
        ? raw
        : typeof raw === "string" && /^\s*\d+\s*$/.test(raw)
        ? Number(raw)
        : NaN;
      if (!Number.isSafeInteger(n) || n <= 0) {
        maxNode.error(
          `max-bytes must be a whole number of bytes above 0, found ${show(raw)}; write the ` +
            `largest object to accept, e.g. max-bytes 2097152`,
        );
      } else if (n > S3_MAX_BYTES_CEILING) {
        maxNode.error(
          `max-bytes ${n} is over weir's ceiling of ${S3_MAX_BYTES_CEILING} bytes (64 MiB): ` +
            `an object travels base64-encoded inside one JSON request; lower it to at most ` +
            `${S3_MAX_BYTES_CEILING}`,
        );
      } else maxBytes = n;
    }
  }
  const contentTypes: string[] = [];
  for (const node of kids.filter((k) => k.name === "content-type")) {
    node.onlyProperties();
    if (!node.argCount(1, 1, "one media type")) continue;
    const raw = node.stringArg(0, "content-type");
    if (!raw) continue;
    const t = raw.trim().toLowerCase();
    if (!MEDIA_TYPE.test(t)) {
      node.error(`content-type ${show(raw)} is not a media type such as "image/png"`);
    } else if (isMarkupType(t)) {
      node.error(
        `content-type ${show(raw)} is markup a browser renders: published from this origin it ` +
          `is a stored-XSS and phishing surface; remove it, or list text/plain instead`,
      );
    } else if (contentTypes.includes(t)) {
      node.error(`content-type ${show(raw)} is listed twice; keep one`);
    } else contentTypes.push(t);
  }
  if (!kids.some((k) => k.name === "content-type")) {
    wrap.error(
      `no "content-type": list each media type this publisher accepts, e.g. content-type "image/png"`,
    );
  }
  const tools = new Set<S3Tool>();
  for (const can of kids.filter((k) => k.name === "can")) {
    const key = grantKey(can);
    if (!key) continue;
    const tool = Object.hasOwn(S3_GRANTS, key) ? S3_GRANTS[key] : undefined;
    if (!tool) {
      can.error(
        `unsupported S3 grant "can ${key}": remove it; the publisher grants only ` +
          `"can put object", "can list objects" and "can get object-url" (there is no delete)`,
      );
    } else if (tools.has(tool)) can.error(`"can ${key}" appears twice; keep one`);
    else tools.add(tool);
  }
  if (tools.size === 0 && !kids.some((k) => k.name === "can")) {
    wrap.error(
      `nothing to mount: add "can put object", "can list objects" and/or "can get object-url"`,
    );
  }
  return {
    mode: "s3",
    file,
    name: serverNameOf(file, "s3"),
    region,
    bucket: bucket ?? "",
    baseUrl: baseUrl ?? "",
    prefix,
    maxBytes,
    contentTypes,
    tools: [...tools].sort(),
  };
}

/**
 * `text` as a URL when it is an absolute http(s) URL (WHATWG URL Standard)
 * without query, fragment or credentials (user name, password); else
 * `undefined`. `base-url` here and the `AWS_ENDPOINT_URL*` variables
 * (`src/aws/config.ts`) are held to it.
 */
export function plainHttpUrl(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.search || url.hash || url.username || url.password) return undefined;
  return url;
}
