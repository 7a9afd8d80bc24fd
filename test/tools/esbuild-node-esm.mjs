// What the build's two bundles (bundle-kubernetes-client.mjs, bundle-post-render.mjs) share: one
// minified ES module for the Node 24 the image runs, and a `require` for the CommonJS code inside
// (the client's dependencies and the yaml package require node's built-ins and their own files).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const nodeEsm = {
  bundle: true,
  minify: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  legalComments: 'eof',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
};
