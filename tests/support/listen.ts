/**
 * A real HTTP listener on 127.0.0.1 (random port) around a handler, for tests
 * that need the network stack (official clients, raw TCP).
 */

/** A running local server. */
export interface Listening {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serve `handler` on 127.0.0.1; `build` gets the port first, for handlers
 * whose options depend on it (the loopback `Host` list).
 */
export function listen(
  build: (port: number) => (request: Request) => Promise<Response>,
): Listening {
  const route: { handler?: (request: Request) => Promise<Response> } = {};
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => route.handler!(request),
  );
  const port = server.addr.port;
  route.handler = build(port);
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      await server.shutdown();
    },
  };
}
