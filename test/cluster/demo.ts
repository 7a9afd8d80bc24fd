// `npm run demo`: what the product is for, in short steps, through the built CLI exactly as the
// Job runs it. With no KUBECONFIG it starts (or reuses) the local control plane and leaves it
// running.
//   1. install the bundled app, a release plan of three charts (app/releases.yaml), with the
//      sample customer values; show the order the releases were deployed in and the pods;
//   2. switch the optional cache off, as the KOTS box does: the next run uninstalls its release;
//   3. airgap: a real local registry holding what `helm-installer images --registry` lists (pushed
//      the way KOTS pushes an airgap bundle), an install with --registry into a second namespace,
//      then every pod's image: rewritten to the local registry, and present there.
// Each CLI run's full JSON log goes to a file under .demo/; the screen gets the summaries.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { execa } from 'execa';
import { parseDocument } from 'yaml';
import { checkImagesExist } from '../../src/registry/registry-preflight.js';
import { pushTestImage, registryAvailable, startRegistry, type TestRegistry } from '../images/registry.js';
import { ensureCluster } from './control-plane.js';
import { getJson } from './kube.js';
import { installerNodeArgs } from '../helpers.js';
import { kubectlPath, repoRoot } from './paths.js';

const namespace = process.env.HELM_INSTALLER_NAMESPACE ?? 'storefront';
const airgapNamespace = `${namespace}-airgap`;
const logDir = join(repoRoot(), '.demo');
// With a release plan each customer values file is named after its release (README "Several
// charts"): the sample values are the storefront release's.
const customerValues = join(logDir, 'values', 'storefront.yaml');
const cacheOff = join(logDir, 'values-cache-off', 'storefront.yaml');
const say = (line = '') => process.stdout.write(`${line}\n`);
const heading = (line: string) => say(`\n== ${line}`);

interface PodView {
  metadata: { name: string; ownerReferences?: { kind: string }[] };
  spec: { containers: { image: string }[]; initContainers?: { image: string }[] };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}

async function main(): Promise<number> {
  writeValues();
  let kubeconfig = process.env.KUBECONFIG;
  const local = !kubeconfig;
  heading('1. A cluster');
  if (!kubeconfig) {
    say('No KUBECONFIG: starting the local control plane (the first run builds it from Go modules: 10-20 min).');
    const began = Date.now();
    const info = await ensureCluster({ log: (l) => process.stderr.write(`[cluster] ${l}\n`), usage: 'keep' });
    kubeconfig = info.kubeconfig;
    say(
      `Local cluster at ${info.apiServerUrl} (${((Date.now() - began) / 1000).toFixed(1)} s); stop it with: npm run cluster:down`,
    );
  } else {
    say(`Using KUBECONFIG=${kubeconfig}`);
  }
  const env = { ...process.env, KUBECONFIG: kubeconfig };

  heading('2. Install the bundled app (app/releases.yaml: three charts) with the customer values KOTS would mount');
  const installed = await runInstaller('install', ['--namespace', namespace, '--values', customerValues], env);
  if (installed !== 0) return installed;
  await showOrder(namespace, env);
  await showPods(namespace, kubeconfig);

  heading('3. Switch the cache off (the KOTS box "Enable the Redis cache" sets STOREFRONT_CACHE_ENABLED)');
  const switched = await runInstaller('cache-off', ['--namespace', namespace, '--values', cacheOff], {
    ...env,
    STOREFRONT_CACHE_ENABLED: 'false',
  });
  if (switched !== 0) return switched;
  await showOrder(namespace, env);

  heading('4. Airgap: the same app, every image from a local registry');
  if (!local) {
    say("Skipped: the demo registry listens on this machine's loopback, which a remote cluster cannot pull from.");
    return 0;
  }
  if (!registryAvailable()) {
    say(
      "Skipped: Debian's docker-registry is not installed (npm test installs it; or: apt-get install docker-registry apache2-utils).",
    );
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
  const pin = `storefront:report.image.digest=${digest}`;
  const listed = await execa(
    process.execPath,
    [
      ...installerNodeArgs,
      cli(),
      'images',
      '--registry',
      address,
      '--image-path',
      'Promotion:spec.image',
      '--set',
      pin,
    ],
    { env, reject: false },
  );
  if (listed.exitCode !== 0) {
    say(String(listed.stderr));
    return listed.exitCode ?? 1;
  }
  // A release plan's list names the releases after each image (`ref # storefront`).
  const images = String(listed.stdout)
    .trim()
    .split('\n')
    .map((line) => line.replace(/ # .*$/, ''));
  for (const image of images) {
    const m = /^[^/]+\/([^:@]+)(?::([^@]+))?/.exec(image);
    if (m?.[1] && m[2]) await pushTestImage(registry, m[1], m[2]);
  }
  say(
    `Local registry ${registry.host} (Debian docker-registry) now holds the ${images.length} images \`helm-installer images --registry ${address}\` lists.`,
  );
  const code = await runInstaller(
    'airgap-install',
    [
      '--namespace',
      airgapNamespace,
      '--values',
      customerValues,
      '--registry',
      address,
      '--image-path',
      'Promotion:spec.image',
      '--set',
      pin,
    ],
    env,
  );
  if (code !== 0) return code;
  const pods = await showPods(airgapNamespace, kubeconfig);
  const running = [...new Set(pods.flatMap(imagesOf))];
  const check = await checkImagesExist(running);
  const local = running.filter((i) => i.startsWith(`${address}/`));
  say(
    `\n${local.length} of ${running.length} running images come from ${address}; ${check.present.length} of ${running.length} are present in the registry.`,
  );
  return local.length === running.length && check.present.length === running.length ? 0 : 1;
}

/** Runs the built CLI like the Job does; the full log goes to a file, the summary to the screen. */
async function runInstaller(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const logFile = join(logDir, `${name}.log`);
  say(`$ helm-installer install ${args.map((a) => (a.startsWith('/') ? relative(process.cwd(), a) : a)).join(' ')}`);
  const run = await execa(
    process.execPath,
    [...installerNodeArgs, cli(), 'install', ...args, '--termination-log', join(logDir, `${name}.termination-log`)],
    {
      env,
      reject: false,
      all: true,
    },
  );
  writeFileSync(logFile, String(run.all ?? ''));
  say(String(run.stderr).trimEnd());
  say(`(full log: ${relative(process.cwd(), logFile)})`);
  return run.exitCode ?? 1;
}

/** The sample values as the storefront release's file, and a copy with the cache switched off. */
function writeValues(): void {
  for (const file of [customerValues, cacheOff]) mkdirSync(dirname(file), { recursive: true });
  copyFileSync(join(repoRoot(), 'app', 'examples', 'customer-values.yaml'), customerValues);
  // As KOTS renders the ConfigMap with the box cleared: the web pods are given no cache address.
  const values = parseDocument(readFileSync(customerValues, 'utf8'));
  values.setIn(['cache', 'enabled'], false);
  writeFileSync(cacheOff, values.toString());
}

/** helm's own record of the releases, oldest deploy first: the plan's order as it happened. */
async function showOrder(ns: string, env: NodeJS.ProcessEnv): Promise<void> {
  const helm = join(repoRoot(), 'node_modules', '.helm-installer', 'helm4');
  const listed = await execa(helm, ['list', '--namespace', ns, '--output', 'json'], { env });
  const releases = (
    JSON.parse(String(listed.stdout)) as { name: string; revision: string; updated: string; chart: string }[]
  )
    .map((r) => ({
      ...r,
      at: new Date(
        r.updated
          .replace(/(\.\d{3})\d*/, '$1')
          .replace(' +0000 UTC', 'Z')
          .replace(' ', 'T'),
      ),
    }))
    .sort((a, b) => a.at.getTime() - b.at.getTime());
  say(`Releases in ${ns} (helm list), in the order they were last deployed:`);
  for (const r of releases)
    say(`  ${r.at.toISOString().slice(11, 23)}  ${r.name.padEnd(22)} revision ${r.revision.padEnd(3)} ${r.chart}`);
}

async function showPods(ns: string, kubeconfig: string): Promise<PodView[]> {
  const pods = (await getJson<{ items: PodView[] }>(['get', 'pods'], { kubeconfig, namespace: ns })).items;
  say(`Pods in ${ns}:`);
  for (const p of pods) {
    const ready =
      p.status.phase === 'Succeeded'
        ? 'Completed'
        : p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? 'Ready'
          : 'not Ready';
    say(`  ${p.metadata.name.padEnd(40)} ${ready.padEnd(10)} ${imagesOf(p).join(', ')}`);
  }
  say(`(kubectl: ${relative(process.cwd(), kubectlPath())} --kubeconfig ${kubeconfig} -n ${ns} get pods)`);
  return pods;
}

function imagesOf(p: PodView): string[] {
  return [...(p.spec.initContainers ?? []), ...p.spec.containers].map((c) => c.image);
}

function cli(): string {
  return join(repoRoot(), 'dist', 'bundle', 'cli.js');
}

process.exitCode = await main();
