#!/usr/bin/env -S node --max-semi-space-size=1
// (The flag, also in the image's ENTRYPOINT: a young generation of 1 MB, so the post-render
// rewrite this process hosts adds little more than its input; see src/images/post-render-host.ts.)
// The bin entry: run and hand the exit code to Node, which flushes output before it exits.
// Node's compile cache (under the OS temp dir, or NODE_COMPILE_CACHE) keeps the compiled code of
// our modules and the Kubernetes client between runs: most of a no-op redeploy's CPU otherwise.
// It is enabled before anything else is loaded, so main is imported dynamically.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
const { main } = await import('./main.js');
process.exitCode = await main(process.argv);
