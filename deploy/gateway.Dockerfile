# Postern gateway: control plane (Fastify server), built console, nginx with the stream and Lua modules, WireGuard.
#
#   bash scripts/build-node-client.sh                                                     # the node client it serves
#   docker build -f deploy/gateway.Dockerfile -t postern/gateway .                        # from the repo root
#   docker buildx build --platform linux/amd64,linux/arm64 -f deploy/gateway.Dockerfile -t postern/gateway .
#
# No "# syntax=" line on purpose: it makes BuildKit pull a frontend image from a registry; the frontend built into
# Docker (20.10+) handles everything below, cache and secret mounts included.
#
# Multi-arch without cross-compiling: every stage runs on the target platform (no --platform=$BUILDPLATFORM), so
# the native modules (better-sqlite3, @node-rs/argon2) are built or fetched for the architecture they run on.
# Build and runtime stages use the same Debian release (bookworm), so the native modules link against the same glibc.
#
# Base images are build arguments so a machine without a registry can build from images it made itself
# (scripts/make-base-images.sh); the defaults are the official Node images.
ARG BUILD_IMAGE=node:22-bookworm
ARG RUNTIME_IMAGE=node:22-bookworm-slim

# --- build: install the workspace, build server + console, prune the server's production dependencies -------------
# The full (non-slim) image carries python3, make and g++, which node-gyp needs when no prebuilt binary fits.
FROM ${BUILD_IMAGE} AS build
# npm_config_nodedir: node-gyp takes Node's headers from the image (/usr/local/include/node) instead of downloading
# them, so a native build needs no network beyond the npm registry.
ENV TURBO_TELEMETRY_DISABLED=1 CI=1 npm_config_nodedir=/usr/local
WORKDIR /src

# Builds behind a TLS-inspecting proxy pass its CA bundle as a secret (not kept in any layer):
#   docker build --secret id=build-ca,src=/etc/ssl/certs/ca-certificates.crt …
# Without it, Node's own CA store is used.

# pnpm at the exact version the repo pins in package.json ("packageManager"), so the lockfile reads the same.
# Copied alone first, so this layer stays cached while the sources change.
COPY package.json ./
RUN --mount=type=secret,id=build-ca \
    if [ -s /run/secrets/build-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build-ca; fi \
 && npm install -g --no-fund --no-audit "$(node -p "require('./package.json').packageManager")"

COPY . .
# Only what the server and the console need ("..." = with their workspace dependencies), at the lockfile's versions.
# The store is a cache mount: a rebuild downloads nothing and reuses better-sqlite3's compiled module (pnpm's
# side-effects cache), so only a cold build compiles it.
# deploy: the server's production dependencies (the externals of its esbuild bundle) in /out/server, offline from the
# store filled by the install. The injected-workspace mode is the non-legacy deploy, which installs the lockfile's
# versions; the legacy one resolves versions again and fails offline (ERR_PNPM_NO_OFFLINE_META). The server's
# package.json "files" is ["dist"], so no source is copied.
# Then better-sqlite3 loses its build objects and SQLite sources: only build/Release/better_sqlite3.node is loaded.
RUN --mount=type=cache,id=postern-pnpm-store,target=/pnpm/store \
    --mount=type=secret,id=build-ca \
    if [ -s /run/secrets/build-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build-ca; fi \
 && pnpm install --frozen-lockfile --store-dir /pnpm/store --filter "@postern/server..." --filter "@postern/console..." \
 && pnpm exec turbo run build --filter=@postern/server --filter=@postern/console \
 && pnpm --config.inject-workspace-packages=true --filter @postern/server \
      deploy --prod --offline --store-dir /pnpm/store /out/server \
 && for dir in /out/server/node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3; do \
      mv "$dir/build/Release/better_sqlite3.node" /tmp/better_sqlite3.node \
      && rm -rf "$dir/build" "$dir/deps" "$dir/src" "$dir/binding.gyp" \
      && mkdir -p "$dir/build/Release" && mv /tmp/better_sqlite3.node "$dir/build/Release/"; \
    done \
 && node -e "require('/out/server/node_modules/better-sqlite3')(':memory:').close()"

# --- runtime --------------------------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime

# System packages come from the repo's one install script, the same steps CI and the README's run command take.
# tini runs as PID 1: it reaps what the gateway's supervised processes leave behind (nginx workers orphaned by a
# crashed master, wireguard-go) and forwards signals, under docker run, compose and Kubernetes alike.
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN bash /tmp/install-deps.sh --gateway-image \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/log/apt /var/log/dpkg.log /tmp/install-deps.sh

WORKDIR /app
# The monorepo layout is kept (apps/server next to apps/console) so the server finds the console build beside it.
COPY --from=build /out/server /app/apps/server
COPY --from=build /src/apps/console/dist /app/apps/console/dist
COPY deploy/healthcheck.mjs /app/deploy/healthcheck.mjs
# What the gateway serves to nodes at /install.sh and /downloads/ (the console's one-line install): install.sh, the
# node client for amd64 and arm64 and their checksums, built before the image by scripts/build-node-client.sh
# (build-images.sh and the release workflow run it). The same files in an amd64 and an arm64 image: the client is
# cross-built, and every gateway serves both architectures. A bracket in each name makes the COPY match nothing
# instead of failing when the client was not built (a plain `docker build` of a fresh clone): that gateway runs,
# serves no client, and its console offers the connect command alone.
COPY apps/cli/dis[t]/releas[e] /app/apps/cli/dist/release/

# POSTERN_HOST=127.0.0.1: the control plane's plain-HTTP port stays inside the container. nginx publishes the console
# and API over HTTPS on 443 and reaches the control plane on loopback; nothing else needs port 3000.
ENV NODE_ENV=production \
    POSTERN_DATA_DIR=/data \
    POSTERN_HOST=127.0.0.1 \
    POSTERN_PORT=3000

# Everything the gateway keeps (SQLite database, keys, certificates, generated nginx config) lives in one volume.
VOLUME ["/data"]

# 80/443: HTTP(S) services, ACME HTTP-01 and the console over HTTPS; 8443: HTTP services without a domain
# (POSTERN_NO_DOMAIN_HTTPS_PORT, an origin apart from the console's); 51820/udp: WireGuard.
# The TCP/UDP service range (POSTERN_TCP_PORT_RANGE, e.g. 30000-30100) is published at run time (-p, compose, Helm).
# Prometheus: /metrics on 443 with POSTERN_METRICS_TOKEN, or a listener of its own with POSTERN_METRICS_ADDRESS
# (e.g. 0.0.0.0:9464), not exposed here on purpose: publish it on a private address only (deploy/README.md).
EXPOSE 80 443 8443 51820/udp

# Runs as root on purpose: the data plane creates and configures the WireGuard interface (needs CAP_NET_ADMIN, and
# /dev/net/tun for the wireguard-go fallback) and nginx binds 80/443; nginx's workers drop to an unprivileged user.
# Run it with:  --cap-add NET_ADMIN --device /dev/net/tun  (compose: cap_add + devices; Helm: securityContext).
# Every 10 s: a check costs one short Node process, and `docker compose up --wait` or a script waiting for "healthy"
# is not kept waiting for a 30 s interval.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/deploy/healthcheck.mjs"]

ENTRYPOINT ["/usr/bin/tini", "--"]
# The supervisor: it keeps the control plane running and, on `docker stop` (SIGTERM through tini), stops it, nginx
# and wireguard-go in order (the control plane alone on SIGTERM would leave them for a successor to adopt).
CMD ["node", "apps/server/dist/supervisor.js"]
