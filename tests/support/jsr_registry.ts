/**
 * A JSR registry on 127.0.0.1 that `deno publish` uploads to and `deno run
 * jsr:…` downloads from, so a package can be published and used here exactly
 * as it would be on jsr.io. Deno reads both addresses from `JSR_URL`: the
 * registry at its root, the API under `/api/`.
 *
 * - API, as much as `deno publish --token T` asks for: the version does not
 *   exist yet (404), the scope and package do, the upload (`POST
 *   /api/scopes/S/packages/P/versions/V?config=/deno.json`, the gzipped tarball
 *   `deno publish` built, specifiers already rewritten) is kept as is, and its
 *   publishing task succeeds at once. A second upload of a version is refused.
 * - Registry, as JSR serves a published version: `/@S/P/meta.json` (versions,
 *   latest), `/@S/P/V_meta.json` (`manifest`: every uploaded file with its size
 *   and `sha256-<hex>` checksum, which Deno verifies; `exports` from the
 *   uploaded deno.json) and `/@S/P/V/<path>`, the uploaded bytes. Anything else
 *   is 404, so a module the upload lacks fails the import.
 */

/** One uploaded version: path (leading "/") -> bytes. */
export type Files = Map<string, Uint8Array>;

/** A running registry. */
export interface LocalJsr {
  /** The value for `JSR_URL` (ends in "/"). */
  url: string;
  /** Published versions by "@scope/name@version". */
  published: Map<string, Files>;
  /** Every registry path served with 200 (e.g. "/@weir/weir/0.1.0/cli.ts"), in order. */
  served: string[];
  close(): Promise<void>;
}

const decoder = new TextDecoder();

function field(block: Uint8Array, start: number, length: number): string {
  const bytes = block.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return decoder.decode(end < 0 ? bytes : bytes.subarray(0, end));
}

/**
 * The regular files of a tar archive (POSIX ustar and GNU long names), path ->
 * bytes. Throws on a truncated archive.
 */
export function untar(tar: Uint8Array): Files {
  const files: Files = new Map();
  let longName: string | undefined;
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const size = parseInt(field(header, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = field(header, 257, 6).startsWith("ustar") ? field(header, 345, 155) : "";
    const name = longName ?? (prefix ? `${prefix}/` : "") + field(header, 0, 100);
    const body = tar.subarray(at + 512, at + 512 + size);
    if (body.length !== size) throw new Error(`tar: ${name} is truncated`);
    longName = undefined;
    if (type === "L") longName = decoder.decode(body).replace(/\0+$/, "");
    else if (type === "0" || type === "7") {
      files.set(`/${name.replace(/^\.?\//, "")}`, body.slice());
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

async function gunzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

const TYPES: Record<string, string> = {
  ts: "application/typescript; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  json: "application/json",
  md: "text/markdown; charset=utf-8",
};

/** Start the registry on 127.0.0.1, on a port the system picks. */
export function startJsr(): LocalJsr {
  const published = new Map<string, Files>();
  const metas = new Map<string, string>();
  const served: string[] = [];
  const json = (body: unknown, status = 200) => Response.json(body, { status });

  const api = async (request: Request, path: string): Promise<Response> => {
    const version = /^\/api\/scopes\/([^/]+)\/packages\/([^/]+)\/versions\/([^/]+)$/.exec(path);
    if (version && request.method === "POST") {
      const [, scope, name, v] = version;
      const key = `@${scope}/${name}@${v}`;
      if (published.has(key)) {
        return json({ code: "duplicateVersionPublish", message: `${key} exists` }, 409);
      }
      const files = untar(await gunzip(new Uint8Array(await request.arrayBuffer())));
      const manifest: Record<string, { size: number; checksum: string }> = {};
      for (const [file, bytes] of files) {
        manifest[file] = { size: bytes.length, checksum: `sha256-${await sha256(bytes.slice())}` };
      }
      const configFile = new URL(request.url).searchParams.get("config") ?? "/deno.json";
      const config = JSON.parse(decoder.decode(files.get(configFile)));
      const exports = typeof config.exports === "string" ? { ".": config.exports } : config.exports;
      published.set(key, files);
      metas.set(key, JSON.stringify({ manifest, exports }));
      return json({ id: crypto.randomUUID(), status: "success", error: null });
    }
    if (version) return json({ code: "versionNotFound", message: "no such version" }, 404);
    if (/^\/api\/scopes\/[^/]+(\/packages\/[^/]+)?$/.test(path)) return json({});
    return json({ code: "notFound", message: path }, 404);
  };

  const registry = (path: string): Response => {
    const meta = /^\/@([^/]+)\/([^/]+)\/meta\.json$/.exec(path);
    if (meta) {
      const prefix = `@${meta[1]}/${meta[2]}@`;
      const versions = [...published.keys()].filter((k) => k.startsWith(prefix))
        .map((k) => k.slice(prefix.length));
      if (versions.length === 0) return new Response("not found", { status: 404 });
      return json({
        scope: meta[1],
        name: meta[2],
        latest: versions.at(-1),
        versions: Object.fromEntries(versions.map((v) => [v, {}])),
      });
    }
    const versionMeta = /^\/@([^/]+)\/([^/]+)\/([^/]+)_meta\.json$/.exec(path);
    if (versionMeta) {
      const text = metas.get(`@${versionMeta[1]}/${versionMeta[2]}@${versionMeta[3]}`);
      return text === undefined
        ? new Response("not found", { status: 404 })
        : new Response(text, { headers: { "content-type": "application/json" } });
    }
    const file = /^\/@([^/]+)\/([^/]+)\/([^/_][^/]*)(\/.+)$/.exec(path);
    const bytes = file && published.get(`@${file[1]}/${file[2]}@${file[3]}`)?.get(file[4]);
    if (!file || !bytes) return new Response("not found", { status: 404 });
    const ext = file[4].slice(file[4].lastIndexOf(".") + 1);
    return new Response(bytes.slice(), {
      headers: { "content-type": TYPES[ext] ?? "application/octet-stream" },
    });
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = decodeURIComponent(new URL(request.url).pathname);
    if (path.startsWith("/api/")) return api(request, path);
    const response = registry(path);
    if (response.status === 200) served.push(path);
    return response;
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    published,
    served,
    close: () => server.shutdown(),
  };
}
