#!/bin/sh
# Entrypoint of the node client image: with no arguments, connect to the gateway and stay in the foreground keeping
# the tunnel up; with arguments, run them instead (e.g. `docker run … postern/node postern status`).
set -eu

if [ "$#" -gt 0 ]; then
  exec "$@"
fi

# A token may come from a file (Docker/Kubernetes secret) instead of the environment.
if [ -z "${POSTERN_TOKEN:-}" ] && [ -n "${POSTERN_TOKEN_FILE:-}" ]; then
  POSTERN_TOKEN="$(cat "$POSTERN_TOKEN_FILE")"
fi

if [ -z "${POSTERN_URL:-}" ] || [ -z "${POSTERN_TOKEN:-}" ]; then
  echo "postern-node: set POSTERN_URL (the gateway's public HTTPS URL, e.g. https://gateway.example.com) and" >&2
  echo "postern-node: POSTERN_TOKEN (the node's access token, or POSTERN_TOKEN_FILE with the path of a file holding it);" >&2
  echo "postern-node: POSTERN_PIN (sha256:…) trusts a gateway's self-signed certificate" >&2
  exit 64
fi

# POSTERN_PIN, when set, is read by `postern connect` itself (certificate pinning for self-signed gateways), like
# POSTERN_URL and POSTERN_TOKEN would be: it never needs to appear on a command line.

# POSTERN_DOCKER=1 (with the engine's socket mounted at /var/run/docker.sock) publishes the engine's containers that
# carry postern.* labels (docs/LABELS.md); POSTERN_DOCKER_FILTER=LABEL=VALUE limits it to the containers with that label.
set -- --daemon
if [ "${POSTERN_DOCKER:-}" = "1" ] || [ "${POSTERN_DOCKER:-}" = "true" ]; then set -- "$@" --docker; fi
if [ -n "${POSTERN_DOCKER_FILTER:-}" ]; then set -- "$@" --docker-filter "$POSTERN_DOCKER_FILTER"; fi

exec postern connect --url "$POSTERN_URL" --token "$POSTERN_TOKEN" "$@"
