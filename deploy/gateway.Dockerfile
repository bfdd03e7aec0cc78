# syntax=docker/dockerfile:1
# Postern gateway: control plane (Fastify server), built console, nginx with the stream module and WireGuard tools.
#
#   docker build -f deploy/gateway.Dockerfile -t postern/gateway .                        # from the repo root
#   docker buildx build --platform linux/amd64,linux/arm64 -f deploy/gateway.Dockerfile -t postern/gateway .
#
# Multi-arch without cross-compiling: every stage runs on the target platform (no --platform=$BUILDPLATFORM), so
# the native modules (better-sqlite3, @node-rs/argon2) are built or fetched for the architecture they run on.
# Build and runtime stages use the same Debian release (bookworm), so the native modules link against the same glibc.
ARG NODE_VERSION=22

# --- build: install the workspace, build server + console, prune the server's production dependencies -------------
# The full (non-slim) image carries python3, make and g++, which node-gyp needs when no prebuilt binary fits.
FROM node:${NODE_VERSION}-bookworm AS build
ENV TURBO_TELEMETRY_DISABLED=1 CI=1
WORKDIR /src

# pnpm at the exact version the repo pins in package.json ("packageManager"), so the lockfile reads the same.
COPY package.json ./
RUN npm install -g "$(node -p "require('./package.json').packageManager")"

# Download every package from the lockfile alone: this layer stays cached until the lockfile changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN --mount=type=cache,id=postern-pnpm-store,target=/pnpm/store \
    pnpm fetch --store-dir /pnpm/store

COPY . .
RUN --mount=type=cache,id=postern-pnpm-store,target=/pnpm/store \
    pnpm install --frozen-lockfile --offline --store-dir /pnpm/store \
 && pnpm build \
 && pnpm --filter @postern/server deploy --prod --legacy --offline --store-dir /pnpm/store /out/server

# --- runtime --------------------------------------------------------------------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim AS runtime

# System packages come from the repo's one install script, the same steps CI and the README's run command take.
COPY scripts/install-deps.sh /tmp/install-deps.sh
# tini runs as PID 1: it reaps what the gateway's supervised processes leave behind (nginx workers orphaned by a
# crashed master, wireguard-go) and forwards signals, under docker run, compose and Kubernetes alike.
RUN bash /tmp/install-deps.sh --gateway-image \
 && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh

WORKDIR /app
# The monorepo layout is kept (apps/server next to apps/console) so the server finds the console build beside it.
COPY --from=build /out/server /app/apps/server
COPY --from=build /src/apps/console/dist /app/apps/console/dist
COPY deploy/healthcheck.mjs /app/deploy/healthcheck.mjs

ENV NODE_ENV=production \
    POSTERN_DATA_DIR=/data \
    POSTERN_HOST=0.0.0.0 \
    POSTERN_PORT=3000

# Everything the gateway keeps (SQLite database, keys, certificates, generated nginx config) lives in one volume.
VOLUME ["/data"]

# 80/443: HTTP(S) services, ACME HTTP-01 and the console over HTTPS; 51820/udp: WireGuard; 3000: API and console.
# The TCP/UDP service range (POSTERN_TCP_PORT_RANGE, e.g. 30000-30100) is published at run time (-p, compose, Helm).
EXPOSE 80 443 51820/udp 3000

# Runs as root on purpose: the data plane creates and configures the WireGuard interface (needs CAP_NET_ADMIN, and
# /dev/net/tun for the wireguard-go fallback) and nginx binds 80/443; nginx's workers drop to an unprivileged user.
# Run it with:  --cap-add NET_ADMIN --device /dev/net/tun  (compose: cap_add + devices; Helm: securityContext).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "/app/deploy/healthcheck.mjs"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "apps/server/dist/main.js"]
