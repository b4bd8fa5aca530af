# weir as a container image: a single compiled binary on a distroless, non-root base.
# Published for linux/amd64 and linux/arm64 as ghcr.io/weir-mcp/weir:<version> by the release
# workflow (.github/workflows/release.yml); the Helm chart's default image.
#
#   docker build -t weir .
#   docker run --rm -p 8080:8080 --read-only --tmpfs /tmp -e WEIR_INBOUND_TOKEN="$(openssl rand -hex 32)" \
#     -v "$PWD/guardfiles/open-meteo.mcp.kdl:/config/guardfile.mcp.kdl:ro" weir
#
# The default command serves /config/guardfile.mcp.kdl on 0.0.0.0:8080 and requires
# "Authorization: Bearer <token>" with a token from WEIR_INBOUND_TOKEN (one or more, separated by
# commas or spaces); without that variable weir exits 2 at start, naming it. To serve without
# inbound authentication (a gateway in front authenticates every caller), give the command:
#   docker run ... weir serve /config/guardfile.mcp.kdl --http 0.0.0.0:8080 --no-inbound-auth
#
# The guardfile is mounted, never baked in: the image holds no policy and no secret.
# Secrets reach weir as environment variables or mounted files the guardfile names.

# --- build: bundle cli.ts, compile the bundle into one self-contained executable ---------
# The build stage runs on the builder's own platform and cross-compiles for the target's.
FROM --platform=$BUILDPLATFORM denoland/deno:2.9.6 AS build
ARG TARGETPLATFORM=linux/amd64
WORKDIR /src
COPY deno.json deno.lock mod.ts cli.ts LICENSE ./
COPY src ./src
COPY guardfiles ./guardfiles
COPY scripts/build.ts scripts/archive.ts scripts/bundle.ts scripts/bundle_merge.ts scripts/compile.ts \
  ./scripts/
# The bundle (deno bundle, esbuild from npm), flags, included modules (each module loaded by URL,
# the extract worker) and the image's permission set (no --allow-run, no --allow-write) come from
# scripts/build.ts, as for the release binaries.
RUN deno run --allow-all scripts/compile.ts --image "$TARGETPLATFORM" --out-dir /out

# --- runtime: glibc and nothing else; runs as uid 65532 ---------------------------------
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/weir /usr/local/bin/weir
RUN ["/usr/local/bin/weir", "--version"]
USER 65532:65532
# Deno may keep a code cache; point it at /tmp so the root filesystem can be read-only.
ENV DENO_DIR=/tmp/deno \
    TMPDIR=/tmp \
    DENO_NO_UPDATE_CHECK=1
EXPOSE 8080
# /healthz answers 200 {"status":"ok"} while weir serves; `weir healthcheck` asks it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/weir", "healthcheck", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/local/bin/weir"]
CMD ["serve", "/config/guardfile.mcp.kdl", "--http", "0.0.0.0:8080", "--inbound-token-env", "WEIR_INBOUND_TOKEN"]
