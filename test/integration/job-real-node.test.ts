// The product as a customer's cluster runs it: the image built by `npm run image:build`, pulled by
// a real kubelet from the loopback registry, run as the Job in manifests/ exactly as shipped. The
// only changes: the image reference, and what the test cluster's network needs (no kube-proxy, no
// pod network: hostNetwork with the API server on loopback) plus the real node's selector and
// toleration (the node is tainted so that nothing else lands there).
// The cases share the manifests' own namespace and names, so they run one after the other.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { getJson, kubectl, type KubectlOptions } from '../cluster/kube.js';
import { REAL_NODE_NAME } from '../cluster/real-node.js';
import { buildImage } from '../image/image-build.js';
import { helm4, repoRoot } from '../helpers.js';
import { history, releaseRecord } from './cluster-helpers.js';
import { finishedJob, jobPods, onRealNode, ranDigest, registryDigest, terminatedOf } from './job-helpers.js';

const kubeconfig = inject('kubeconfig');
const registry = inject('registry');
const apiServerPort = inject('apiServerPort');

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: any;
}

function shippedManifests(): K8sObject[] {
  const text = readFileSync(join(repoRoot, 'manifests', 'installer.yaml'), 'utf8');
  return parseAllDocuments(text).map((d) => d.toJS() as K8sObject).filter(Boolean);
}

/** The shipped manifests with only the changes this cluster needs (see the file's head). */
function forRealNode(docs: K8sObject[], image: string, customerValues?: string): K8sObject[] {
  return structuredClone(docs).map((doc) => {
    if (doc.kind === 'ConfigMap' && customerValues !== undefined) doc.data = { 'values.yaml': customerValues };
    return doc.kind === 'Job' ? onRealNode(doc, apiServerPort, image) : doc;
  });
}

const shipped = shippedManifests();
const job = shipped.find((d) => d.kind === 'Job')!;
const namespace = job.metadata.namespace!;
const release = job.spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'HELM_INSTALLER_RELEASE').value as string;
const sa = job.spec.template.spec.serviceAccountName as string;
const ns: KubectlOptions = { kubeconfig, namespace };
let image = '';

async function apply(docs: K8sObject[]): Promise<void> {
  await kubectl(['apply', '-f', '-'], { kubeconfig, input: docs.map((d) => stringify(d)).join('---\n') });
}

/** Removes what a previous case left: the Job (with its pods) and the release. */
async function reset(): Promise<void> {
  await kubectl(['delete', 'job', job.metadata.name, '--ignore-not-found', '--cascade=foreground', '--wait=true', '--timeout=90s'], ns);
  await execa(helm4, ['uninstall', release, '--namespace', namespace, '--ignore-not-found', '--wait', '--timeout', '90s'], { env: { KUBECONFIG: kubeconfig }, reject: false });
}

const finishedInstaller = () => finishedJob(job.metadata.name, ns);
const installerPods = () => jobPods(job.metadata.name, ns);

beforeAll(async () => {
  await kubectl(['create', 'namespace', namespace], { kubeconfig, reject: false });
  // A binding left by manifests/ before its RBAC was narrowed (cluster-admin for this very
  // ServiceAccount) would let the narrow-Role case pass: remove any binding of it but ours.
  const ours = shipped.filter((d) => d.kind === 'ClusterRoleBinding').map((d) => d.metadata.name);
  const bindings = await getJson<{ items: any[] }>(['get', 'clusterrolebindings'], { kubeconfig });
  for (const b of bindings.items) {
    const binds = (b.subjects ?? []).some((s: any) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === namespace);
    if (binds && !ours.includes(b.metadata.name)) await kubectl(['delete', 'clusterrolebinding', b.metadata.name, '--ignore-not-found'], { kubeconfig });
  }
  image = (await buildImage({ log: () => undefined, registry, quietBuild: true })).reference;
}, 900_000);

afterAll(async () => {
  await reset();
});

describe('the installer Job on the real node', () => {
  it('installs the chart through its ServiceAccount: the Job completes, the release is deployed with the ConfigMap values', async () => {
    await reset();
    await apply(forRealNode(shipped, image));
    const done = await finishedInstaller();
    const [pod] = await installerPods();
    expect(pod.spec.nodeName).toBe(REAL_NODE_NAME);
    expect(pod.spec.containers[0].image).toBe(image);
    expect(ranDigest(pod)).toBe(await registryDigest(image));
    if (terminatedOf(pod)?.exitCode !== 0) process.stderr.write(`[installer failed]\n${terminatedOf(pod)?.message}\n${(await kubectl(['logs', pod.metadata.name], ns)).stdout.slice(-4000)}\n`);
    expect(terminatedOf(pod)?.exitCode).toBe(0);
    expect(done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
    // Non-root with a read-only root filesystem, as shipped, and it still did its work.
    const container = pod.spec.containers[0];
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });

    const h = await history(release, namespace);
    expect(h.map((r) => r.status)).toEqual(['deployed']);
    const customer = parseAllDocuments(shipped.find((d) => d.kind === 'ConfigMap')!.data['values.yaml'])[0]!.toJS();
    const record = await releaseRecord(release, namespace);
    expect(record.config).toMatchObject(customer);
    const web = await getJson(['get', 'deployment', `${release}-web`], ns);
    expect(web.spec.replicas).toBe(customer.web.replicaCount);
    const started = Date.parse(terminatedOf(pod).startedAt);
    const finished = Date.parse(terminatedOf(pod).finishedAt);
    process.stderr.write(`[figure] installer container ran ${(finished - started) / 1000} s; Job ${done.status.startTime} -> ${done.status.completionTime}\n`);

    // A redeploy with nothing changed (KOTS applies the same release again): the installer reads
    // the release's workloads to judge it healthy, through the same narrow Role, and leaves it.
    await kubectl(['delete', 'job', job.metadata.name, '--cascade=foreground', '--wait=true', '--timeout=90s'], ns);
    await apply(forRealNode(shipped, image));
    const again = await finishedInstaller();
    const [second] = await installerPods();
    const logs = (await kubectl(['logs', second.metadata.name], ns)).stdout;
    expect(terminatedOf(second)?.exitCode, logs.slice(-3000)).toBe(0);
    expect(again.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
    expect(logs).toContain('unchanged: chart and values equal revision 1, which is deployed and healthy; no upgrade');
    expect((await history(release, namespace)).map((r) => r.status)).toEqual(['deployed']);
  });

  it('invalid customer values: exit 3, the Job fails at once (PodFailurePolicy, no retry), describe shows the summary', async () => {
    await reset();
    await apply(forRealNode(shipped, image, 'web:\n  replicaCount: many\n'));
    const done = await finishedInstaller();
    const failed = done.status.conditions.find((c: any) => c.type === 'Failed');
    expect(failed).toMatchObject({ status: 'True', reason: 'PodFailurePolicy' });
    const pods = await installerPods();
    expect(pods).toHaveLength(1);
    const term = terminatedOf(pods[0]);
    expect(term.exitCode).toBe(3);
    expect(term.message).toMatch(/^helm-installer FAILED \(exit 3: /);
    expect(term.message).toContain(`release: ${release}  namespace: ${namespace}`);
    expect(term.message).toMatch(/replicaCount/);
    const describe = await kubectl(['describe', 'pod', pods[0].metadata.name], ns);
    for (const line of term.message.trim().split('\n')) expect(describe.stdout).toContain(line.trim());
    expect(await history(release, namespace)).toEqual([]);
  });

  it('RBAC: with a Role narrower than the chart needs, exit 6 names the missing permission before helm changes anything', async () => {
    await reset();
    const narrower = forRealNode(shipped, image).map((d) => {
      if (d.kind !== 'Role') return d;
      const copy = structuredClone(d);
      copy.rules = copy.rules.map((r: any) => ({ ...r, resources: r.resources.filter((x: string) => x !== 'cronjobs') }));
      return copy;
    });
    await apply(narrower);
    const done = await finishedInstaller();
    expect(done.status.conditions.find((c: any) => c.type === 'Failed')).toMatchObject({ status: 'True', reason: 'PodFailurePolicy' });
    const [pod] = await installerPods();
    const term = terminatedOf(pod);
    expect(term.exitCode).toBe(6);
    expect(term.message).toContain(`  cronjobs.batch in namespace ${namespace}: create, delete, get, list, patch, watch (CronJob/${release}-report)`);
    expect(term.message).toMatch(/^cause: RBAC: this identity lacks 6 permission\(s\) the chart needs:$/m);
    expect(await history(release, namespace)).toEqual([]);
    await apply(shipped.filter((d) => d.kind === 'Role'));
  });
});
