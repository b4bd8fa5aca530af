/**
 * Secrets in arguments, part of stage (a) of the control pipeline
 * (src/guard/pipeline.ts): no argument of a call may hold a secret weir
 * itself holds for that call (the upstream credential, a secret pin, an
 * `mcp-server` header secret, the database password of a sql grant, the
 * caller's exchanged token, the AWS secret key) in any form the call's
 * {@link Redactor} knows (as is, percent-, JSON-, HTML-escaped, base64 and
 * base64url whole or inside a longer base64 text, hexadecimal, and the text a
 * base64 or percent-encoded secret stands for). Such a call is refused (403
 * `policy_denied`, audit rule `secret_argument`) before anything is sent or
 * spent: the upstream never receives weir's secret from an agent (in a
 * comment body, a query, an uploaded file), and no answer can tell which
 * of an agent's guesses it redacted.
 *
 * The refusal names where the secret sits (the argument, and a JSON Pointer
 * inside it), never the value, and a key that holds one is named redacted.
 * Object keys, strings and numbers (as spelled) are searched; text shorter
 * than {@link MIN_SECRET_LENGTH} cannot hold a secret and is not searched.
 *
 * @module
 */
import { spelledArguments } from "../mcp/jsonrpc.ts";
import { isRawJson } from "../mcp/text.ts";
import { WeirError } from "../errors/kinds.ts";
import { MIN_SECRET_LENGTH, type Redactor } from "./secrets.ts";

/** The longest location a refusal names, in characters (a key may be long). */
const MAX_WHERE = 200;

/**
 * Where the first secret in `args` sits, as a refusal names it (`argument
 * "body"`, `argument "items" at /2/note`; any secret in a key redacted), or
 * `undefined` when no argument holds one. Numbers are searched as the caller
 * spelled them (`spelledArguments`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Redactor } from "./secrets.ts";
 * import { secretArgument } from "./secret_arguments.ts";
 * const redactor = new Redactor();
 * redactor.add("tk-secret-9f8e7d6c");
 * const sent = { title: "hi", body: { text: `key ${btoa("tk-secret-9f8e7d6c")}` } };
 * assert.equal(secretArgument(redactor, sent), 'argument "body" at /text');
 * assert.equal(secretArgument(redactor, { title: "hi" }), undefined);
 * ```
 */
export function secretArgument(
  redactor: Redactor,
  args: Record<string, unknown>,
): string | undefined {
  if (!redactor.active) return undefined;
  const root = spelledArguments(args) ?? args;
  // Every key and value long enough to hold a secret, in the order the search names
  // them, each with where it sits. A place links to its parent (no path is copied per
  // value: the walk is linear in the arguments' size however deep they nest), and the
  // texts are searched in one pass (`Redactor.findsAny`): per-value searches cost about
  // a microsecond each, 80-110 ms for a 1 MiB argument of many short values.
  const texts: string[] = [];
  const places: Place[] = [];
  const note = (text: string, place: Place) => {
    if (text.length < MIN_SECRET_LENGTH) return;
    texts.push(text);
    places.push(place);
  };
  // Iterative: the core bounds the arguments' depth, and this walk needs no stack of its own.
  const stack: [unknown, Place][] = [];
  for (const key of Object.keys(root)) stack.push([root[key], { key }]);
  while (stack.length > 0) {
    const [value, place] = stack.pop()!;
    note(place.key, place);
    if (typeof value === "string") note(value, place);
    else if (typeof value === "number") note(String(value), place);
    else if (isRawJson(value)) note(value.rawJSON, place);
    else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        stack.push([value[i], { key: String(i), parent: place }]);
      }
    } else if (value !== null && typeof value === "object") {
      const object = value as Record<string, unknown>;
      for (const key of Object.keys(object)) stack.push([object[key], { key, parent: place }]);
    }
  }
  if (!redactor.findsAny(texts)) return undefined;
  // Only for a refusal: the first text holding one, searched alone.
  const at = texts.findIndex((text) => redactor.finds(text));
  return at < 0 ? undefined : where(redactor, pathOf(places[at]));
}

/** Where a value or key sits in the arguments: its key, inside its parent's value. */
interface Place {
  key: string;
  parent?: Place;
}

function pathOf(place: Place): string[] {
  const path: string[] = [];
  for (let p: Place | undefined = place; p; p = p.parent) path.push(p.key);
  return path.reverse();
}

/**
 * Refuse a call whose arguments hold one of the call's secrets
 * ({@link secretArgument}); nothing has been sent or spent.
 * @throws {WeirError} 403 `policy_denied`, rule `secret_argument`
 */
export function refuseSecretArguments(
  tool: string,
  redactor: Redactor,
  args: Record<string, unknown>,
): void {
  const at = secretArgument(redactor, args);
  if (at !== undefined) throw secretRefusal(`${at} of "${tool}"`, at);
}

/** The refusal of a call where `what` holds a secret (never the secret itself); `at` for the log. */
function secretRefusal(what: string, at: string): WeirError {
  return new WeirError(
    "policy_denied",
    `${what} holds a secret this server itself holds for the upstream (a ` +
      `credential, a secret pin or header, a database password, the caller's exchanged token), ` +
      `in some encoding; weir never ` +
      `forwards one of its own secrets from an argument, so nothing was sent: leave it out ` +
      `(weir adds its credentials to the request itself)`,
    { status: 403, rule: "secret_argument", reason: `secret in ${at}` },
  );
}

/** `argument "k"` or `argument "k" at /a/0` (RFC 6901), a secret in a key redacted. */
function where(redactor: Redactor, path: readonly string[]): string {
  const [first, ...rest] = path.map((p) => redactor.text(p));
  const pointer = rest.map((p) => `/${p.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
  const text = `argument ${JSON.stringify(first)}` + (pointer ? ` at ${pointer}` : "");
  return text.length > MAX_WHERE ? `${text.slice(0, MAX_WHERE - 3)}...` : text;
}

const lossyUtf8 = new TextDecoder();

/**
 * Refuse bytes a call would upload (decoded from an argument, such as
 * serve-s3's `content_base64`) that hold one of the call's secrets, read as
 * UTF-8 (lossily: a secret written into a binary file shows as its own
 * characters). `where` names the argument.
 * @throws {WeirError} 403 `policy_denied`, rule `secret_argument`
 */
export function refuseSecretBytes(
  tool: string,
  redactor: Redactor,
  where: string,
  bytes: Uint8Array,
): void {
  if (redactor.active) {
    refuseSecretText(`${where} (decoded) of "${tool}"`, redactor, lossyUtf8.decode(bytes));
  }
}

/**
 * Refuse text weir made of several arguments (spec mode's path, where
 * `/{a}-{b}` joins two values) that holds one of the call's secrets, which
 * no single argument held. `what` names it in the refusal (`the path of "get_x"`).
 * @throws {WeirError} 403 `policy_denied`, rule `secret_argument`
 */
export function refuseSecretText(what: string, redactor: Redactor, text: string): void {
  if (redactor.finds(text)) throw secretRefusal(what, what);
}
