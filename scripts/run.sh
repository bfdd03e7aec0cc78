#!/usr/bin/env bash
# README's run command: install what is missing, build, and start the gateway.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --runtime
pnpm install --frozen-lockfile
pnpm build
# What the gateway serves to nodes at /install.sh and /downloads/ (the console's one-line install).
bash scripts/build-node-client.sh
# exec: the supervisor becomes this process, so SIGTERM/SIGINT reach it (pnpm would not pass them on).
exec node apps/server/dist/supervisor.js
