/**
 * The OAuth resource server's reads of the authorization server hold their
 * caps at the boundary however the bytes arrive (issue 22, kind 9): the
 * metadata document, the JWKS and an introspection answer are each read up
 * to 256 KiB of body (decoded) and 64 KiB of head, at boundary-1, boundary
 * and boundary+1, under Content-Length, chunked, close-delimited and gzip
 * framing, in one write, byte by byte around the boundary, or cut at
 * generated points. A raw TCP issuer writes the bytes; weir reads them with
 * its real `fetch` (the module API the CLI uses), and `weir serve` refuses to
 * start on an over-cap metadata document, naming it.
 */
import assert from "node:assert/strict";
import fc from "../support/property.ts";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import {
  createTokenVerifier,
  discoverIssuer,
  type IssuerMetadata,
} from "../../src/oauth/access_tokens.ts";
import {
  cutsOf,
  framed,
  FRAMINGS,
  headOfSize,
  type Plan,
  rawEndpoint,
} from "../support/raw_endpoint.ts";
import { runCli, serveHttp, tempGuardfile } from "../support/cli.ts";

const enc = new TextEncoder();
const CAP = 256 * 1024;
const HEAD = 64 * 1024;
const RESOURCE = "https://mcp.example.com/mcp";

/** JSON text of exactly `size` bytes: `fields` plus a `pad` string. */
function sized(fields: Record<string, unknown>, size: number): Uint8Array {
  const bare = JSON.stringify({ ...fields, pad: "" });
  const text = JSON.stringify({ ...fields, pad: "p".repeat(size - bare.length) });
  const bytes = enc.encode(text);
  assert.equal(bytes.length, size);
  return bytes;
}

async function issuerKit() {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  const plans: Record<string, Plan> = {};
  const endpoint = rawEndpoint((request) => {
    const path = request.path.split("?")[0];
    const key = path.startsWith("/.well-known/") ? "metadata" : path.slice(1);
    return plans[key] ??
      { bytes: enc.encode("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n") };
  });
  const issuer = endpoint.url;
  const fields = {
    issuer,
    jwks_uri: `${issuer}/jwks`,
    introspection_endpoint: `${issuer}/introspect`,
  };
  const metadata: IssuerMetadata = { ...fields, source: `${issuer}/.well-known/x` };
  let n = 0;
  const token = () =>
    new SignJWT({ scope: "a" })
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(issuer).setAudience(RESOURCE).setSubject(`s${n++}`).setExpirationTime("5m")
      .sign(privateKey);
  return { endpoint, issuer, fields, metadata, jwk, plans, token };
}

/** The property: at each delta and framing, the read passes iff within the cap. */
async function holdsAtBoundary(
  cap: number,
  body: (size: number) => Uint8Array,
  read: (plan: Plan) => Promise<unknown>,
  refusal: RegExp,
): Promise<void> {
  for (const framing of FRAMINGS) {
    for (const delta of [-1, 0, 1]) {
      const { bytes, around } = await framed(body(cap + delta), framing);
      await fc.assert(
        fc.asyncProperty(cutsOf(bytes.length, around), async (cuts) => {
          const outcome = await read({ bytes, cuts }).then(
            () => "read",
            (error: Error) => error.message,
          );
          if (delta <= 0) assert.equal(outcome, "read", `${framing} ${delta} ${cuts}`);
          else assert.match(String(outcome), refusal, `${framing} ${delta} ${cuts}`);
        }),
        { numRuns: 4 },
      );
    }
  }
  for (const delta of [-1, 0, 1]) {
    const bytes = headOfSize(HEAD + delta, body(1000));
    await fc.assert(
      fc.asyncProperty(cutsOf(bytes.length, HEAD + delta), async (cuts) => {
        const outcome = await read({ bytes, cuts }).then(
          () => "read",
          (error: Error) => error.message,
        );
        if (delta <= 0) assert.equal(outcome, "read", `head ${delta} ${cuts}`);
        else assert.match(String(outcome), /head is over 65536 bytes/, `head ${delta} ${cuts}`);
      }),
      { numRuns: 3 },
    );
  }
}

Deno.test("OAuth metadata: read up to 256 KiB of body and 64 KiB of head, exactly", async () => {
  const kit = await issuerKit();
  try {
    await holdsAtBoundary(
      CAP,
      (size) => sized(kit.fields, size),
      async (plan) => {
        kit.plans.metadata = plan;
        const found = await discoverIssuer(kit.issuer);
        assert.equal(found.jwks_uri, kit.fields.jwks_uri);
      },
      /metadata document too large|over 262144 bytes/,
    );
  } finally {
    await kit.endpoint.close();
  }
});

Deno.test("OAuth JWKS: read up to 256 KiB of body and 64 KiB of head, exactly", async () => {
  const kit = await issuerKit();
  try {
    await holdsAtBoundary(
      CAP,
      (size) => sized({ keys: [kit.jwk] }, size),
      async (plan) => {
        kit.plans.jwks = plan;
        // A new verifier each time: nothing cached.
        const verify = createTokenVerifier({ metadata: kit.metadata, resource: RESOURCE });
        await verify(await kit.token());
      },
      /JWKS is over 262144 bytes/,
    );
  } finally {
    await kit.endpoint.close();
  }
});

Deno.test("OAuth introspection: an answer read up to 256 KiB of body and 64 KiB of head, exactly", async () => {
  const kit = await issuerKit();
  const verify = createTokenVerifier({
    metadata: kit.metadata,
    resource: RESOURCE,
    introspection: { clientId: "rs", clientSecret: "rs-secret-0123456789" },
  });
  let n = 0;
  try {
    await holdsAtBoundary(
      CAP,
      (size) =>
        sized({ active: true, iss: kit.issuer, aud: RESOURCE, sub: "alice", scope: "a" }, size),
      async (plan) => {
        kit.plans.introspect = plan;
        // A new opaque token each time: no cached answer.
        await verify(`opaque-token-${n++}`);
      },
      /too large|over 262144 bytes/,
    );
  } finally {
    await kit.endpoint.close();
  }
});

Deno.test("weir serve refuses to start on an over-cap metadata document, naming it", async () => {
  const kit = await issuerKit();
  const file = await tempGuardfile(`wrap ward mcp caps {
    base-url "http://127.0.0.1:9"
    auth none
    can get thing {
        path "/thing"
    }
}
`);
  const env = { PATH: Deno.env.get("PATH") ?? "" };
  const oauth = ["--oauth-issuer", kit.issuer, "--oauth-resource", RESOURCE];
  try {
    kit.plans.metadata = await framed(sized(kit.fields, CAP + 1), "chunked");
    const refused = await runCli(["serve", file, "--http", "127.0.0.1:0", ...oauth], { env });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /too large|over 262144 bytes/);
    kit.plans.metadata = await framed(sized(kit.fields, CAP), "chunked");
    const served = await serveHttp(file, { env, extra: oauth });
    assert.equal(await served.stop(), 0);
  } finally {
    await kit.endpoint.close();
  }
});
