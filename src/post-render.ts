// The executable helm runs as its post-renderer (helm 3: through a wrapper script; helm 4: as the
// `helm-installer-images` postrenderer/v1 plugin). Manifests on stdin, rewritten manifests on
// stdout, a report line appended to the file the plan names. See src/images/post-render-run.ts.
// Output is written document by document, waiting for the pipe to drain, so the rewritten stream
// never sits in memory twice.
import { once } from 'node:events';
import { runPostRender } from './images/post-render-run.js';

async function write(chunk: string | Uint8Array): Promise<void> {
  if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
}

const outcome = await runPostRender(process.argv.slice(2), process.stdin, write);
if (outcome.stderr) process.stderr.write(outcome.stderr);
// Exit through exitCode, not process.exit(): stdout still drains completely.
process.exitCode = outcome.exitCode;
