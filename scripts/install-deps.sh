#!/usr/bin/env bash
# The one install script: system packages (apt) and pnpm. Used by the README's run and test commands,
# by .ci/run (through the test command) and by the Dockerfiles, so all of them take the same steps.
#   install-deps.sh [--runtime|--gateway-image|--all|--node-client]
#     --runtime      what the gateway needs to run: nginx + stream and Lua modules, WireGuard tools, iproute2, iptables, sysctl, openssl
#     --gateway-image  runtime + tini, the image's PID 1 (reaps orphans of supervised processes, forwards signals)
#     --all          (default) runtime + what the test suite needs: pebble, chromium, shellcheck, iputils-ping, curl
#     --node-client  what the node client image needs next to Node: WireGuard tools, iproute2 (no pnpm)
set -euo pipefail

mode="${1:---all}"
runtime_pkgs=(nginx libnginx-mod-stream libnginx-mod-http-lua lua-resty-core lua-cjson wireguard-tools wireguard-go iproute2 iptables procps openssl ca-certificates)
test_pkgs=(pebble chromium shellcheck iputils-ping curl)
node_client_pkgs=(wireguard-tools wireguard-go iproute2)
image_init_pkgs=(tini)

case "$mode" in
  --runtime) pkgs=("${runtime_pkgs[@]}") ;;
  --gateway-image) pkgs=("${runtime_pkgs[@]}" "${image_init_pkgs[@]}") ;;
  --all) pkgs=("${runtime_pkgs[@]}" "${test_pkgs[@]}") ;;
  --node-client) pkgs=("${node_client_pkgs[@]}") ;;
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

# The node client is one bundled file: it needs no pnpm.
if [ "$mode" != "--node-client" ] && ! command -v pnpm >/dev/null 2>&1; then
  echo "install-deps: installing pnpm 10"
  npm install -g pnpm@10
fi
