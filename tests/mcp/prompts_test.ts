/**
 * Prompts take the tools' validation path: the argument schema is derived
 * from the declared arguments (one string property each, `required` from the
 * flags, nothing undeclared), checked by the same validator, and the reader
 * receives only the declared names. An unknown prompt is `-32602` with the
 * name as data, before the reader runs.
 */
import assert from "node:assert/strict";
import { type GetPromptResult, NotFoundError, promptArgumentSchema } from "../../mod.ts";
import { ask, makeServer, REVISIONS } from "../support/mcp.ts";

interface Render {
  name: string;
  args: Record<string, string>;
}

function promptServer() {
  const renders: Render[] = [];
  const { server, events } = makeServer({
    catalog: {
      tools: [],
      resources: [],
      prompts: [
        {
          name: "forecast",
          description: "Ask for a forecast.",
          arguments: [
            { name: "place", required: true, description: "Where" },
            { name: "days" },
          ],
        },
        { name: "broken" },
        { name: "archived" },
        { name: "about" },
      ],
    },
    getPrompt: (name, args) => {
      renders.push({ name, args });
      if (name === "archived") throw new NotFoundError("this prompt was retired");
      if (name === "broken") return { description: "no messages" } as unknown as GetPromptResult;
      return {
        description: "A forecast request",
        messages: [{
          role: "user",
          content: {
            type: "text",
            text: `Forecast for ${args.place ?? "?"}, ${args.days ?? 1} days`,
          },
        }],
      };
    },
  });
  return { server, renders, events };
}

Deno.test("the argument schema is derived from the declared arguments", () => {
  assert.deepEqual(
    promptArgumentSchema({
      name: "forecast",
      arguments: [{ name: "place", required: true, description: "Where" }, { name: "days" }],
    }),
    {
      type: "object",
      properties: { place: { type: "string", description: "Where" }, days: { type: "string" } },
      additionalProperties: false,
      required: ["place"],
    },
  );
  assert.deepEqual(promptArgumentSchema({ name: "bare" }), {
    type: "object",
    properties: {},
    additionalProperties: false,
  });
});

Deno.test("prompts/list names every prompt, sorted by name, with its arguments", async () => {
  const { server } = promptServer();
  for (const revision of REVISIONS) {
    const reply = await ask<{ prompts: { name: string; arguments?: unknown }[] }>(
      server,
      revision,
      "prompts/list",
    );
    assert.deepEqual(reply.result?.prompts.map((p) => p.name), [
      "about",
      "archived",
      "broken",
      "forecast",
    ]);
    assert.deepEqual(reply.result?.prompts[3].arguments, [
      { name: "place", required: true, description: "Where" },
      { name: "days" },
    ]);
  }
});

Deno.test("prompts/get renders with exactly the declared arguments", async () => {
  const { server, renders } = promptServer();
  for (const revision of REVISIONS) {
    const reply = await ask<GetPromptResult>(server, revision, "prompts/get", {
      name: "forecast",
      arguments: { place: "Oslo", days: "3" },
    });
    assert.deepEqual(reply.result?.messages, [{
      role: "user",
      content: { type: "text", text: "Forecast for Oslo, 3 days" },
    }]);
    const optional = await ask(server, revision, "prompts/get", {
      name: "forecast",
      arguments: { place: "Lima" },
    });
    assert.equal(optional.error, undefined);
    const none = await ask(server, revision, "prompts/get", { name: "about" });
    assert.equal(none.error, undefined);
  }
  assert.deepEqual(renders.slice(0, 3), [
    { name: "forecast", args: { place: "Oslo", days: "3" } },
    { name: "forecast", args: { place: "Lima" } },
    { name: "about", args: {} },
  ]);
});

Deno.test("arguments the schema refuses are -32602 naming the argument; the reader never runs", async () => {
  const { server, renders } = promptServer();
  const cases: [unknown, RegExp][] = [
    [{}, /missing required argument "place"/],
    [{ days: "2" }, /missing required argument "place"/],
    [{ place: "Oslo", hours: "5" }, /unexpected argument "hours"/],
    [{ place: 7 }, /argument "place"/],
    [{ place: "Oslo", constructor: "x" }, /unexpected argument "constructor"/],
  ];
  for (const revision of REVISIONS) {
    for (const [args, message] of cases) {
      const reply = await ask(server, revision, "prompts/get", {
        name: "forecast",
        arguments: args,
      });
      assert.equal(reply.error?.code, -32602);
      assert.match(reply.error!.message, /^Invalid arguments for prompt "forecast": /);
      assert.match(reply.error!.message, message);
    }
    const notObject = await ask(server, revision, "prompts/get", {
      name: "forecast",
      arguments: ["Oslo"],
    });
    assert.equal(notObject.error?.code, -32602);
  }
  assert.deepEqual(renders, []);
});

Deno.test("an unknown prompt is -32602 with the name as data, before the reader runs", async () => {
  const { server, renders } = promptServer();
  for (const revision of REVISIONS) {
    const reply = await ask(server, revision, "prompts/get", { name: "weather" });
    assert.equal(reply.error?.code, -32602);
    assert.deepEqual(reply.error?.data, { name: "weather" });
    const noName = await ask(server, revision, "prompts/get", {});
    assert.equal(noName.error?.code, -32602);
  }
  assert.deepEqual(renders, []);
});

Deno.test("a reader's NotFoundError is -32602 with the reason; a malformed render is -32603", async () => {
  const { server, events } = promptServer();
  for (const revision of REVISIONS) {
    const retired = await ask(server, revision, "prompts/get", { name: "archived" });
    assert.equal(retired.error?.code, -32602);
    assert.deepEqual(retired.error?.data, { name: "archived", reason: "this prompt was retired" });
    const broken = await ask(server, revision, "prompts/get", { name: "broken" });
    assert.equal(broken.error?.code, -32603);
    assert.equal(broken.error?.message, "Internal error");
  }
  assert.match(JSON.stringify(events), /no messages list/);
});
