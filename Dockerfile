# The installer image: Node 24 (the LTS the tests pin), the pinned helm, the built CLI and the
# vendor's chart under /opt/helm-installer/app. No base image is pulled at run time.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY test/tools test/tools
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src src
COPY test test
RUN npx tsc -p tsconfig.json \
 && cp node_modules/.helm-installer/helm4 /tmp/helm \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/.helm-installer dist/test

FROM node:24-bookworm-slim
COPY --from=build /tmp/helm /usr/local/bin/helm
WORKDIR /opt/helm-installer
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY app app
# helm writes its cache, config and plugins (our post-renderer) under a writable /tmp, so the
# root filesystem can be read-only.
ENV HELM_CACHE_HOME=/tmp/helm/cache HELM_CONFIG_HOME=/tmp/helm/config HELM_DATA_HOME=/tmp/helm/data \
    HELM_INSTALLER_TERMINATION_LOG=/dev/termination-log NODE_ENV=production
USER 65532:65532
ENTRYPOINT ["node", "/opt/helm-installer/dist/src/cli.js"]
CMD ["install"]
