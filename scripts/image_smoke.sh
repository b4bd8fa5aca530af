#!/usr/bin/env bash
# Start an image of weir the way it ships and check it, before the release pushes it:
#
#   docker build -t weir . && bash scripts/image_smoke.sh weir
#
# 1. `weir --version` runs (as the image's user, on its read-only root filesystem).
# 2. The default command, without WEIR_INBOUND_TOKEN, exits 1 and names the variable.
# 3. The default command with WEIR_INBOUND_TOKEN serves the mounted guardfile on port 8080:
#    /healthz answers, the image's HEALTHCHECK command passes, MCP refuses a caller without
#    the token (401/403) and lists the guardfile's tools for one with it.
# Exit 0 when all hold; the container is removed either way.
set -euo pipefail
image="${1:?usage: image_smoke.sh IMAGE}"
guardfile="$(cd "$(dirname "$0")/.." && pwd)/guardfiles/open-meteo.mcp.kdl"
name="weir-smoke-$$"
run=(docker run --read-only --tmpfs /tmp -v "$guardfile:/config/guardfile.mcp.kdl:ro")

fail() {
  echo "image_smoke: $1" >&2
  docker logs "$name" 2>&1 | tail -n 20 >&2 || true
  exit 1
}
trap 'docker rm -f "$name" >/dev/null 2>&1 || true' EXIT

"${run[@]}" --rm "$image" --version

if "${run[@]}" --rm "$image" >/dev/null 2>"/tmp/$name.err"; then
  fail "the default command started without WEIR_INBOUND_TOKEN"
fi
grep -q "WEIR_INBOUND_TOKEN" "/tmp/$name.err" || fail "the refusal does not name WEIR_INBOUND_TOKEN: $(cat "/tmp/$name.err")"
rm -f "/tmp/$name.err"

token="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
"${run[@]}" -d --name "$name" -p 127.0.0.1::8080 -e WEIR_INBOUND_TOKEN="$token" "$image" >/dev/null
port="$(docker port "$name" 8080/tcp | head -n 1 | sed 's/.*://')"
for _ in $(seq 60); do
  if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/healthz" || fail "/healthz did not answer within 60 s"
echo
docker exec "$name" /usr/local/bin/weir healthcheck || fail "the HEALTHCHECK command failed"

meta='{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
list='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":'"$meta"'}}'
headers=(-H "content-type: application/json" -H "accept: application/json, text/event-stream"
  -H "mcp-protocol-version: 2026-07-28" -H "mcp-method: tools/list")
status="$(curl -s -o /dev/null -w '%{http_code}' "${headers[@]}" -d "$list" "http://127.0.0.1:$port/mcp")"
[ "$status" = 401 ] || [ "$status" = 403 ] || fail "a caller without the token got $status, not a refusal"
answer="$(curl -fsS "${headers[@]}" -H "authorization: Bearer $token" -d "$list" "http://127.0.0.1:$port/mcp")" ||
  fail "tools/list with the token failed"
grep -q '"tools"' <<<"$answer" || fail "tools/list answered without tools: $answer"
echo "image_smoke: $image starts as shipped and refuses without its token"
