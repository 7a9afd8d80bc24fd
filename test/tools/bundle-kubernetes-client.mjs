// Part of `npm run build` (and the image build): bundles the parts of the official Kubernetes
// client the installer uses (src/cluster/kubernetes-client-entry.ts) into one minified ES module,
// dist/vendor/kubernetes-client.js, which src/cluster/kube-client.ts loads. One file instead of
// about a thousand modules: see the entry file for the figures.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
await build({
  entryPoints: [join(root, 'src', 'cluster', 'kubernetes-client-entry.ts')],
  outfile: join(root, 'dist', 'vendor', 'kubernetes-client.js'),
  bundle: true,
  minify: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  legalComments: 'eof',
  logLevel: 'warning',
  // Its CommonJS dependencies require node's built-ins: give the ES module a require.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});
