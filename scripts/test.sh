#!/usr/bin/env bash
# README's test command: install, build, lint, typecheck, unit + API tests, system and browser tests.
# Ends with one line "N passed, N failed" summed over every suite.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export CI="${CI:-}"

fail() { echo "$1" >&2; echo "0 passed, 1 failed"; exit 1; }

bash scripts/install-deps.sh --all || fail "install-deps failed"
pnpm install --frozen-lockfile || fail "pnpm install failed"
pnpm build || fail "build failed"
pnpm lint || fail "lint failed"
pnpm typecheck || fail "typecheck failed"

results=artifacts/test-results
rm -rf "$results" && mkdir -p "$results"

status=0
pnpm exec vitest run --reporter=default --reporter=json --outputFile="$results/unit.json" || status=1

if [ "$(id -u)" -eq 0 ]; then
  pnpm exec vitest run --config e2e/vitest.config.ts --reporter=default --reporter=json --outputFile="$results/e2e.json" || status=1
else
  echo "system and browser tests need root (network namespaces, WireGuard): skipped" >&2
fi

node scripts/summarize-tests.mjs "$results" || status=1
exit "$status"
