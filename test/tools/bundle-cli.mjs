// Part of `npm run build` (and the image build): bundles the CLI, its dependencies and the parts
// of the official Kubernetes client the installer uses (src/cluster/kubernetes-client-entry.ts)
// into dist/bundle: what the bin (package.json) and the image run, so development and the Job run
// the same code, and the image needs no node_modules. ES modules split at every lazy `import()`
// (a command, the client, tar, pino-pretty...): a run loads the code it uses and no more;
// `--version` loads cli.js and the main chunk only. Entry points:
//   dist/bundle/cli.js                the CLI (src/cli.ts)
//   dist/bundle/kubernetes-client.js  the client, as src/cluster/kube-client.ts loads it
// and shared chunks under dist/bundle/chunks/. dist/bundle-meta.json (esbuild's metafile, not
// shipped) says which source and package each chunk holds: test/cli/startup.test.ts reads it.
import { writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

const result = await build({
  // Minified ES modules for the Node 24 the image runs, and a `require` in each for the CommonJS
  // code inside (the dependencies require node's built-ins and their own files). Identifiers are
  // kept, so a stack trace in a log still names our functions.
  bundle: true,
  splitting: true,
  minifyWhitespace: true,
  minifySyntax: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  legalComments: 'none',
  logLevel: 'warning',
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  entryPoints: {
    cli: join(root, 'src', 'cli.ts'),
    'kubernetes-client': join(root, 'src', 'cluster', 'kubernetes-client-entry.ts'),
  },
  outdir: join(root, 'dist', 'bundle'),
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  metafile: true,
  plugins: [builtinsByRequire()],
});
writeFileSync(join(root, 'dist', 'bundle-meta.json'), JSON.stringify(result.metafile));

/**
 * Node's built-ins are required, not imported, by the bundle. An ES `import` of a built-in
 * fills in every export of its module namespace at once, lazy getters included: for node:http
 * that loads node's own copy of undici (its fetch and WebSocket), about 25 ms of every run that
 * talks to the cluster (a tenth of an unchanged redeploy), for a fetch the client never uses (it
 * brings its own undici). `require` leaves the getters alone. The bundle reads the same objects.
 * It also means no chunk names an export an older Node lacks: the Node check in src/cli.ts runs.
 */
function builtinsByRequire() {
  return {
    name: 'builtins-by-require',
    setup(b) {
      b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) =>
        builtins.has(args.path) && args.kind === 'import-statement'
          ? { path: args.path, namespace: 'builtin-by-require' }
          : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(args.path)});`,
        loader: 'js',
      }));
    },
  };
}
