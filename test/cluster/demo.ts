// `npm run demo`: the embedded default. With no KUBECONFIG it starts (or reuses) the local control
// plane and leaves it running; then it installs the bundled chart with the sample customer
// values through the built CLI, exactly as the Job would, and shows what is deployed.
import { join } from 'node:path';
import { execa } from 'execa';
import { ensureCluster } from './control-plane.js';
import { getJson, kubectl } from './kube.js';
import { kubectlPath, repoRoot } from './paths.js';

const release = process.env.HELM_INSTALLER_RELEASE ?? 'storefront';
const namespace = process.env.HELM_INSTALLER_NAMESPACE ?? 'storefront';
const say = (line = '') => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  let kubeconfig = process.env.KUBECONFIG;
  if (!kubeconfig) {
    say('No KUBECONFIG: starting the local control plane (the first run builds it from Go modules).');
    const info = await ensureCluster({ log: (l) => process.stderr.write(`[cluster] ${l}\n`), usage: 'keep' });
    kubeconfig = info.kubeconfig;
    say(`Local cluster at ${info.apiServerUrl}; stop it with: npm run cluster:down`);
  }
  const env = { ...process.env, KUBECONFIG: kubeconfig };
  const args = [
    join(repoRoot(), 'dist', 'src', 'cli.js'),
    'install',
    '--release', release,
    '--namespace', namespace,
    '--values', join(repoRoot(), 'app', 'examples', 'customer-values.yaml'),
    '--log-format', 'pretty',
    '--termination-log', join(repoRoot(), '.demo-termination-log'),
  ];
  say(`\n$ helm-installer ${args.slice(1).join(' ')}\n`);
  const run = await execa(process.execPath, args, { env, stdio: 'inherit', reject: false });
  if (run.exitCode !== 0) return run.exitCode ?? 1;

  const opts = { kubeconfig, namespace };
  const helmHistory = await execa(join(repoRoot(), 'node_modules', '.helm-installer', 'helm4'), ['history', release, '-n', namespace, '--max', '1', '-o', 'json'], { env });
  const last = (JSON.parse(helmHistory.stdout) as { revision: number; status: string; chart: string }[]).at(-1);
  say(`\nRelease ${release} in namespace ${namespace}: revision ${last?.revision}, ${last?.status}, chart ${last?.chart}`);
  say('\nResources:');
  const all = await kubectl(['get', 'deployments,statefulsets,services,configmaps,secrets,cronjobs,pvc,ingresses,promotions', '-o', 'wide'], opts);
  say(all.stdout.trimEnd());
  const pods = await getJson<{ items: { metadata: { name: string }; spec: { containers: { image: string }[]; initContainers?: { image: string }[] }; status: { conditions?: { type: string; status: string }[] } }[] }>(['get', 'pods'], opts);
  say('\nPods:');
  for (const p of pods.items) {
    const ready = p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? 'Ready' : 'not Ready';
    say(`  ${p.metadata.name.padEnd(44)} ${ready}`);
  }
  const images = new Set(pods.items.flatMap((p) => [...(p.spec.initContainers ?? []), ...p.spec.containers].map((c) => c.image)));
  say('\nImages running:');
  for (const image of [...images].sort()) say(`  ${image}`);
  say(`\nkubectl: ${kubectlPath()} --kubeconfig ${kubeconfig} -n ${namespace} get pods`);
  return 0;
}

process.exitCode = await main();
