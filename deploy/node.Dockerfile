# Postern node client: the `postern` CLI with wireguard-tools, wireguard-go and iproute2. Configured by POSTERN_URL
# and POSTERN_TOKEN; run it alone or as a sidecar (the pod's or container's network namespace gets the tunnel).
#
#   docker build -f deploy/node.Dockerfile -t postern/node .                               # from the repo root
#   docker run -d --cap-add NET_ADMIN --device /dev/net/tun \
#     -e POSTERN_URL=https://gateway.example.com -e POSTERN_TOKEN=... postern/node
#
# Multi-arch (amd64, arm64) for the same reasons as the gateway image: every stage runs on the target platform.
# No "# syntax=" line, and the base images are build arguments, for the reasons given in gateway.Dockerfile.
ARG BUILD_IMAGE=node:22-bookworm
ARG RUNTIME_IMAGE=node:22-bookworm-slim

# --- build: the CLI as one bundled file ------------------------------------------------------------------------------
# The steps up to the pnpm install are the gateway Dockerfile's, word for word: a build of both images runs them once.
FROM ${BUILD_IMAGE} AS build
ENV TURBO_TELEMETRY_DISABLED=1 CI=1 npm_config_nodedir=/usr/local
WORKDIR /src

COPY package.json ./
RUN --mount=type=secret,id=build-ca \
    if [ -s /run/secrets/build-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build-ca; fi \
 && npm install -g --no-fund --no-audit "$(node -p "require('./package.json').packageManager")"

COPY . .
# Only the CLI and what it depends on ("..."): the console and server are not built here.
RUN --mount=type=cache,id=postern-pnpm-store,target=/pnpm/store \
    --mount=type=secret,id=build-ca \
    if [ -s /run/secrets/build-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build-ca; fi \
 && pnpm install --frozen-lockfile --store-dir /pnpm/store --filter "@postern/cli..." \
 && pnpm exec turbo run build --filter=@postern/cli

# --- runtime --------------------------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime

# wireguard-tools, wireguard-go, iproute2 and tini from the repo's one install script.
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN bash /tmp/install-deps.sh --node-client \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/log/apt /var/log/dpkg.log /tmp/install-deps.sh

# The bundle is self-contained (no node_modules); it starts with a "#!/usr/bin/env node" line, like any npm bin.
COPY --from=build /src/apps/cli/dist/postern.mjs /usr/local/lib/postern/postern.mjs
RUN chmod 0755 /usr/local/lib/postern/postern.mjs \
 && ln -s /usr/local/lib/postern/postern.mjs /usr/local/bin/postern

COPY deploy/node-entrypoint.sh /usr/local/bin/postern-node-entrypoint
RUN chmod 0755 /usr/local/bin/postern-node-entrypoint

# Root with CAP_NET_ADMIN is what creating and configuring a WireGuard interface takes (kernel or wireguard-go);
# the container needs nothing else: --cap-add NET_ADMIN, plus --device /dev/net/tun where the host kernel has no
# WireGuard module and wireguard-go is used.
ENV NODE_ENV=production

# Healthy when the tunnel is up and the gateway answers through it within 2 s.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["postern", "status", "--health"]

# tini as PID 1: wireguard-go outlives the CLI process that started it only as an orphan, which tini reaps; it also
# passes docker stop's SIGTERM on to `postern connect --daemon`, which takes the tunnel down and exits.
ENTRYPOINT ["/usr/bin/tini", "--", "postern-node-entrypoint"]
