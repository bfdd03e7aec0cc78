#!/usr/bin/env bash
# README's test command: install, build, lint, typecheck, unit + API tests, system, browser and image tests.
# Ends with one line "N passed, N failed" summed over every suite.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export CI="${CI:-}"

fail() { echo "$1" >&2; echo "0 passed, 1 failed"; exit 1; }
# Each step's seconds, also in artifacts/test-times.tsv (step, seconds; a run that gets to the end adds the total).
mkdir -p artifacts/images
times=artifacts/test-times.tsv
printf 'step\tseconds\n' >"$times"
step_started=$SECONDS
timed() {
  echo "test.sh: $1 took $((SECONDS - step_started)) s" >&2
  printf '%s\t%s\n' "$1" "$((SECONDS - step_started))" >>"$times"
  step_started=$SECONDS
}

bash scripts/install-deps.sh --all || fail "install-deps failed"
timed "install-deps"

# --- Docker for the image tests (root only): a daemon, then both images built in the background ----------------------
docker=/usr/bin/docker
# shellcheck disable=SC1091  # start_dockerd, stop_dockerd
. scripts/lib/dockerd.sh
images_pid=''
# shellcheck disable=SC2317  # called by the EXIT trap
stop_background() {
  if [ -n "$images_pid" ] && kill -0 "$images_pid" 2>/dev/null; then kill -- "-$images_pid" 2>/dev/null || kill "$images_pid" 2>/dev/null; fi
  stop_dockerd
}
trap stop_background EXIT

# shellcheck disable=SC1091  # start_test_postgres
. scripts/lib/postgres.sh

if [ "$(id -u)" -eq 0 ]; then
  # As root every prerequisite is there (the test command installs and starts them): a suite or test that a
  # skipIf/runIf gate turns off then fails (apps/server/src/test/requirements.ts; scripts/summarize-tests.mjs names the
  # tests skipped on purpose).
  export POSTERN_TEST_REQUIRE=all
  start_test_postgres || fail "PostgreSQL for the store tests did not start"
  timed "postgres"
  start_dockerd || fail "the Docker daemon did not start"
  timed "dockerd"
fi

pnpm install --frozen-lockfile || fail "pnpm install failed"
timed "pnpm install"
# The node client for both architectures, once per run: the gateway image copies it and the install tests download
# it from there (scripts/build-node-client.sh keeps an unchanged one).
pnpm exec turbo run build --filter=@postern/cli >/dev/null || fail "building the CLI failed"
bash scripts/build-node-client.sh || fail "building the node client failed"
timed "node client"

if [ "$(id -u)" -eq 0 ]; then
  # Base images (made once per machine), both images and the install tests' fresh Debian machine, while the workspace
  # builds and the unit tests run; the image tests start only after this finished. The tag is this run's, so
  # parallel runs do not share images.
  image_tag="run-$$-$(date +%s)"
  export POSTERN_E2E_IMAGE_TAG="$image_tag"
  setsid bash scripts/build-images.sh --tag "$image_tag" --test-host >artifacts/images/build.log 2>&1 &
  images_pid=$!
fi
pnpm build || fail "build failed"
timed "build"
pnpm lint || fail "lint failed"
pnpm format:check || fail "formatting differs from prettier's: run pnpm format"
timed "lint"
pnpm typecheck || fail "typecheck failed"
timed "typecheck"

results=artifacts/test-results
rm -rf "$results" && mkdir -p "$results"

status=0
pnpm exec vitest run --reporter=default --reporter=json --outputFile="$results/unit.json" || status=1
timed "unit tests"

if [ "$(id -u)" -eq 0 ]; then
  # The API tests once more, on PostgreSQL (a database per app): the store's second engine (apps/server/src/db).
  pnpm --filter @postern/server exec vitest run --config vitest.postgres.config.ts --reporter=default --reporter=json \
    --outputFile="$PWD/$results/api-postgres.json" || status=1
  timed "API tests on PostgreSQL"
fi

if [ "$(id -u)" -eq 0 ]; then
  if wait "$images_pid"; then
    export POSTERN_E2E_IMAGES_BUILT="$image_tag"
  else
    # The image tests then build again themselves and fail with the build's own error.
    echo "building the images failed; see artifacts/images/build.log" >&2
  fi
  images_pid=''
  cat artifacts/images/build.log >&2
  timed "waiting for the image builds"
  pnpm exec vitest run --config e2e/vitest.config.ts --reporter=default --reporter=json --outputFile="$results/e2e.json" || status=1
  timed "system, browser, deploy and image tests"
  "$docker" image rm "postern-e2e/gateway:$image_tag" "postern-e2e/node:$image_tag" >/dev/null 2>&1 || true
else
  echo "system, browser and image tests need root (network namespaces, WireGuard, Docker): skipped" >&2
fi

node scripts/summarize-tests.mjs "$results" || status=1
printf 'total\t%s\n' "$SECONDS" >>"$times"
exit "$status"
