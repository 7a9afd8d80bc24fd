// `npm run demo`: what the product is for, in three short steps, through the built CLI exactly as
// the Job runs it. With no KUBECONFIG it starts (or reuses) the local control plane and leaves it
// running.
//   1. install the bundled chart with the sample customer values; show the pods and their images;
//   2. airgap: a real local registry holding what `helm-installer images --registry` lists (pushed
//      the way KOTS pushes an airgap bundle), an install with --registry into a second namespace,
//      then every pod's image: rewritten to the local registry, and present there.
// Each CLI run's full JSON log goes to a file under .demo/; the screen gets the summaries.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { checkImagesExist } from '../../src/images/registry-preflight.js';
import { pushTestImage, registryAvailable, startRegistry, type TestRegistry } from '../images/registry.js';
import { ensureCluster } from './control-plane.js';
import { getJson } from './kube.js';
import { installerNodeArgs } from '../helpers.js';
import { kubectlPath, repoRoot } from './paths.js';

const release = process.env.HELM_INSTALLER_RELEASE ?? 'storefront';
const namespace = process.env.HELM_INSTALLER_NAMESPACE ?? 'storefront';
const airgapNamespace = `${namespace}-airgap`;
const customerValues = join(repoRoot(), 'app', 'examples', 'customer-values.yaml');
const logDir = join(repoRoot(), '.demo');
const say = (line = '') => process.stdout.write(`${line}\n`);
const heading = (line: string) => say(`\n== ${line}`);

interface PodView {
  metadata: { name: string; ownerReferences?: { kind: string }[] };
  spec: { containers: { image: string }[]; initContainers?: { image: string }[] };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}

async function main(): Promise<number> {
  mkdirSync(logDir, { recursive: true });
  let kubeconfig = process.env.KUBECONFIG;
  const local = !kubeconfig;
  heading('1. A cluster');
  if (!kubeconfig) {
    say('No KUBECONFIG: starting the local control plane (the first run builds it from Go modules: 10-20 min).');
    const began = Date.now();
    const info = await ensureCluster({ log: (l) => process.stderr.write(`[cluster] ${l}\n`), usage: 'keep' });
    kubeconfig = info.kubeconfig;
    say(`Local cluster at ${info.apiServerUrl} (${((Date.now() - began) / 1000).toFixed(1)} s); stop it with: npm run cluster:down`);
  } else {
    say(`Using KUBECONFIG=${kubeconfig}`);
  }
  const env = { ...process.env, KUBECONFIG: kubeconfig };

  heading('2. Install the bundled chart with the customer values KOTS would mount');
  const installed = await runInstaller('install', ['--release', release, '--namespace', namespace, '--values', customerValues], env);
  if (installed !== 0) return installed;
  await showPods(namespace, kubeconfig);

  heading('3. Airgap: the same chart, every image from a local registry');
  if (!local) {
    say('Skipped: the demo registry listens on this machine\'s loopback, which a remote cluster cannot pull from.');
    return 0;
  }
  if (!registryAvailable()) {
    say('Skipped: Debian\'s docker-registry is not installed (npm test installs it; or: apt-get install docker-registry apache2-utils).');
    return 0;
  }
  const registry = await startRegistry();
  try {
    return await airgapInstall(registry, env, kubeconfig);
  } finally {
    await registry.stop();
  }
}

async function airgapInstall(registry: TestRegistry, env: NodeJS.ProcessEnv, kubeconfig: string): Promise<number> {
  const address = `${registry.host}/acme`;
  // The chart pins one image by digest. A demo image cannot have a real image's digest, so the
  // demo pins it to the digest of the image it pushes (a vendor's bundle carries the real one).
  const digest = await pushTestImage(registry, 'acme/alpine', 'pinned');
  const pin = `report.image.digest=${digest}`;
  const listed = await execa(process.execPath, [...installerNodeArgs, cli(), 'images', '--registry', address, '--image-path', 'Promotion:spec.image', '--set', pin], { env, reject: false });
  if (listed.exitCode !== 0) {
    say(String(listed.stderr));
    return listed.exitCode ?? 1;
  }
  const images = String(listed.stdout).trim().split('\n');
  for (const image of images) {
    const m = /^[^/]+\/([^:@]+)(?::([^@]+))?/.exec(image);
    if (m?.[1] && m[2]) await pushTestImage(registry, m[1], m[2]);
  }
  say(`Local registry ${registry.host} (Debian docker-registry) now holds the ${images.length} images \`helm-installer images --registry ${address}\` lists.`);
  const code = await runInstaller(
    'airgap-install',
    ['--release', release, '--namespace', airgapNamespace, '--values', customerValues, '--registry', address, '--image-path', 'Promotion:spec.image', '--set', pin],
    env,
  );
  if (code !== 0) return code;
  const pods = await showPods(airgapNamespace, kubeconfig);
  const running = [...new Set(pods.flatMap(imagesOf))];
  const check = await checkImagesExist(running);
  const local = running.filter((i) => i.startsWith(`${address}/`));
  say(`\n${local.length} of ${running.length} running images come from ${address}; ${check.present.length} of ${running.length} are present in the registry.`);
  return local.length === running.length && check.present.length === running.length ? 0 : 1;
}

/** Runs the built CLI like the Job does; the full log goes to a file, the summary to the screen. */
async function runInstaller(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const logFile = join(logDir, `${name}.log`);
  say(`$ helm-installer install ${args.map((a) => (a.startsWith('/') ? relative(process.cwd(), a) : a)).join(' ')}`);
  const run = await execa(process.execPath, [...installerNodeArgs, cli(), 'install', ...args, '--termination-log', join(logDir, `${name}.termination-log`)], {
    env,
    reject: false,
    all: true,
  });
  writeFileSync(logFile, String(run.all ?? ''));
  say(String(run.stderr).trimEnd());
  say(`(full log: ${relative(process.cwd(), logFile)})`);
  return run.exitCode ?? 1;
}

async function showPods(ns: string, kubeconfig: string): Promise<PodView[]> {
  const pods = (await getJson<{ items: PodView[] }>(['get', 'pods'], { kubeconfig, namespace: ns })).items;
  say(`Pods in ${ns}:`);
  for (const p of pods) {
    const ready = p.status.phase === 'Succeeded' ? 'Completed' : p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? 'Ready' : 'not Ready';
    say(`  ${p.metadata.name.padEnd(40)} ${ready.padEnd(10)} ${imagesOf(p).join(', ')}`);
  }
  say(`(kubectl: ${relative(process.cwd(), kubectlPath())} --kubeconfig ${kubeconfig} -n ${ns} get pods)`);
  return pods;
}

function imagesOf(p: PodView): string[] {
  return [...(p.spec.initContainers ?? []), ...p.spec.containers].map((c) => c.image);
}

function cli(): string {
  return join(repoRoot(), 'dist', 'src', 'cli.js');
}

process.exitCode = await main();
