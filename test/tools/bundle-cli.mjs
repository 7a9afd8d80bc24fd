// Part of `npm run build` (and the image build), after tsc: bundles the CLI (src/main.ts, which
// src/cli.ts imports once Node's compile cache is on) with the yaml package into one minified
// ES module, written over tsc's dist/src/main.js. The yaml package is about 80 CommonJS files,
// and resolving and loading them one by one was about a fifth of the CPU every run spends before
// its first helm call (`install --help`: 145 -> 117 ms of CPU, medians of 10, 2026-11-24); the
// same for our hundred modules. Other packages stay external (pino starts worker threads from
// its own files; commander and tar are resolved once), and so does the Kubernetes client, which
// has its own bundle (bundle-kubernetes-client.mjs) loaded only when a command needs a cluster.
// Modules the CLI imports lazily are still evaluated only when first imported.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { nodeEsm, root } from './esbuild-node-esm.mjs';

const outfile = join(root, 'dist', 'src', 'main.js');
await build({
  ...nodeEsm,
  entryPoints: [join(root, 'src', 'main.ts')],
  outfile,
  allowOverwrite: true,
  // Stack traces of an internal error should still name our functions.
  keepNames: true,
  plugins: [externalsButYaml()],
});
// tsc's source map describes the file this one replaced.
rmSync(`${outfile}.map`, { force: true });

function externalsButYaml() {
  return {
    name: 'externals-but-yaml',
    setup(b) {
      // The unbundled client entry (used only where its bundle is absent), at its place in dist.
      b.onResolve({ filter: /kubernetes-client-entry\.js$/ }, () => ({ path: './cluster/kubernetes-client-entry.js', external: true }));
      b.onResolve({ filter: /^[^./]/ }, (args) => (args.path === 'yaml' ? undefined : { path: args.path, external: true }));
    },
  };
}
