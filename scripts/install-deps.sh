#!/usr/bin/env bash
# The one install script: system packages (apt) and pnpm. Used by the README's run and test commands,
# by .ci/run (through the test command) and by the Dockerfiles, so all of them take the same steps.
#   install-deps.sh [--runtime|--all]
#     --runtime  what the gateway needs to run: nginx + stream module, WireGuard tools, iproute2, iptables, openssl
#     --all      (default) runtime + what the test suite needs: pebble, chromium, shellcheck, iputils-ping
set -euo pipefail

mode="${1:---all}"
runtime_pkgs=(nginx libnginx-mod-stream wireguard-tools wireguard-go iproute2 iptables openssl ca-certificates)
test_pkgs=(pebble chromium shellcheck iputils-ping)

pkgs=("${runtime_pkgs[@]}")
if [ "$mode" = "--all" ]; then
  pkgs+=("${test_pkgs[@]}")
fi

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

if ! command -v pnpm >/dev/null 2>&1; then
  echo "install-deps: installing pnpm 10"
  npm install -g pnpm@10
fi
