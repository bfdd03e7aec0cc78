#!/usr/bin/env bash
# The one install script: system packages (apt) and pnpm. Used by the README's run and test commands,
# by .ci/run (through the test command) and by the Dockerfiles, so all of them take the same steps.
#   install-deps.sh [--runtime|--gateway-image|--all|--node-client]
#     --runtime      what the gateway needs to run: nginx + stream and Lua modules, WireGuard tools, iproute2, iptables, sysctl, openssl,
#                    nsupdate (bind9-dnsutils: DNS-01 challenges through RFC 2136);
#                    and to build the node client it serves (scripts/build-node-client.sh): binutils for amd64 and arm64
#     --gateway-image  runtime + tini, the images' PID 1 (reaps orphans of supervised processes, forwards signals);
#                    no pnpm: the image's runtime stage gets the built server, not the workspace
#     --all          (default) runtime + what the test suite needs: pebble, BIND (bind9: the authoritative DNS server of the
#                    DNS-01 system tests), chromium, shellcheck, iputils-ping, curl, unzip,
#                    PostgreSQL (the store's tests on a shared database; test.sh starts it), busted and luacheck under
#                    Lua 5.1 (the Lua module's unit tests and lint), a CJK font (fonts-wqy-microhei: the console's Chinese
#                    and Japanese in the browser tests' layout checks and shots, not boxes),
#                    and for the image tests: the Docker engine, compose v1, debootstrap (base images made locally),
#                    qemu-user-static + binfmt-support (arm64 under emulation)
#     --node-client  what the node client image needs next to Node: WireGuard tools, iproute2, tini (no pnpm)
set -euo pipefail

mode="${1:---all}"
runtime_pkgs=(nginx libnginx-mod-stream libnginx-mod-http-lua lua-resty-core lua-cjson wireguard-tools wireguard-go iproute2 iptables procps openssl ca-certificates bind9-dnsutils)
test_pkgs=(pebble bind9 chromium fonts-wqy-microhei shellcheck iputils-ping curl unzip postgresql lua5.1 lua-busted lua-check)
# docker.io is Docker 20.10 with BuildKit built in (no buildx needed); docker-compose is compose v1 (1.29), the only
# compose Debian 12 has.
image_test_pkgs=(docker.io docker-compose debootstrap qemu-user-static binfmt-support)
node_client_pkgs=(wireguard-tools wireguard-go iproute2)
image_init_pkgs=(tini)
# strip for both architectures' Node binaries in scripts/build-node-client.sh (any host builds both).
client_build_pkgs=(binutils-x86-64-linux-gnu binutils-aarch64-linux-gnu)

case "$mode" in
  --runtime) pkgs=("${runtime_pkgs[@]}" "${client_build_pkgs[@]}") ;;
  --gateway-image) pkgs=("${runtime_pkgs[@]}" "${image_init_pkgs[@]}") ;;
  --all) pkgs=("${runtime_pkgs[@]}" "${client_build_pkgs[@]}" "${test_pkgs[@]}" "${image_test_pkgs[@]}") ;;
  --node-client) pkgs=("${node_client_pkgs[@]}" "${image_init_pkgs[@]}") ;;
  *) echo "install-deps: unknown mode $mode (use --runtime, --gateway-image, --all or --node-client)" >&2; exit 64 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing system packages: ${missing[*]} (run as root, or install them with apt-get)" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # --no-install-recommends: wireguard-tools would otherwise pull a kernel image.
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# pnpm builds the workspace (run and test commands); the images' runtime stages get built output and need none.
if { [ "$mode" = "--runtime" ] || [ "$mode" = "--all" ]; } && ! command -v pnpm >/dev/null 2>&1; then
  echo "install-deps: installing pnpm 10"
  npm install -g pnpm@10
fi
