/**
 * A withheld operation under a spelling the loader does not refuse outright
 * (issue 22, kind 4): a plural (`can delete tickets` beside `withhold
 * "delete_ticket"`) or the verb written last (`withhold "ticket_delete"`, a
 * resource-first naming, beside `can remove ticket`) may be the same
 * operation, or a different one (a bulk delete). Lint warns naming both, at the
 * grant, with what to do, in any case and with any separators; names of other
 * resources or verbs draw no warning. Through the loader lint and serve share,
 * and the shipped CLI.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { parseGuardfile } from "../../src/guard/mod.ts";
import { VERB_SYNONYMS } from "../../src/guardfile/spellings.ts";
import { runCli, tempGuardfile } from "../support/cli.ts";

const RESOURCES = ["ticket", "board", "user", "label", "issue", "page", "branch"];
const LONE_VERBS = ["close", "archive", "reopen", "approve", "merge"];
const SEPARATORS = ["_", "-", "."];

const casing = (word: string) =>
  fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(""));

const plural = (word: string) => /(ch|sh|s|x)$/.test(word) ? `${word}es` : `${word}s`;

function text(withhold: string, grant: { verb: string; resource: string }): string {
  return `withhold "${withhold}" {
    reason "No undo."
}
wrap ward mcp t {
    base-url "http://127.0.0.1:9"
    auth none
    can "${grant.verb}" "${grant.resource}" { path "/r/{id}"; }
}
`;
}

const verbs = fc.oneof(
  fc.constantFrom(...VERB_SYNONYMS),
  fc.constantFrom(...LONE_VERBS.map((v) => [v])),
);

Deno.test("parseGuardfile() warns when a grant may reach a withheld operation by a plural or word order", () => {
  fc.assert(
    fc.property(
      verbs,
      fc.constantFrom(...RESOURCES),
      fc.constantFrom("plural", "reversed", "both"),
      fc.constantFrom(...SEPARATORS),
      fc.nat(),
      fc.nat(),
      (group, resource, how, sep, a, b) =>
        fc.assert(
          fc.property(casing(group[a % group.length]), casing(resource), (verb, res) => {
            const withheldVerb = group[b % group.length];
            const withheld = how === "plural"
              ? `${withheldVerb}${sep}${resource}`
              : `${resource}${sep}${withheldVerb}`;
            const grant = {
              verb,
              resource: how === "reversed" ? res : plural(res),
            };
            const { guardfile, diagnostics } = parseGuardfile(text(withheld, grant), "t.mcp.kdl");
            assert.ok(guardfile, JSON.stringify(diagnostics));
            const served = `${grant.verb}_${grant.resource}`;
            const warning = diagnostics.find((d) =>
              d.severity === "warning" && d.message.includes(`"${served}"`) &&
              d.message.includes(`"${withheld}"`)
            );
            assert.ok(warning, `${withheld} vs ${served}: ${JSON.stringify(diagnostics)}`);
            assert.ok(warning.position !== undefined);
            assert.match(warning.message, /remove the grant .*, or add withhold /);
          }),
          { numRuns: 3 },
        ),
    ),
    { numRuns: 150 },
  );
});

Deno.test("parseGuardfile() draws no warning for other resources or other verbs", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...VERB_SYNONYMS.map((g) => g[0]), ...LONE_VERBS),
      fc.constantFrom(...VERB_SYNONYMS.map((g) => g[0]), ...LONE_VERBS),
      fc.constantFrom(...RESOURCES),
      fc.constantFrom(...RESOURCES),
      fc.boolean(),
      (wv, gv, wr, gr, reversed) => {
        fc.pre(
          wr !== gr || (wv !== gv && !VERB_SYNONYMS.some((g) => g.includes(wv) && g.includes(gv))),
        );
        const withheld = reversed ? `${wr}_${wv}` : `${wv}_${wr}`;
        const { diagnostics } = parseGuardfile(
          text(withheld, { verb: gv, resource: plural(gr) }),
          "t.mcp.kdl",
        );
        const near = diagnostics.filter((d) => /plural or by word order/.test(d.message));
        assert.deepEqual(near, [], `${withheld} vs ${gv}_${plural(gr)}`);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("weir lint: a plural of a withheld operation is a warning naming both, exit 0", async () => {
  const file = await tempGuardfile(text("delete_ticket", { verb: "delete", resource: "tickets" }));
  const out = await runCli(["lint", file]);
  assert.equal(out.code, 0, out.stderr);
  assert.match(
    out.stderr,
    /:7:5: warning: wrap > can delete tickets: "delete_tickets" .* and "delete_ticket" \(withhold "delete_ticket", line 1\)/,
  );
});
