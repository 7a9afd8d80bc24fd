// Part of the image build (Dockerfile, final stage): fills Node's compile cache with every module
// the CLI can load, so that a Job's first run, which is also its only one, starts warm. A Job's
// /tmp is a new emptyDir each time, so the cache node keeps there by default is always empty:
// every run compiled the Kubernetes client's bundle and our modules again, and wrote the cache
// out at exit for nobody. The image keeps it under NODE_COMPILE_CACHE instead, read-only at run
// time (node then reads it and skips writing, and a run as another user, whose cache directory
// node names by its uid, simply runs without one).
//   node warm-compile-cache.mjs <package root>     (NODE_COMPILE_CACHE must be set)
import { readdirSync } from 'node:fs';
import { constants, enableCompileCache, flushCompileCache } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
if (!root || !process.env.NODE_COMPILE_CACHE)
  throw new Error('usage: NODE_COMPILE_CACHE=<dir> node warm-compile-cache.mjs <package root>');
const cache = enableCompileCache(process.env.NODE_COMPILE_CACHE);
if (cache.status === constants.compileCacheStatus.FAILED)
  throw new Error(`compile cache not enabled: ${cache.message}`);

// Every file of the bundle (dist/bundle: test/tools/bundle-cli.mjs), whatever a run may load:
// the commands, the Kubernetes client, pino-pretty. All of them only declare when imported, but
// the entry point, cli.js, which runs the CLI: its own code is a few lines.
const bundle = join(root, 'dist', 'bundle');
const modules = readdirSync(bundle, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith('.js'))
  .map((e) => join(e.parentPath, e.name))
  .filter((file) => file !== join(bundle, 'cli.js'))
  .sort();
for (const file of modules) await import(pathToFileURL(file).href);
flushCompileCache();
process.stdout.write(`compile cache: ${modules.length} modules under ${cache.directory}\n`);
