/**
 * redirectTarget() and redirectRefusal(): a redirect's target as the
 * operator's log shows it keeps the scheme, host, port and path, and loses
 * userinfo, fragment and every query value, whatever the `Location` holds;
 * the caller's words never name it.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { redirectRefusal, redirectTarget } from "../../src/outbound/once.ts";

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
        const logged = redirectTarget(location, "http://api.example/repos/1")!;
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
    redirectTarget("/d?S3CR3TONLY&a%20b=1&ok=2", "https://x.example/"),
    "https://x.example/d?[redacted]&[redacted]&ok=[redacted]",
  );
  assert.equal(redirectTarget(null, "https://x.example/"), undefined);
  assert.equal(redirectTarget("http://[::1", "https://x.example/"), undefined);
  const long = redirectTarget(`/${"p".repeat(2000)}`, "https://x.example/")!;
  assert.ok(long.length <= 515 && long.endsWith("..."), long);
});

Deno.test("redirectRefusal() says the status and what to know, and names no target", () => {
  assert.equal(
    redirectRefusal(307),
    "answered 307, a redirect; weir follows no redirect, so nothing was sent there " +
      "(the operator's log names its target)",
  );
});
