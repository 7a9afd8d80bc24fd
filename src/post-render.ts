// The executable helm runs as its post-renderer (helm 3: through a wrapper script; helm 4: as the
// `helm-installer-images` postrenderer/v1 plugin). Manifests on stdin, rewritten manifests on
// stdout, a report line appended to the file the plan names. See src/images/post-render-run.ts.
import { runPostRender } from './images/post-render-run.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const outcome = await runPostRender(process.argv.slice(2), await readStdin());
if (outcome.stderr) process.stderr.write(outcome.stderr);
// Exit through exitCode, not process.exit(): a large stdout still drains completely.
if (outcome.stdout) process.stdout.write(outcome.stdout);
process.exitCode = outcome.exitCode;
