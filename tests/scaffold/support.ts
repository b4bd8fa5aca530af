/**
 * Helpers of the scaffold and diff tests: the CLI helpers, and a local
 * upstream that records what a served scaffold sends.
 */
import { runCli, serveHttp, spawnServeStdio } from "../support/cli.ts";
import { type Recorded, startRecorder } from "../support/upstream.ts";

export { runCli, spawnServeStdio };

/** A recording upstream, and `serve --http` of a guardfile with calls over `/api/<tool>`. */
export async function startRecorderFor(): Promise<{
  url: string;
  requests: Recorded[];
  close: () => Promise<void>;
  serve: (file: string, env?: Record<string, string>) => Promise<{
    call: (tool: string, args: unknown) => Promise<{ status: number; body: unknown }>;
    stop: () => Promise<number>;
  }>;
}> {
  const recorder = await startRecorder(() => Response.json({ ok: true }));
  return {
    url: recorder.url,
    requests: recorder.requests,
    close: () => recorder.close(),
    serve: async (file, env) => {
      const served = await serveHttp(file, { env });
      return {
        stop: () => served.stop(),
        call: async (tool, args) => {
          const res = await fetch(`${served.url}/api/${tool}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(args),
          });
          const text = await res.text();
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch { /* text */ }
          return { status: res.status, body };
        },
      };
    },
  };
}
