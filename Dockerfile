# weir as a container image: a single compiled binary on a distroless, non-root base.
#
#   docker build -t weir .
#   docker run --rm -p 8080:8080 --read-only --tmpfs /tmp \
#     -v "$PWD/guardfiles/open-meteo.mcp.kdl:/config/guardfile.mcp.kdl:ro" \
#     weir serve /config/guardfile.mcp.kdl --http 0.0.0.0:8080 --no-inbound-auth
#
# The guardfile is mounted, never baked in: the image holds no policy and no secret.
# Secrets reach weir as environment variables or mounted files the guardfile names.

# --- build: compile cli.ts into one self-contained executable --------------------------
FROM denoland/deno:2.9.6 AS build
WORKDIR /src
COPY deno.json deno.lock ./
COPY mod.ts cli.ts ./
COPY src ./src
COPY guardfiles ./guardfiles
# The permissions of `deno task compile` less --allow-run and --allow-write: network, environment,
# reading files (the image holds no program for serve-upstream -- CMD to start, so wrap an HTTP
# upstream; its root filesystem is read-only, so run lint-upstream --write-fingerprints elsewhere).
RUN deno compile --quiet --allow-net --allow-env --allow-read --output /out/weir cli.ts \
 && /out/weir --version

# --- runtime: glibc and nothing else; runs as uid 65532 ---------------------------------
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/weir /usr/local/bin/weir
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
CMD ["serve", "/config/guardfile.mcp.kdl", "--http", "0.0.0.0:8080"]
