/**
 * A withheld operation cannot come back under another spelling (case,
 * separators, verb synonyms), and two spellings of one operation (the same
 * method and path) cannot differ in their controls; spellings that reach
 * other paths are other operations (`get_file`, `read_file`: metadata and
 * content), served, with a warning only when they differ by case or
 * separators alone. Generated spellings through the loader `lint` and `serve`
 * share (`parseGuardfile`), and through the shipped CLI for a few.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { parseGuardfile } from "../../src/guard/mod.ts";
import { operationKeys, VERB_SYNONYMS } from "../../src/guardfile/spellings.ts";
import { runCli, tempGuardfile } from "../support/cli.ts";

const RESOURCES = ["ticket", "board", "user", "release-note", "label", "issue", "page", "x"];
/** Verbs of no synonym group (they must never meet a grouped verb). */
const LONE_VERBS = ["close", "archive", "reopen", "comment", "pin", "approve", "merge", "sync"];
const SEPARATORS = ["_", "-", ".", ""];

/** A word spelled with each letter's case chosen by the generator. */
const casing = (word: string) =>
  fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(""));

/** A resource spelled with its words joined by any separators and cases. */
const resourceSpelling = (resource: string) => {
  const words = resource.split("-");
  return fc.tuple(
    fc.tuple(...words.map(casing)),
    fc.array(fc.constantFrom(...SEPARATORS), {
      minLength: words.length - 1,
      maxLength: words.length - 1,
    }),
  ).map(([ws, seps]) => ws.reduce((acc, w, i) => acc + seps[i - 1] + w));
};

/** A verb group, one verb of it, and one resource. */
const operation = fc.record({
  group: fc.constantFrom(...VERB_SYNONYMS),
  resource: fc.constantFrom(...RESOURCES),
});

/** Another spelling of one operation: a synonym, any case, any separators. */
const respelled = (group: readonly string[], resource: string) =>
  fc.record({
    verb: fc.constantFrom(...group).chain(casing),
    separator: fc.constantFrom(...SEPARATORS),
    resource: resourceSpelling(resource),
  });

function guardfileText(
  withhold: string,
  grants: { verb: string; resource: string }[],
): string {
  return `withhold "${withhold}" {
    reason "No undo."
}
wrap ward mcp t {
    base-url "http://127.0.0.1:9"
    auth none
${grants.map((g, i) => `    can "${g.verb}" "${g.resource}" { path "/r${i}/{id}"; }`).join("\n")}
}
`;
}

Deno.test("parseGuardfile() refuses a grant that serves a withheld operation under any spelling", () => {
  fc.assert(
    fc.property(
      operation.chain(({ group, resource }) =>
        fc.record({
          withheld: respelled(group, resource),
          served: respelled(group, resource),
        })
      ),
      ({ withheld, served }) => {
        const withheldTool = `${withheld.verb}${withheld.separator}${withheld.resource}`;
        const servedTool = `${served.verb}_${served.resource}`;
        const text = guardfileText(withheldTool, [served]);
        const { guardfile, diagnostics } = parseGuardfile(text, "t.mcp.kdl");
        assert.equal(guardfile, undefined, `${withheldTool} vs ${servedTool} loaded`);
        const errors = diagnostics.filter((d) => d.severity === "error");
        assert.ok(
          errors.some((d) =>
            d.message.includes(`"${servedTool}"`) && d.message.includes(`"${withheldTool}"`) &&
            d.position !== undefined
          ),
          `${withheldTool} vs ${servedTool}: ${JSON.stringify(errors)}`,
        );
      },
    ),
    { numRuns: 400 },
  );
});

/**
 * Two grants on `paths`, with `confirm` on the first when `confirmFirst`; both
 * state `method "GET"` (a verb spelled in capitals is not in the verb table and
 * would be a POST: another operation).
 */
function twinsText(
  grants: { verb: string; resource: string }[],
  paths: [string, string],
  confirmFirst: boolean,
): string {
  const [a] = grants;
  return `${confirmFirst ? `confirm "${a.verb}_${a.resource}"\n` : ""}wrap ward mcp t {
    base-url "http://127.0.0.1:9"
    auth none
${
    grants.map((g, i) =>
      `    can "${g.verb}" "${g.resource}" { method "GET"; path "${paths[i]}"; }`
    )
      .join("\n")
  }
}
`;
}

Deno.test("parseGuardfile() refuses two spellings of one operation (method and path) with different controls", () => {
  fc.assert(
    fc.property(
      operation.chain(({ group, resource }) =>
        fc.tuple(respelled(group, resource), respelled(group, resource))
      ),
      fc.constantFrom<[string, string]>(["/r/{id}", "/r/{id}"], ["/r/{id}", "/r/{other}"]),
      ([a, b], paths) => {
        const ta = `${a.verb}_${a.resource}`;
        const tb = `${b.verb}_${b.resource}`;
        fc.pre(ta !== tb); // identical names have their own "duplicate tool name" error
        const { guardfile, diagnostics } = parseGuardfile(
          twinsText([a, b], paths, true),
          "t.mcp.kdl",
        );
        assert.equal(guardfile, undefined, `${ta} (confirm) and ${tb} (none) both served`);
        assert.ok(
          diagnostics.some((d) =>
            d.severity === "error" && d.message.includes(`"${ta}"`) &&
            d.message.includes(`"${tb}"`) && d.message.includes("(confirm)")
          ),
          JSON.stringify(diagnostics),
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("parseGuardfile() serves two spellings that reach other paths (no error); one path, same controls: a warning", () => {
  fc.assert(
    fc.property(
      operation.chain(({ group, resource }) =>
        fc.tuple(respelled(group, resource), respelled(group, resource))
      ),
      fc.constantFrom<[string, string]>(["/r/{id}", "/r/{id}/content"], ["/r/{id}", "/r/{id}"]),
      ([a, b], paths) => {
        const ta = `${a.verb}_${a.resource}`;
        const tb = `${b.verb}_${b.resource}`;
        fc.pre(ta !== tb);
        const { guardfile, diagnostics } = parseGuardfile(
          twinsText([a, b], paths, false),
          "t.mcp.kdl",
        );
        assert.ok(guardfile, `${ta} and ${tb}: ${JSON.stringify(diagnostics)}`);
        const about = diagnostics.filter((d) =>
          d.message.includes(`"${ta}"`) && d.message.includes(`"${tb}"`)
        );
        const sameOperation = paths[0] === paths[1];
        // A verb synonym reaching another path is another operation: nothing said.
        const confusable = ta.toLowerCase().replace(/[_.-]/g, "") ===
          tb.toLowerCase().replace(/[_.-]/g, "");
        if (sameOperation || confusable) {
          assert.equal(about.length, 1, JSON.stringify(diagnostics));
          assert.equal(about[0].severity, "warning");
        } else assert.deepEqual(about, []);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("parseGuardfile() serves distinct operations: other resources, verbs of other groups", () => {
  const verb = fc.oneof(
    fc.constantFrom(...VERB_SYNONYMS.map((g) => g[0])),
    fc.constantFrom(...LONE_VERBS),
  );
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.tuple(verb, fc.constantFrom(...RESOURCES)), {
        minLength: 1,
        maxLength: 6,
        selector: ([v, r]) => `${v}_${r}`,
      }),
      fc.tuple(verb, fc.constantFrom(...RESOURCES)),
      (pairs, [wv, wr]) => {
        fc.pre(!pairs.some(([v, r]) => v === wv && r === wr));
        const text = guardfileText(
          `${wv}_${wr}`,
          pairs.map(([v, r]) => ({ verb: v, resource: r })),
        );
        const { guardfile, diagnostics } = parseGuardfile(text, "t.mcp.kdl");
        assert.ok(guardfile, JSON.stringify(diagnostics));
        // What loads never serves a name that meets a withheld one.
        const withheld = new Set(guardfile.withholds.flatMap((w) => operationKeys(w.tool)));
        for (const g of guardfile.grants) {
          assert.ok(!operationKeys(g.tool).some((k) => withheld.has(k)), `${g.tool} is withheld`);
        }
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("weir lint: the issue's case and its siblings fail with both names, exit 1", async () => {
  const cases: [string, string][] = [
    ['can delete Ticket { path "/t/{id}"; }', "delete_Ticket"],
    ['can remove ticket { path "/t/{id}"; }', "remove_ticket"],
    ['can "DELETE" "ticket" { path "/t/{id}"; }', "DELETE_ticket"],
    ['can destroy ticket { path "/t/{id}"; }', "destroy_ticket"],
    ['can delete-ticket x { path "/t/{id}"; }', ""], // another resource: served
  ];
  for (const [grant, tool] of cases) {
    const file = await tempGuardfile(`withhold "delete_ticket" { reason "No undo."; }
wrap ward mcp t {
    base-url "http://127.0.0.1:9"
    auth none
    ${grant}
}
`);
    try {
      const out = await runCli(["lint", file]);
      if (tool === "") {
        assert.equal(out.code, 0, out.stderr);
        continue;
      }
      assert.equal(out.code, 1, `${grant}: ${out.stdout}`);
      assert.equal(out.stdout, "");
      assert.match(out.stderr, new RegExp(`:5:5: .*"${tool}".*"delete_ticket".*withheld`));
    } finally {
      await Deno.remove(file);
    }
  }
});
