// The bench's stand-in for the installer process during `helm upgrade`: it hosts the post-render
// exactly as the installer does (startPostRenderHost serving runPostRender with the run's plan,
// here built from the registry and pull secret given), started with the installer's Node flags,
// and measures what each request adds to it: the peak RSS above what the process held when the
// request came (VmHWM reset through clear_refs), and the CPU it spent. One line of JSON per request in <workDir>/host-stats.jsonl; prints
// "READY <shim>" once serving, and ends when its stdin closes.
//   node --max-semi-space-size=1 dist/test/bench/post-render-host.js <workDir> <registry> <pull secret> [<manifests>]
// With <manifests>, it first does what `install --registry` does in-process before helm upgrade
// starts, on those manifests: the image plan's read of the rendered chart (collectAll) and the
// render check's rewrite (rewriteRendered), and keeps the rendered chart as install does
// (AirgapSetup.rendered). Without, the request is the process's first rewrite (cold).
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rewriteRendered } from '../../src/post-render/airgap.js';
import { collectAll } from '../../src/images/manifest-images.js';
import { parseRegistryAddress } from '../../src/common/image-reference.js';
import { startPostRenderHost } from '../../src/post-render/post-render-host.js';
import { runPostRender } from '../../src/post-render/post-render-run.js';
import type { RewritePlan } from '../../src/post-render/rewrite-plan.js';

export interface HostStats {
  /** RSS of the process when the request came (MB): the installer's own, already paid. */
  beforeMb: number;
  /** Peak RSS while serving it, above beforeMb (MB): what the rewrite added. */
  addedMb: number;
  /** CPU seconds the process spent serving it. */
  cpu: number;
}

const [workDir, registry, pullSecret, manifestsFile] = process.argv.slice(2);
if (!workDir || !registry || !pullSecret)
  throw new Error('usage: post-render-host.js <workDir> <registry> <pull secret> [<manifests>]');
const plan: RewritePlan = { registry: parseRegistryAddress(registry), extraPaths: [], imagePullSecret: pullSecret };

const rendered = manifestsFile ? readFileSync(manifestsFile, 'utf8') : undefined;
if (rendered !== undefined) {
  collectAll(rendered, plan.extraPaths);
  rewriteRendered(rendered, plan);
}

const statusMb = (field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
const statsFile = join(workDir, 'host-stats.jsonl');

const host = await startPostRenderHost(workDir, async (input, write) => {
  writeFileSync('/proc/self/clear_refs', '5'); // VmHWM := VmRSS
  const beforeMb = statusMb('VmRSS');
  const cpu = process.cpuUsage();
  const served = await runPostRender(plan, workDir, input, write);
  const used = process.cpuUsage(cpu);
  const stats: HostStats = {
    beforeMb,
    addedMb: Math.max(0, statusMb('VmHWM') - beforeMb),
    cpu: (used.user + used.system) / 1e6,
  };
  appendFileSync(statsFile, `${JSON.stringify(stats)}\n`);
  return served;
});
process.stdout.write(`READY ${host.shim}\n`);
// Held as install holds it, through the upgrade.
export const held = rendered;
process.stdin.resume();
process.stdin.on('end', () => {
  host.dispose();
  process.stdin.pause();
});
