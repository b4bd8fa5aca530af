/**
 * The secrets-in-arguments search (src/guard/secret_arguments.ts) searches
 * every key and value of a call's arguments in one pass over their texts
 * joined (`Redactor.findsAny`) and names where the first secret sits through
 * parent links. It must answer exactly what searching each key and value
 * alone answers (the reference below, the walk it replaced): the same
 * argument and pointer named, no secret found across two neighbouring values,
 * and a secret holding the separator itself searched value by value.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { Redactor } from "../../src/guard/secrets.ts";
import { secretArgument } from "../../src/guard/secret_arguments.ts";
import { secretEchoes } from "../support/secret_echoes.ts";

/** The search value by value, each path copied: what the one-pass search must equal. */
function reference(redactor: Redactor, root: Record<string, unknown>): string | undefined {
  if (!redactor.active) return undefined;
  const stack: [unknown, string[]][] = [];
  for (const key of Object.keys(root)) stack.push([root[key], [key]]);
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (redactor.finds(path[path.length - 1])) return named(redactor, path);
    if (typeof value === "string" || typeof value === "number") {
      if (redactor.finds(String(value))) return named(redactor, path);
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push([value[i], [...path, String(i)]]);
    } else if (value !== null && typeof value === "object") {
      const object = value as Record<string, unknown>;
      for (const key of Object.keys(object)) stack.push([object[key], [...path, key]]);
    }
  }
  return undefined;
}

function named(redactor: Redactor, path: string[]): string {
  const [first, ...rest] = path.map((p) => redactor.text(p));
  const pointer = rest.map((p) => `/${p.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
  const text = `argument ${JSON.stringify(first)}` + (pointer ? ` at ${pointer}` : "");
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

const secrets = fc.oneof(
  fc.string({ minLength: 8, maxLength: 32, unit: fc.constantFrom(..."abcXYZ0189+/=_-.%&<> ") }),
  fc.base64String({ minLength: 12, maxLength: 32 }),
  // Percent-encoded secrets are also searched decoded: %00 decodes to the separator.
  fc.constantFrom("abcd%00efghijkl", "tk%2Dsecret%2D9f8e", "x\u0000y-secret-value"),
);

/** Argument trees whose texts are plain words, echoes of the secret, or parts of one. */
function argumentsWith(secret: string) {
  const echoes = Object.values(secretEchoes(secret));
  const half = Math.floor(secret.length / 2);
  const text = fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 1, arbitrary: fc.constantFrom(...echoes) },
    { weight: 2, arbitrary: fc.constantFrom(secret.slice(0, half), secret.slice(half)) },
    { weight: 1, arbitrary: fc.constantFrom(...echoes).map((e) => e.split("").join("\n")) },
  );
  const { tree } = fc.letrec((tie) => ({
    tree: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      text,
      fc.integer(),
      fc.constant(null),
      fc.array(tie("tree"), { maxLength: 4 }),
      fc.dictionary(text, tie("tree"), { maxKeys: 4 }),
    ),
  }));
  return fc.dictionary(text, tree, { minKeys: 1, maxKeys: 5 });
}

Deno.test("secretArgument names what the value-by-value search names, for generated arguments and secrets", () => {
  fc.assert(
    fc.property(
      secrets.chain((secret) => fc.tuple(fc.constant(secret), argumentsWith(secret))),
      ([secret, args]) => {
        const redactor = new Redactor();
        redactor.add(secret);
        const root = args as Record<string, unknown>;
        assert.equal(secretArgument(redactor, root), reference(redactor, root));
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("findsAny: a secret split over two neighbouring values is not found; one that holds the separator is searched value by value", () => {
  const redactor = new Redactor();
  redactor.add("tk-secret-9f8e7d6c");
  assert.equal(redactor.findsAny(["tk-secret-", "9f8e7d6c"]), false);
  assert.equal(secretArgument(redactor, { a: "tk-secret-", b: "9f8e7d6c" }), undefined);
  assert.equal(redactor.findsAny(["a title", "tk%2Dsecret-9f8e7d6c"]), true);

  // "abcd%00efgh" is also redacted decoded, "abcd\u0000efgh": joined by NUL, the two
  // halves would spell it; searched one by one they do not.
  const nul = new Redactor();
  nul.add("abcd%00efgh");
  assert.equal(nul.findsAny(["abcd", "efgh"]), false);
  assert.equal(secretArgument(nul, { a: "abcd", b: "efgh" }), undefined);
  assert.equal(nul.findsAny(["abcd", "abcd\u0000efgh"]), true);
});

Deno.test("secretArgument names a secret deep in nested arrays and objects by its JSON Pointer", () => {
  const redactor = new Redactor();
  redactor.add("tk-secret-9f8e7d6c");
  let value: unknown = { "a/b~c": ["x", `id ${encodeURIComponent("tk-secret-9f8e7d6c")}`] };
  for (let i = 0; i < 100; i++) value = { [`k${i}`]: value, other: ["filler text", 12345678] };
  const pointer = Array.from({ length: 100 }, (_, i) => `/k${99 - i}`).join("");
  assert.equal(
    secretArgument(redactor, { deep: value } as Record<string, unknown>),
    `argument "deep" at ${pointer}/a~1b~0c/1`.slice(0, 197) + "...",
  );
  assert.equal(
    secretArgument(redactor, { top: { "a/b~c": ["x", btoa("tk-secret-9f8e7d6c")] } }),
    'argument "top" at /a~1b~0c/1',
  );
});
