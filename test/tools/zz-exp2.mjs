import { build } from 'esbuild';
import { nodeEsm, root } from './esbuild-node-esm.mjs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
const lazy = process.argv[2] === 'lazy';
const lazyModels = {
  name: 'lazy-models',
  setup(b) {
    b.onLoad({ filter: /client-node[\\/]dist[\\/]gen[\\/]models[\\/](ObjectSerializer|all)\.js$/ }, (args) => {
      let src = readFileSync(args.path, 'utf8');
      if (args.path.endsWith('all.js')) return { contents: '', loader: 'js' };
      const names = new Set();
      src = src.replace(/^export \* from '\.\.\/models\/[A-Za-z0-9]+\.js';\n/gm, '');
      src = src.replace(/^import \{ ([A-Za-z0-9]+) \} from '\.\.\/models\/\1\.js';\n/gm, (_, n) => { names.add(n); return ''; });
      src = src.replace(/^    "([A-Za-z0-9]+)": \1,$/gm, (m, n) => names.has(n) ? `    get "${n}"() { const v = require('../models/${n}.js').${n}; Object.defineProperty(this, "${n}", { value: v, enumerable: true }); return v; },` : m);
      return { contents: src, loader: 'js', resolveDir: args.path.replace(/[\\/][^\\/]+$/, '') };
    });
  },
};
await build({ ...nodeEsm, entryPoints: [join(root, 'src', 'cluster', 'kubernetes-client-entry.ts')], outfile: `/tmp/floor/kc-${lazy ? 'lazy' : 'plain'}.js`, plugins: lazy ? [lazyModels] : [], minify: false });
