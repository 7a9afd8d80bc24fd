#!/usr/bin/env -S node --max-semi-space-size=1
// (The flag, also in the image's ENTRYPOINT: a young generation of 1 MB, so the post-render
// rewrite this process hosts adds little more than its input; see src/post-render/post-render-host.ts.)
// The bin entry: run and hand the exit code to Node, which flushes output before it exits.
// `npm run build` bundles it (test/tools/bundle-cli.mjs) into dist/bundle/cli.js, the file both
// the bin and the image run.
//
// This file imports nothing statically, so that it parses and links on any Node: run with a Node
// older than package.json's `engines` (NODE_MAJOR below; test/cli/old-node.test.ts checks both
// agree), it says which Node it needs and exits 2, before anything that needs Node 24 is loaded.
//
// Node's compile cache (under the OS temp dir, or NODE_COMPILE_CACHE) keeps the compiled code of
// the bundle between runs: most of a no-op redeploy's CPU otherwise. It is enabled before
// anything else is loaded, so main is imported dynamically.
const NODE_MAJOR = 24;

const found = Number(/^v(\d+)\./.exec(process.version)?.[1] ?? 0);
if (found < NODE_MAJOR) {
  process.stderr.write(
    `helm-installer needs Node.js >=${NODE_MAJOR} (package.json engines); this is Node.js ${process.version} (${process.execPath})\n`,
  );
  process.exitCode = 2;
} else {
  (await import('node:module')).enableCompileCache?.();
  const { main } = await import('./cli/main.js');
  process.exitCode = await main(process.argv);
}
