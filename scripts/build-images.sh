#!/usr/bin/env bash
# Builds the gateway and node images from this checkout. Two modes, the same Dockerfiles (the ones operators use):
#
# Local (the test command, the image tests, scripts/test-arm64.sh), where no registry is reachable: FROM the base
# images scripts/make-base-images.sh makes (made first when missing), with the host's CA bundle as a build secret for
# TLS-inspecting proxies; only the base-image arguments differ.
#   build-images.sh [--arch amd64|arm64] [--tag TAG] [--test-host]
# Tags postern-e2e/gateway:TAG and postern-e2e/node:TAG (TAG "latest" by default; "-arm64" appended for arm64).
# --test-host also builds postern-e2e/fresh-debian:latest, the install tests' fresh Debian machine (amd64 only).
#
# Release (.github/workflows/release.yml): both architectures in one multi-platform image each, FROM the official
# Node images (the Dockerfiles' defaults), pushed with docker buildx:
#   build-images.sh --push REGISTRY --version VERSION
# pushes REGISTRY/gateway:VERSION and REGISTRY/node:VERSION (and :latest) and writes their digests to
# artifacts/images/digests.txt (`REGISTRY/IMAGE:VERSION@sha256:…`, the images' checksums).
#
# Both modes first build the node client the gateway image serves (scripts/build-node-client.sh).
# Build logs: artifacts/images/<image>[-arm64]-build.log. Prints each build's time and the images' sizes.
set -euo pipefail
cd "$(dirname "$0")/.."

arch=amd64
tag=latest
test_host=0
push_registry=''
version=''
while [ "$#" -gt 0 ]; do
  case "$1" in
    --arch) arch="${2:-}"; shift 2 ;;
    --tag) tag="${2:-}"; shift 2 ;;
    --test-host) test_host=1; shift ;;
    --push) push_registry="${2:-}"; shift 2 ;;
    --version) version="${2:-}"; shift 2 ;;
    *) echo "build-images: unknown argument $1 (use --arch amd64|arm64, --tag TAG, --test-host, --push REGISTRY --version V)" >&2; exit 64 ;;
  esac
done
case "$arch" in
  amd64) suffix=''; platform_args=() ;;
  arm64) suffix='-arm64'; platform_args=(--platform linux/arm64) ;;
  *) echo "build-images: unknown architecture $arch (use amd64 or arm64)" >&2; exit 64 ;;
esac
if [ -n "$push_registry" ] && [ -z "$version" ]; then
  echo "build-images: --push needs --version" >&2
  exit 64
fi

docker=/usr/bin/docker
export DOCKER_BUILDKIT=1
logs=artifacts/images
mkdir -p "$logs"

# The node client the gateway image serves (apps/cli/dist/release): the test command builds it once per run before
# starting this script, and then this is a check that it is up to date. It needs the CLI's bundle and postject
# (pnpm install).
if [ ! -s apps/cli/dist/postern.cjs ]; then pnpm exec turbo run build --filter=@postern/cli >/dev/null; fi
bash scripts/build-node-client.sh

if [ -n "$push_registry" ]; then
  : >"$logs/digests.txt"
  for image in gateway node; do
    started=$SECONDS
    docker buildx build --progress=plain --platform linux/amd64,linux/arm64 --push \
      -f "deploy/$image.Dockerfile" -t "$push_registry/$image:$version" -t "$push_registry/$image:latest" \
      --metadata-file "$logs/$image-metadata.json" . >"$logs/$image-build.log" 2>&1 || {
      tail -30 "$logs/$image-build.log" >&2
      exit 1
    }
    digest="$(node -p "require('./$logs/$image-metadata.json')['containerimage.digest']")"
    echo "$push_registry/$image:$version@$digest" >>"$logs/digests.txt"
    echo "build-images: pushed $push_registry/$image:$version@$digest in $((SECONDS - started)) s"
  done
  exit 0
fi

bash scripts/make-base-images.sh --arch "$arch"

secret_args=()
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
  secret_args=(--secret "id=build-ca,src=/etc/ssl/certs/ca-certificates.crt")
fi

build() {
  local image="$1" started=$SECONDS log="$logs/$1$suffix-build.log"
  if "$docker" build --progress=plain "${platform_args[@]}" "${secret_args[@]}" \
      --build-arg "BUILD_IMAGE=postern-local/node:22-bookworm$suffix" \
      --build-arg "RUNTIME_IMAGE=postern-local/node:22-bookworm-slim$suffix" \
      -f "deploy/$image.Dockerfile" -t "postern-e2e/$image:$tag$suffix" . >"$log" 2>&1; then
    echo "build-images: postern-e2e/$image:$tag$suffix built in $((SECONDS - started)) s"
  else
    echo "build-images: postern-e2e/$image:$tag$suffix failed after $((SECONDS - started)) s; the end of $log:" >&2
    tail -30 "$log" >&2
    return 1
  fi
}

# Both at once: BuildKit runs their common first steps once and the node image's package install while the
# gateway's native module compiles.
build gateway & gateway_pid=$!
build node & node_pid=$!
status=0
wait "$gateway_pid" || status=1
wait "$node_pid" || status=1
[ "$status" -eq 0 ] || exit 1

if [ "$test_host" -eq 1 ] && [ "$arch" = amd64 ]; then
  started=$SECONDS
  "$docker" build -q -f e2e/images/fresh-debian.Dockerfile -t postern-e2e/fresh-debian:latest e2e/images >/dev/null
  echo "build-images: postern-e2e/fresh-debian:latest built in $((SECONDS - started)) s"
fi

size_mb() { echo $(( $("$docker" image inspect -f '{{.Size}}' "$1") / 1000000 )); }
base_mb="$(size_mb "postern-local/node:22-bookworm-slim$suffix")"
for image in gateway node; do
  mb="$(size_mb "postern-e2e/$image:$tag$suffix")"
  echo "build-images: postern-e2e/$image:$tag$suffix is $mb MB, $((mb - base_mb)) MB over its base ($base_mb MB)"
done
