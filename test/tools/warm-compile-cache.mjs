// Part of the image build (Dockerfile, final stage): fills Node's compile cache with every module
// the CLI can load, so that a Job's first run, which is also its only one, starts warm. A Job's
// /tmp is a new emptyDir each time, so the cache node keeps there by default is always empty:
// every run compiled the Kubernetes client's bundle and our modules again, and wrote the cache
// out at exit for nobody. The image keeps it under NODE_COMPILE_CACHE instead, read-only at run
// time (node then reads it and skips writing, and a run as another user, whose cache directory
// node names by its uid, simply runs without one).
//   node warm-compile-cache.mjs <package root>     (NODE_COMPILE_CACHE must be set)
import { readdirSync } from 'node:fs';
import { constants, createRequire, enableCompileCache, flushCompileCache } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
if (!root || !process.env.NODE_COMPILE_CACHE) throw new Error('usage: NODE_COMPILE_CACHE=<dir> node warm-compile-cache.mjs <package root>');
const cache = enableCompileCache(process.env.NODE_COMPILE_CACHE);
if (cache.status === constants.compileCacheStatus.FAILED) throw new Error(`compile cache not enabled: ${cache.message}`);

// The entry point runs when imported (the CLI): everything else only declares. Its own code is a few lines; what they import is warmed here. The Kubernetes
// client's unbundled entry is left out: runs load its bundle (dist/vendor), and importing the
// package itself would add its thousand modules to the cache for nothing.
const skipped = new Set(['src/cli.js', 'src/cluster/kubernetes-client-entry.js'].map((f) => join(root, 'dist', f)));
const modules = ['src', 'vendor']
  .flatMap((dir) => readdirSync(join(root, 'dist', dir), { recursive: true, withFileTypes: true }))
  .filter((e) => e.isFile() && e.name.endsWith('.js'))
  .map((e) => join(e.parentPath, e.name))
  .filter((file) => !skipped.has(file))
  .sort();
for (const file of modules) await import(pathToFileURL(file).href);
// Loaded by require only with --log-format pretty.
createRequire(join(root, 'package.json'))('pino-pretty');
flushCompileCache();
process.stdout.write(`compile cache: ${modules.length} modules and their dependencies under ${cache.directory}\n`);
