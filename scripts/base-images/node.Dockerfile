# Stand-ins for the official node:22-bookworm(-slim) images, for machines that cannot pull from a registry:
# scripts/make-base-images.sh builds them from a debootstrapped Debian bookworm and the official Node binary from
# the npm registry. Same layout as the official images (Node in /usr/local, npm beside it), so the project's
# Dockerfiles build the same on these as on the real ones.
ARG DEBIAN_IMAGE

# --- slim: Debian + Node + npm (node:22-bookworm-slim) ---------------------------------------------------------------
FROM ${DEBIAN_IMAGE} AS slim
ARG NODE_VERSION
ENV NODE_VERSION=${NODE_VERSION}
COPY node/bin/ /usr/local/bin/
COPY node/include/ /usr/local/include/
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
CMD ["node"]

# --- full: + what node-gyp needs to compile native modules (node:22-bookworm carries these and more) -----------------
FROM slim AS full
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
