/**
 * What weir adds to a grant's request (src/guard/outgoing.ts
 * `resolveCallValues`, src/guard/values.ts `resolveValueNow`) is settled
 * without a promise when no value is read from a file. Over generated
 * guardfiles (base URL, pins and every auth scheme, each from chains of
 * environment variables, files and literals; values missing, empty, padded,
 * with control characters, too short, not URLs; files refused or failing)
 * the values, the error (kind and message) and the secrets registered are
 * those of the async code it replaced, kept below as the reference; and the
 * answer is a promise exactly when a file is read.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { normalizeBaseUrl } from "../../src/guardfile/parse.ts";
import {
  forTool,
  type Guardfile,
  type QueryPin,
  type ValueSource,
} from "../../src/guardfile/model.ts";
import { WeirError } from "../../src/errors/kinds.ts";
import { MIN_SECRET_LENGTH, Redactor } from "../../src/guard/secrets.ts";
import {
  type MissingValueKind,
  type Resolved,
  resolveValueNow,
  type ValueResolver,
} from "../../src/guard/values.ts";
import { type CallValues, resolveCallValues } from "../../src/guard/outgoing.ts";
import { FileRefused } from "../../src/ops/bounded_file.ts";
import type { Grant } from "../../src/guardfile/model.ts";

// ---- The reference: the async code before, verbatim but for names. ----

async function referenceValue(
  source: ValueSource,
  resolver: ValueResolver,
  what: string,
  options: { code?: MissingValueKind } = {},
): Promise<Resolved> {
  const tried: string[] = [];
  for (const { provider, address } of source.chain) {
    let value: string | undefined;
    if (provider === "env") {
      value = resolver.env(address);
      tried.push(`environment variable ${address}`);
    } else if (provider === "file") {
      tried.push(`file ${address}`);
      try {
        value = (await resolver.readFile(address)).trim();
      } catch (error) {
        // A refused file says why (never its content): "set file X" alone would send
        // the operator to a file that exists.
        if (error instanceof FileRefused) tried[tried.length - 1] += ` (${error.reason})`;
        value = undefined;
      }
    } else if (provider === "literal") {
      value = address;
      tried.push("a literal");
    }
    if (value !== undefined && value !== "") {
      return { value, secret: provider !== "literal", source: tried[tried.length - 1] };
    }
  }
  throw new WeirError(
    options.code ?? "value_missing",
    `${what} is not available: set ${tried.join(", or ")} (checked at every call)`,
  );
}

/** The last base-url value read from a provider and its normalized form. */
let lastBase: { raw: string; normalized: string } | undefined;

async function referenceCallValues(
  guardfile: Guardfile,
  grant: Grant,
  resolver: ValueResolver,
  redactor: Redactor,
): Promise<CallValues> {
  const base = await baseUrlOf(guardfile, resolver);
  const pins: CallValues["pins"] = [];
  for (const pin of forTool(guardfile.controls.pins, grant.tool) ?? []) {
    const { value, secret } = await resolvePin(pin, resolver, redactor);
    pins.push({ name: pin.name, value, secret });
  }
  const values: CallValues = { base, pins, authQuery: [] };
  const auth = guardfile.auth;
  if (auth.scheme === "header-token") {
    values.authField = [
      auth.header.toLowerCase(),
      auth.prefix + await credential(auth.value, resolver, redactor),
    ];
  } else if (auth.scheme === "bearer") {
    values.authField = [
      "authorization",
      `Bearer ${await credential(auth.value, resolver, redactor)}`,
    ];
  } else if (auth.scheme === "token-exchange") {
    // The caller's identity: its exchanged token is set once the caller is known
    // (`withExchangedToken`, stage (b)); a request without one is never sent.
  } else if (auth.scheme === "query-param") {
    for (const p of auth.params) {
      values.authQuery.push([
        p.name,
        await credential(p.value, resolver, redactor, ` "${p.name}"`),
      ]);
    }
  }
  return values;
}
async function credential(
  source: ValueSource,
  resolver: ValueResolver,
  redactor: Redactor,
  name = "",
): Promise<string> {
  const resolved = await referenceValue(source, resolver, `the upstream credential${name}`, {
    code: "credential_missing",
  });
  // What is sent is what is redacted: surrounding whitespace (a trailing
  // newline from `echo` or a file) is not part of the credential; HTTP would
  // strip it from a header anyway (RFC 9110, 5.5).
  resolved.value = resolved.value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "");
  const bad = /[\u0000-\u001f\u007f]/.exec(resolved.value);
  if (bad) {
    const what = bad[0] === "\r" || bad[0] === "\n"
      ? "a line break (CR or LF) inside it"
      : `a control character (U+${
        bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")
      })`;
    throw new WeirError(
      "credential_invalid",
      `the upstream credential${name} from ${resolved.source} has ${what}; ` +
        `no header or query can carry it: fix the value (nothing was sent)`,
      { status: 500 },
    );
  }
  if (resolved.secret && resolved.value.length < MIN_SECRET_LENGTH) {
    throw new WeirError(
      "credential_too_short",
      `the upstream credential${name} from ${resolved.source} is shorter than ` +
        `${MIN_SECRET_LENGTH} characters; weir refuses to send a credential it cannot keep ` +
        `out of results (nothing was sent)`,
      { status: 500 },
    );
  }
  if (resolved.secret) redactor.add(resolved.value);
  return resolved.value;
}
async function baseUrlOf(guardfile: Guardfile, resolver: ValueResolver): Promise<string> {
  if (typeof guardfile.baseUrl === "string") return guardfile.baseUrl;
  const resolved = await referenceValue(guardfile.baseUrl, resolver, "the upstream base-url", {
    code: "base_url_missing",
  });
  if (lastBase?.raw === resolved.value) return lastBase.normalized;
  const normalized = normalizeBaseUrl(resolved.value);
  if (typeof normalized !== "string") {
    // The value itself is not repeated: a misplaced secret must not reach the caller.
    throw new WeirError(
      "base_url_invalid",
      `the base-url from ${resolved.source} is not usable: it must be an http(s) URL with ` +
        `no credentials, query or fragment (nothing was sent)`,
      { status: 500 },
    );
  }
  lastBase = { raw: resolved.value, normalized };
  return normalized;
}
async function resolvePin(
  pin: QueryPin,
  resolver: ValueResolver,
  redactor: Redactor,
): Promise<{ value: string; secret: boolean }> {
  const resolved = await referenceValue(pin.source, resolver, `the pinned query "${pin.name}"`, {
    code: "pin_missing",
  });
  // A pin is policy, not a secret: redacted only when the file says so
  // (secret=#true), or when it is taken out of a URL-valued secret (from=).
  const hidden = pin.secret === true || pin.fromQuery !== undefined;
  const secret = resolved.secret && hidden;
  if (secret) redactor.add(resolved.value);
  if (!pin.fromQuery) return { value: resolved.value, secret: hidden };
  let extracted: string | null = null;
  try {
    extracted = new URL(resolved.value).searchParams.get(pin.fromQuery);
  } catch {
    extracted = null;
  }
  if (!extracted) {
    throw new WeirError(
      "pin_invalid",
      `the pinned query "${pin.name}" could not be taken from ${resolved.source}: it is not ` +
        `a URL with a "${pin.fromQuery}" query parameter`,
      { status: 500 },
    );
  }
  if (secret) redactor.add(extracted);
  return { value: extracted, secret: hidden };
}
// ---- Generated guardfiles and resolvers. ----

const VALUES = [
  undefined,
  "",
  "http://127.0.0.1:9",
  "http://h.example/base/",
  "http://h.example/x?y=1",
  "https://u:p@h.example",
  "ftp://h.example",
  "tk-0123456789abcdef",
  " tk-0123456789abcdef\n",
  "tk-01234\r\n56789abcdef",
  "tk-0123\u00076789abcdef",
  "short",
  "https://h.example/?k=pinned-0123456789",
];
const value = fc.constantFrom(...VALUES);
const source = fc.array(
  fc.oneof(
    fc.constantFrom("A", "B", "C").map((address) => ({ provider: "env", address })),
    fc.constantFrom("F", "G").map((address) => ({ provider: "file", address })),
    fc.constantFrom(...VALUES.filter((v) => v !== undefined)).map((address) => ({
      provider: "literal",
      address: address as string,
    })),
  ),
  { minLength: 1, maxLength: 3 },
).map((chain): ValueSource => ({ chain }));
const pin = fc.record({
  name: fc.constantFrom("k", "org"),
  source,
  fromQuery: fc.option(fc.constant("k"), { nil: undefined }),
  secret: fc.option(fc.boolean(), { nil: undefined }),
}) as fc.Arbitrary<QueryPin>;
const auth = fc.oneof(
  fc.constant({ scheme: "none" as const }),
  fc.constant({ scheme: "token-exchange" as const, exchange: {} }),
  fc.record({
    scheme: fc.constant("header-token" as const),
    header: fc.constantFrom("X-Key", "x-api-key"),
    prefix: fc.constantFrom("", "Token "),
    value: source,
  }),
  fc.record({ scheme: fc.constant("bearer" as const), value: source }),
  fc.record({
    scheme: fc.constant("query-param" as const),
    params: fc.array(fc.record({ name: fc.constantFrom("key", "sig"), value: source }), {
      minLength: 1,
      maxLength: 2,
    }),
  }),
);
/** A file: its text, refused (FileRefused), or failing some other way. */
const file = fc.oneof(
  value.map((v) => ({ text: v ?? "" })),
  fc.constant({ refused: true }),
  fc.constant({ fails: true }),
);

type File = { text?: string; refused?: boolean; fails?: boolean };

function resolverOf(env: Record<string, string | undefined>, files: Record<string, File>) {
  const resolver: ValueResolver = {
    env: (name) => env[name],
    readFile: (path) => {
      const f = files[path];
      if (f.refused) {
        return Promise.reject(
          new FileRefused("value file", path, "not_regular", "a FIFO; use a file"),
        );
      }
      if (f.fails) return Promise.reject(new Error("disk on fire"));
      return Promise.resolve(f.text!);
    },
  };
  return resolver;
}

/** What came of resolving: the values, or the error's kind and message. */
async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return { values: await run() };
  } catch (error) {
    return error instanceof WeirError
      ? { kind: error.kind, message: error.message, status: error.status }
      : { thrown: String(error) };
  }
}

const readsFile = (s: ValueSource) => s.chain.some((c) => c.provider === "file");

Deno.test("a value chain resolves as before, without a promise until a file is read", async () => {
  await fc.assert(
    fc.asyncProperty(
      source,
      fc.record({ A: value, B: value, C: value }),
      fc.record({ F: file, G: file }),
      fc.constantFrom<MissingValueKind | undefined>(undefined, "pin_missing"),
      async (chain, env, files, code) => {
        const resolver = resolverOf(env, files as Record<string, File>);
        const now = await outcome(() => resolveValueNow(chain, resolver, "the thing", code));
        const before = await outcome(() => referenceValue(chain, resolver, "the thing", { code }));
        assert.deepEqual(now, before);
        // A promise only once a file is reached (a source before it may already yield).
        let answer: unknown;
        try {
          answer = resolveValueNow(chain, resolver, "the thing", code);
        } catch {
          answer = undefined;
        }
        if (!readsFile(chain)) assert.equal(answer instanceof Promise, false);
        if (answer instanceof Promise) answer.catch(() => {});
      },
    ),
    { numRuns: 1500 },
  );
});

Deno.test("a grant's values, errors and secrets are those of the async code before", async () => {
  const grant = { tool: "get_thing" } as Grant;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(fc.constant("http://fixed.example/api"), source),
      fc.array(pin, { maxLength: 2 }),
      auth,
      fc.record({ A: value, B: value, C: value }),
      fc.record({ F: file, G: file }),
      async (baseUrl, pins, auth, env, files) => {
        const guardfile = {
          baseUrl,
          auth,
          controls: { pins: pins.length > 0 ? { get_thing: pins } : {} },
        } as unknown as Guardfile;
        const resolver = resolverOf(env, files as Record<string, File>);
        const mine = new Redactor();
        const theirs = new Redactor();
        const now = await outcome(() => resolveCallValues(guardfile, grant, resolver, mine));
        const before = await outcome(() => referenceCallValues(guardfile, grant, resolver, theirs));
        assert.deepEqual(now, before);
        assert.equal(mine.active, theirs.active);
        for (const v of [...VALUES, "0123456789abcdef", "pinned-0123456789"]) {
          if (v) assert.equal(mine.text(v), theirs.text(v), `redaction of ${JSON.stringify(v)}`);
        }
        // Settled at once unless some source chain reads a file.
        const chains = [
          ...(typeof baseUrl === "string" ? [] : [baseUrl]),
          ...pins.map((p) => p.source),
          ...("value" in auth ? [auth.value] : []),
          ...(auth.scheme === "query-param" ? auth.params.map((p) => p.value) : []),
        ];
        let answer: unknown;
        try {
          answer = resolveCallValues(guardfile, grant, resolver, new Redactor());
        } catch {
          answer = undefined;
        }
        if (!chains.some(readsFile)) assert.equal(answer instanceof Promise, false);
        if (answer instanceof Promise) answer.catch(() => {});
      },
    ),
    { numRuns: 1500 },
  );
});
