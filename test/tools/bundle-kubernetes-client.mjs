// Part of `npm run build` (and the image build): bundles the parts of the official Kubernetes
// client the installer uses (src/cluster/kubernetes-client-entry.ts) into one minified ES module,
// dist/vendor/kubernetes-client.js, which src/cluster/kube-client.ts loads. One file instead of
// about a thousand modules: see the entry file for the figures.
import { build } from 'esbuild';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

await build({
  // One minified ES module for the Node 24 the image runs, and a `require` for the CommonJS code
  // inside (the client's dependencies require node's built-ins and their own files).
  bundle: true,
  minify: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  legalComments: 'eof',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  entryPoints: [join(root, 'src', 'cluster', 'kubernetes-client-entry.ts')],
  outfile: join(root, 'dist', 'vendor', 'kubernetes-client.js'),
  plugins: [builtinsByRequire()],
});

/**
 * Node's built-ins are required, not imported, by the bundle. An ES `import` of a built-in
 * fills in every export of its module namespace at once, lazy getters included: for node:http
 * that loads node's own copy of undici (its fetch and WebSocket), about 25 ms of every run that
 * talks to the cluster (a tenth of an unchanged redeploy), for a fetch the client never uses (it
 * brings its own undici). `require` leaves the getters alone. The bundle reads the same objects.
 */
function builtinsByRequire() {
  return {
    name: 'builtins-by-require',
    setup(b) {
      b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) =>
        builtins.has(args.path) && args.kind === 'import-statement' ? { path: args.path, namespace: 'builtin-by-require' } : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(args.path)});`,
        loader: 'js',
      }));
    },
  };
}
