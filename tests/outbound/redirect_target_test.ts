/**
 * redirectTarget() and redirectRefusal(): a redirect's target as the
 * operator's log shows it keeps the scheme, host, port and path, and loses
 * userinfo, fragment and every query value, whatever the `Location` holds;
 * the caller's words never name it.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import {
  NOTHING_SENT,
  redactingEach,
  redirectRefusal,
  redirectTarget,
} from "../../src/outbound/once.ts";
import { Redactor } from "../../src/guard/secrets.ts";
import { base64Holds } from "../support/secret_echoes.ts";

const SECRET = fc.stringMatching(/^[A-Za-z0-9]{12,24}$/).map((s) => `S3CR3T${s}`);

Deno.test("redirectTarget() keeps where it points and drops every query value, userinfo and fragment", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,10}$/), SECRET), {
        maxLength: 5,
      }),
      SECRET,
      SECRET,
      fc.constantFrom("", "/", "/a/b.tar.gz", "/x%20y"),
      fc.boolean(),
      (params, password, fragment, path, relative) => {
        const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
        const tail = `${path || "/"}${query ? `?${query}` : ""}#${fragment}`;
        const location = relative ? tail : `https://u:${password}@files.example:8443${tail}`;
        const logged = redirectTarget(location, "http://api.example/repos/1", NOTHING_SENT)!;
        for (const [, v] of params) assert.ok(!logged.includes(v), logged);
        assert.ok(!logged.includes(password) && !logged.includes(fragment), logged);
        const origin = relative ? "http://api.example" : "https://files.example:8443";
        assert.ok(logged.startsWith(`${origin}${path || "/"}`), logged);
        for (const [k] of params) assert.ok(logged.includes(`${k}=[redacted]`), logged);
      },
    ),
  );
});

Deno.test("redirectTarget() redacts a bare or odd query item whole, bounds the length, and refuses non-URLs", () => {
  assert.equal(
    redirectTarget("/d?S3CR3TONLY&a%20b=1&ok=2", "https://x.example/", NOTHING_SENT),
    "https://x.example/d?[redacted]&[redacted]&ok=[redacted]",
  );
  assert.equal(redirectTarget(null, "https://x.example/", NOTHING_SENT), undefined);
  assert.equal(redirectTarget("http://[::1", "https://x.example/", NOTHING_SENT), undefined);
  const long = redirectTarget(`/${"p".repeat(2000)}`, "https://x.example/", NOTHING_SENT)!;
  assert.ok(long.length <= 515 && long.endsWith("..."), long);
});

const b64 = (text: string) => btoa(text);
/** Where a hostile upstream puts the credential it was sent, outside the query. */
const PLACES: Record<string, (secret: string) => string> = {
  "a path segment": (s) => `/dl/${s}/a.tar.gz`,
  "a relative path": (s) => `${s}`,
  "base64 in the path": (s) => `/dl/${b64(s)}`,
  "base64url in the path": (s) => `/dl/${b64(s).replaceAll("+", "-").replaceAll("/", "_")}`,
  "base64 of user:secret in the path": (s) => `/dl/${b64(`user:${s}`)}`,
  "percent-encoded in the path": (s) => `/dl/${encodeURIComponent(s)}`,
  "a host label (the URL parser lower-cases it)": (s) => `https://${s}.files.example/x`,
  "split by a tab (the URL parser drops it)": (s) => `/dl/${s.slice(0, 5)}\t${s.slice(5)}`,
  "the whole path, past 512 characters": (s) => `/${"p".repeat(505)}${s}`,
};

for (
  const [what, redactor, places] of [
    ["a Redactor", (s: string) => {
      const r = new Redactor();
      r.add(s);
      return r;
    }, Object.keys(PLACES)],
    // The plain forms only (an authorization server's answers): no base64 inside a longer run.
    [
      "redactingEach",
      (s: string) => redactingEach([s]),
      Object.keys(PLACES).filter((p) => !p.includes("user:")),
    ],
  ] as const
) {
  Deno.test(`redirectTarget() takes the request's secrets out of every part of the target (${what})`, () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9-]{11,30}$/),
        fc.constantFrom(...places),
        (secret, place) => {
          const logged = redirectTarget(
            PLACES[place](secret),
            "https://api.example/repos/1",
            redactor(secret),
          );
          if (logged === undefined) return;
          const lower = logged.toLowerCase();
          const tail = secret.toLowerCase().slice(-8);
          assert.ok(!lower.includes(secret.toLowerCase()), `${place}: ${logged}`);
          assert.ok(!base64Holds(logged, secret), `${place}: ${logged}`);
          // No cut leaves part of it behind either (the 512-character bound).
          if (place.startsWith("the whole")) assert.ok(!lower.includes(tail), logged);
        },
      ),
    );
  });
}

Deno.test("redirectRefusal() says the status and what to know, and names no target", () => {
  assert.equal(
    redirectRefusal(307),
    "answered 307, a redirect; weir follows no redirect, so nothing was sent there " +
      "(the operator's log names its target)",
  );
});
