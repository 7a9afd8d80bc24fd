// The product as a customer's cluster runs it: the image built by `npm run image:build`, pulled by
// a real kubelet from the loopback registry, run as the Job in manifests/ exactly as shipped. The
// only changes: the image reference, and what the test cluster's network needs (no kube-proxy, no
// pod network: hostNetwork with the API server on loopback) plus the real node's selector and
// toleration (the node is tainted so that nothing else lands there).
// The cases share the manifests' own namespace and names, so they run one after the other.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import {
  createNamespace,
  deleteNamespace,
  getJson,
  kubectl,
  KWOK_PHASE_ANNOTATION,
  waitFor,
  type KubectlOptions,
} from '../cluster/kube.js';
import { acquireLock } from '../cluster/lock.js';
import { ensureTroubleshootBinaries, runSupportBundle } from '../cluster/troubleshoot.js';
import { REAL_NODE_NAME } from '../cluster/real-node.js';
import { buildImage } from '../image/image-build.js';
import { helm4, repoRoot } from '../helpers.js';
import { leaseName, LEASE_DURATION_SECONDS } from '../../src/cluster/lease-decision.js';
import { history, releaseRecord, waitForRelease } from './cluster-helpers.js';
import { kotsRender, type ConfigValue } from './kots-render.js';
import {
  finishedJob,
  jobEvents,
  jobPods,
  kotsOnRealNode,
  onRealNode,
  ranDigest,
  registryDigest,
  terminatedOf,
  watchPod,
  type K8sObject,
} from './job-helpers.js';

const kubeconfig = inject('kubeconfig');
const registry = inject('registry');
const apiServerPort = inject('apiServerPort');

function shippedManifests(): K8sObject[] {
  const text = readFileSync(join(repoRoot, 'manifests', 'installer.yaml'), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject)
    .filter(Boolean);
}

/** The shipped manifests with only the changes this cluster needs (see the file's head). */
function forRealNode(docs: K8sObject[], image: string, customerValues?: string): K8sObject[] {
  return structuredClone(docs).map((doc) => {
    if (doc.kind === 'ConfigMap' && customerValues !== undefined) doc.data = { 'storefront.yaml': customerValues };
    return doc.kind === 'Job' ? onRealNode(doc, apiServerPort, image) : doc;
  });
}

/**
 * The failure cases below are about one release (its Lease, its recovery, its summary), so their
 * Job installs the image's storefront chart alone rather than the app's release plan: the one
 * change beyond the cluster's, two variables naming the chart and its release.
 */
function oneChart(docs: K8sObject[]): K8sObject[] {
  return docs.map((d) => {
    if (d.kind === 'Job')
      d.spec.template.spec.containers[0].env.push(
        { name: 'HELM_INSTALLER_CHART', value: '/opt/helm-installer/app/storefront' },
        { name: 'HELM_INSTALLER_RELEASE', value: release },
      );
    return d;
  });
}

const shipped = shippedManifests();
const job = shipped.find((d) => d.kind === 'Job')!;
const namespace = job.metadata.namespace!;
// The bundled app's release plan (app/releases.yaml), in its order.
const planReleases = ['promotions-operator', 'storefront', 'storefront-cache'];
const release = 'storefront';
const sa = job.spec.template.spec.serviceAccountName as string;
const ns: KubectlOptions = { kubeconfig, namespace };
let image = '';

async function apply(docs: K8sObject[]): Promise<void> {
  await kubectl(['apply', '-f', '-'], { kubeconfig, input: docs.map((d) => stringify(d)).join('---\n') });
}

/** Removes what a previous case left: the Job (with its pods), the releases and the plan's inventory. */
async function reset(): Promise<void> {
  await kubectl(
    ['delete', 'job', job.metadata.name, '--ignore-not-found', '--cascade=foreground', '--wait=true', '--timeout=90s'],
    ns,
  );
  for (const name of planReleases) {
    await execa(
      helm4,
      ['uninstall', name, '--namespace', namespace, '--ignore-not-found', '--wait', '--timeout', '90s'],
      { env: { KUBECONFIG: kubeconfig }, reject: false },
    );
  }
  await kubectl(['delete', 'configmap', 'helm-installer-storefront-releases', '--ignore-not-found'], ns);
}

const finishedInstaller = () => finishedJob(job.metadata.name, ns);

/**
 * The lines written for people (the summary, on stderr) without the JSON log lines (stdout):
 * containerd copies the two streams into the pod's log line by line, each from its own reader, so
 * `kubectl logs` may put a log line inside a summary that was one write.
 */
const summaryLines = (logs: string) =>
  logs
    .split('\n')
    .filter((l) => !l.startsWith('{'))
    .join('\n');
const installerPods = () => jobPods(job.metadata.name, ns);

/**
 * One KOTS deploy of kots/: rendered with the answers (the password given), the earlier deploy's
 * Job removed (KOTS deletes an object the new release no longer has), applied, and waited for.
 */
async function kotsDeploy(kotsNs: string, sequence: number, values: Record<string, ConfigValue>) {
  const o: KubectlOptions = { kubeconfig, namespace: kotsNs };
  const r = await kotsRender({
    namespace: kotsNs,
    sequence,
    values: { database_password: { valuePlaintext: 'pw-1' }, ...values },
  });
  expect(r.exitCode, r.stderr).toBe(0);
  expect(r.dropped).toEqual([]);
  const docs = kotsOnRealNode(r, apiServerPort, image);
  const name = docs.find((d) => d.kind === 'Job')!.metadata.name;
  await kubectl(['delete', 'jobs', '--all', '--cascade=foreground', '--wait=true', '--timeout=90s'], o);
  await kubectl(['apply', '-f', '-'], { ...o, input: docs.map((d) => stringify(d)).join('---\n') });
  // A Job that never finishes says why: its pod as `describe` shows it, and the installer's last lines.
  const done = await finishedJob(name, o, 300_000).catch(async (error: unknown) => {
    const pods = (await kubectl(['describe', 'pods', '-l', `job-name=${name}`], { ...o, reject: false })).stdout;
    const logs = (await kubectl(['logs', `job/${name}`, '--tail=40'], { ...o, reject: false })).stdout;
    throw new Error(`${(error as Error).message}\n${pods.slice(-3000)}\n${logs}`);
  });
  const [pod] = await jobPods(name, o);
  return { done, pod, term: terminatedOf(pod), logs: (await kubectl(['logs', pod.metadata.name], o)).stdout };
}

/** The cache release's size as deployed: its container's memory limit and Redis's maxmemory. */
async function cacheSize(o: KubectlOptions): Promise<[string, string | undefined]> {
  const d = await getJson(['get', 'deployment', 'storefront-cache'], o);
  const c = await getJson(['get', 'configmap', 'storefront-cache'], o);
  return [
    d.spec.template.spec.containers[0].resources.limits.memory,
    /maxmemory (\S+)/.exec(c.data['redis.conf'])?.[1],
  ];
}

/**
 * A support bundle after the failed deploy (sequence 2): the installer's exit code, cause and next
 * step as a failure, the app revision, each release's status, and no secret value in the archive.
 */
async function supportBundleAfterFailure(kotsNs: string, values: Record<string, ConfigValue>): Promise<void> {
  const specs = await kotsRender({
    namespace: kotsNs,
    sequence: 2,
    values: { database_password: { valuePlaintext: 'pw-1' }, ...values },
    kotsKinds: true,
  });
  expect(specs.exitCode, specs.stderr).toBe(0);
  const dir = mkdtempSync(join(tmpdir(), 'support-bundle-'));
  try {
    writeFileSync(join(dir, 'specs.yaml'), specs.yaml);
    const { supportBundle } = await ensureTroubleshootBinaries((line) =>
      process.stderr.write(`[troubleshoot] ${line}\n`),
    );
    const began = Date.now();
    const r = await runSupportBundle(supportBundle, join(dir, 'specs.yaml'), kubeconfig, dir);
    expect(r.exitCode, r.stderr.slice(-3000)).toBe(0);
    process.stderr.write(
      `[figure] support bundle after the failed deploy: ${((Date.now() - began) / 1000).toFixed(1)} s; its analysis:\n${r.results.map((x) => `  ${x.severity} | ${x.title} | ${x.message}`).join('\n')}\n`,
    );
    const byTitle = Object.fromEntries(r.results.map((x) => [x.title, x]));
    expect(byTitle['The installer']?.severity).toBe('error');
    expect(byTitle['The installer']?.message).toMatch(
      new RegExp(
        `^The installer failed with exit 4 \\(helm operation failed\\): ${kotsNs}/storefront: .*pre-upgrade hooks failed: resource Job/.* Next: .+`,
      ),
    );
    expect(byTitle['App revision']).toMatchObject({
      severity: 'error',
      message: 'app revision 2 failed; every release it changed went back: the app is at app revision 1',
    });
    expect(byTitle['Release promotions-operator']).toMatchObject({
      severity: 'debug',
      message: `release ${kotsNs}/promotions-operator: revision 1 deployed.`,
    });
    expect(byTitle['Release storefront']).toMatchObject({
      severity: 'debug',
      message: `release ${kotsNs}/storefront: revision 3 deployed.`,
    });
    expect(byTitle['Release storefront-cache']).toMatchObject({
      severity: 'debug',
      message: `release ${kotsNs}/storefront-cache: revision 3 deployed.`,
    });
    expect(byTitle['The installer Job']).toMatchObject({
      severity: 'error',
      message: 'The installer Job storefront-installer-2 failed: its logs are in installer/, its outcome above.',
    });
    // The workloads the rollback left, ready (Troubleshoot titles them itself).
    expect(byTitle['storefront-web Status']).toMatchObject({
      severity: 'debug',
      message: 'Deployment storefront-web is ready.',
    });
    expect(byTitle['storefront-db Status']).toMatchObject({
      severity: 'debug',
      message: 'StatefulSet storefront-db is ready.',
    });
    // No secret value anywhere in the archive: the password, in clear or base64, under any key.
    await execa('tar', ['-xzf', r.archive, '-C', dir]);
    const files = (
      await execa('find', [dir, '-type', 'f', '!', '-name', '*.tar.gz', '!', '-name', 'specs.yaml'])
    ).stdout.split('\n');
    expect(files.some((f) => f.endsWith(`configmaps/${kotsNs}/helm-installer-storefront-last-run.json`))).toBe(true);
    // The installer's log (the logs collector keeps it under cluster-resources/, linked from installer/).
    const installerLog = files.find((f) =>
      new RegExp(`cluster-resources/pods/logs/${kotsNs}/storefront-installer-2-[a-z0-9]+/installer\\.log$`).test(f),
    );
    expect(installerLog, files.join('\n')).toBeDefined();
    expect(readFileSync(installerLog!, 'utf8')).toContain(
      'helm-installer FAILED (exit 4: helm operation failed): 2 of 3 releases done, 1 failed',
    );
    for (const secret of ['pw-1', Buffer.from('pw-1').toString('base64').replace(/=+$/, '')]) {
      const found = await execa('grep', ['-rl', '--', secret, dir, '--exclude=*.tar.gz', '--exclude=specs.yaml'], {
        reject: false,
      });
      expect(found.stdout, `${secret} in the bundle`).toBe('');
    }
    // The release records' history without their values (the customer's answers, the password's key).
    const records = readFileSync(join(dir, 'bundle', 'helm', `${kotsNs}.json`), 'utf8');
    expect(records).toContain('"releaseName": "storefront"');
    expect(records).not.toMatch(/"values"|database|password/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let unlock: (() => void) | undefined;

beforeAll(async () => {
  // The shipped namespace and names are fixed: a run from another checkout on this machine (the
  // cluster is shared) would delete this run's Job or swap its Role mid-case. One at a time.
  unlock = await acquireLock('job-real-node', (line) => process.stderr.write(`[job-real-node] ${line}\n`), 10 * 60_000);
  await kubectl(['create', 'namespace', namespace], { kubeconfig, reject: false });
  // A binding left by manifests/ before its RBAC was narrowed (cluster-admin for this very
  // ServiceAccount) would let the narrow-Role case pass: remove any binding of it but ours.
  const ours = shipped.filter((d) => d.kind === 'ClusterRoleBinding').map((d) => d.metadata.name);
  const bindings = await getJson<{ items: any[] }>(['get', 'clusterrolebindings'], { kubeconfig });
  for (const b of bindings.items) {
    const binds = (b.subjects ?? []).some(
      (s: any) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === namespace,
    );
    if (binds && !ours.includes(b.metadata.name))
      await kubectl(['delete', 'clusterrolebinding', b.metadata.name, '--ignore-not-found'], { kubeconfig });
  }
  const built = await buildImage({ log: () => undefined, registry, quietBuild: true });
  image = built.reference;
  process.stderr.write(
    `[figure] the image: ${(built.bytes.uncompressed / 1e6).toFixed(1)} MB, ${(built.bytes.compressed / 1e6).toFixed(1)} MB compressed (${image})\n`,
  );
}, 900_000);

afterAll(async () => {
  try {
    await reset();
  } finally {
    unlock?.();
  }
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
    if (terminatedOf(pod)?.exitCode !== 0)
      process.stderr.write(
        `[installer failed]\n${terminatedOf(pod)?.message}\n${(await kubectl(['logs', pod.metadata.name], ns)).stdout.slice(-4000)}\n`,
      );
    expect(terminatedOf(pod)?.exitCode).toBe(0);
    expect(done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
    // Non-root with a read-only root filesystem, as shipped, and it still did its work.
    const container = pod.spec.containers[0];
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });

    for (const name of planReleases)
      expect(
        (await history(name, namespace)).map((r) => r.status),
        name,
      ).toEqual(['deployed']);
    const customer = parseAllDocuments(shipped.find((d) => d.kind === 'ConfigMap')!.data['storefront.yaml'])[0]!.toJS();
    const record = await releaseRecord(release, namespace);
    expect(record.config).toMatchObject(customer);
    const web = await getJson(['get', 'deployment', `${release}-web`], ns);
    expect(web.spec.replicas).toBe(customer.web.replicaCount);
    // One Event per release on the Job (the downward API's labels name it and its uid), as
    // describe shows them.
    const jobRef = (j: any) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: j.metadata.name,
      namespace,
      uid: j.metadata.uid,
    });
    const perRelease = (events: any[]) =>
      events
        .map((e) => [/^release [^/]+\/(\S+):/.exec(e.note)?.[1], e.reason, e.type, e.regarding, e.reportingInstance])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(perRelease(await jobEvents(done, ns))).toEqual(
      planReleases.map((r) => [r, 'Installed', 'Normal', jobRef(done), pod.metadata.name]),
    );
    expect((await kubectl(['describe', 'job', job.metadata.name], ns)).stdout).toMatch(
      new RegExp(
        `Normal +Installed +\\S+ +helm-installer\\.io/installer +release ${namespace}/${release}: installed as revision 1 `,
      ),
    );
    const started = Date.parse(terminatedOf(pod).startedAt);
    const finished = Date.parse(terminatedOf(pod).finishedAt);
    process.stderr.write(
      `[figure] installer container ran ${(finished - started) / 1000} s; Job ${done.status.startTime} -> ${done.status.completionTime}\n`,
    );

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
    expect(perRelease(await jobEvents(again, ns))).toEqual(
      planReleases.map((r) => [r, 'Unchanged', 'Normal', jobRef(again), second.metadata.name]),
    );
    for (const name of planReleases)
      expect(
        (await history(name, namespace)).map((r) => r.status),
        name,
      ).toEqual(['deployed']);
  });

  it('the release plan as shipped (issue 21): the storefront starts after its operator is ready; the cache switched off is uninstalled by the next run', async () => {
    await reset();
    await apply(forRealNode(shipped, image));
    await finishedInstaller();
    const [pod] = await installerPods();
    const logs = (await kubectl(['logs', pod.metadata.name], ns)).stdout;
    expect(terminatedOf(pod)?.exitCode, logs.slice(-4000)).toBe(0);
    expect(summaryLines(logs)).toMatch(
      /helm-installer: release plan done, app revision 1 deployed: 3 of 3 releases done, [\d.]+s\n {2}storefront\/promotions-operator: installed, revision 1, [\d.]+s\n {2}storefront\/storefront: installed, revision 1, [\d.]+s\n {2}storefront\/storefront-cache: installed, revision 1, [\d.]+s/,
    );
    // The storefront's first object came after the operator's Deployment was available, and its
    // Promotion was accepted (the operator's release brought the CRD).
    const operator = await getJson(['get', 'deployment', 'promotions-operator'], ns);
    const available = Date.parse(
      operator.status.conditions.find((c: any) => c.type === 'Available' && c.status === 'True').lastTransitionTime,
    );
    const web = await getJson(['get', 'deployment', `${release}-web`], ns);
    expect(Date.parse(web.metadata.creationTimestamp)).toBeGreaterThanOrEqual(available);
    expect((await getJson(['get', 'promotion', `${release}-welcome`], ns)).spec.title).toBe('Welcome offer');
    expect((await getJson(['get', 'configmap', `${release}-web`], ns)).data.STOREFRONT_CACHE_URL).toBe(
      'redis://storefront-cache:6379/0',
    );
    expect(
      (await getJson(['get', 'secret', 'sh.helm.release.v1.storefront-cache.v1'], ns)).metadata.labels[
        'helm-installer.io/app'
      ],
    ).toBe('storefront');

    // The admin clears "Enable the Redis cache": KOTS renders the variable false and the
    // storefront's cache.enabled false (kots/installer-job.yaml); this plain Job is given the same.
    await kubectl(['delete', 'job', job.metadata.name, '--cascade=foreground', '--wait=true', '--timeout=90s'], ns);
    const values = `${shipped.find((d) => d.kind === 'ConfigMap')!.data['storefront.yaml']}cache:\n  enabled: false\n`;
    await apply(
      forRealNode(shipped, image, values).map((d) => {
        if (d.kind === 'Job')
          d.spec.template.spec.containers[0].env.push({ name: 'STOREFRONT_CACHE_ENABLED', value: 'false' });
        return d;
      }),
    );
    await finishedInstaller();
    const [second] = await installerPods();
    const after = (await kubectl(['logs', second.metadata.name], ns)).stdout;
    expect(terminatedOf(second)?.exitCode, after.slice(-4000)).toBe(0);
    expect(summaryLines(after)).toMatch(
      /helm-installer: release plan done, app revision 2 deployed: 2 of 2 releases done, 1 removed from the plan, [\d.]+s\n {2}storefront\/promotions-operator: unchanged, revision 1, [\d.]+s\n {2}storefront\/storefront: upgraded, revision 2, [\d.]+s\n {2}storefront\/storefront-cache: uninstalled \(no longer in the plan\)/,
    );
    expect(await history('storefront-cache', namespace)).toEqual([]);
    expect((await kubectl(['get', 'deployment', 'storefront-cache'], { ...ns, reject: false })).exitCode).not.toBe(0);
    expect((await getJson(['get', 'configmap', `${release}-web`], ns)).data.STOREFRONT_CACHE_URL).toBe('');
  });

  it("the next app version fails half way (the storefront's migration hook): the Job fails with exit 4, the cache it upgraded goes back, the app is at app revision 1", async () => {
    await reset();
    await apply(forRealNode(shipped, image));
    await finishedInstaller();
    const [first] = await installerPods();
    expect(terminatedOf(first)?.exitCode, (await kubectl(['logs', first.metadata.name], ns)).stdout.slice(-3000)).toBe(
      0,
    );

    // The next version: the cache's memory changes (the customer's storefront-cache.yaml), and the
    // storefront's pre-upgrade migration fails (its pod ends Failed on the simulated node) after
    // the cache, which depends on nothing, was upgraded beside the unchanged operator.
    await kubectl(['delete', 'job', job.metadata.name, '--cascade=foreground', '--wait=true', '--timeout=90s'], ns);
    const customer = shipped.find((d) => d.kind === 'ConfigMap')!.data['storefront.yaml'];
    const next = forRealNode(
      shipped,
      image,
      `${customer}migrations:\n  podAnnotations:\n    ${KWOK_PHASE_ANNOTATION}: Failed\n`,
    ).map((d) => {
      if (d.kind === 'ConfigMap') d.data['storefront-cache.yaml'] = 'maxmemory: 300mb\n';
      return d;
    });
    await apply(next);
    const done = await finishedInstaller();
    expect(done.status.conditions.find((c: any) => c.type === 'Failed')).toMatchObject({
      status: 'True',
      reason: 'PodFailurePolicy',
    });
    const [pod] = await installerPods();
    const term = terminatedOf(pod);
    const logs = (await kubectl(['logs', pod.metadata.name], ns)).stdout;
    expect(term.exitCode, logs.slice(-4000)).toBe(4);
    const lines = term.message.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'helm-installer FAILED (exit 4: helm operation failed): 2 of 3 releases done, 1 failed; app revision 2 failed; every release it changed went back: the app is at app revision 1',
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^  ${namespace}/promotions-operator: unchanged, revision 1, [\\d.]+s$`)),
    );
    expect(lines.find((l: string) => l.startsWith(`  ${namespace}/storefront: FAILED (exit 4)`))).toBeDefined();
    expect(lines.at(-1)).toBe(
      `  app rollback: ${namespace}/storefront-cache: rolled back from revision 2 to 1 (now revision 3)`,
    );
    // Every release at app revision 1: the cache's values as revision 1 had them, the storefront
    // put back by helm, the operator untouched.
    expect((await history('storefront-cache', namespace)).map((r) => `${r.revision} ${r.status}`)).toEqual([
      '1 superseded',
      '2 superseded',
      '3 deployed',
    ]);
    expect((await releaseRecord('storefront-cache', namespace)).config.maxmemory).toBe('400mb');
    expect((await history(release, namespace)).at(-1)!.status).toBe('deployed');
    expect((await releaseRecord(release, namespace)).config.migrations).not.toHaveProperty('podAnnotations');
    expect((await history('promotions-operator', namespace)).map((r) => r.status)).toEqual(['deployed']);
    const inventory = await getJson(['get', 'configmap', 'helm-installer-storefront-releases'], ns);
    expect(JSON.parse(inventory.data.appRevisions).map((r: any) => [r.revision, r.status, r.rolledBackTo])).toEqual([
      [1, 'deployed', undefined],
      [2, 'rolled back', 1],
    ]);
    const tookSeconds = (Date.parse(terminatedOf(pod).finishedAt) - Date.parse(terminatedOf(pod).startedAt)) / 1000;
    const json = logs
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { time: number; msg: string; releaseKey?: string });
    const end = json.find((l) => l.msg === 'release plan finished')!;
    const failure = json.filter((l) => l.releaseKey === `${namespace}/${release}` && l.time <= end.time).at(-1)!;
    process.stderr.write(
      `[figure] the Job's failed upgrade of the bundled app, rolled back as one: ${((end.time - failure.time) / 1000).toFixed(2)} s from the storefront's failure to the summary; the installer container ran ${tookSeconds} s\n`,
    );
  }, 400_000);

  it('invalid customer values: exit 3, the Job fails at once (PodFailurePolicy, no retry), describe shows the summary', async () => {
    await reset();
    await apply(oneChart(forRealNode(shipped, image, 'web:\n  replicaCount: many\n')));
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
    const narrower = oneChart(forRealNode(shipped, image)).map((d) => {
      if (d.kind !== 'Role') return d;
      const copy = structuredClone(d);
      copy.rules = copy.rules.map((r: any) => ({
        ...r,
        resources: r.resources.filter((x: string) => x !== 'cronjobs'),
      }));
      return copy;
    });
    await apply(narrower);
    const done = await finishedInstaller();
    expect(done.status.conditions.find((c: any) => c.type === 'Failed')).toMatchObject({
      status: 'True',
      reason: 'PodFailurePolicy',
    });
    const [pod] = await installerPods();
    const term = terminatedOf(pod);
    expect(term.exitCode).toBe(6);
    expect(term.message).toContain(
      `  cronjobs.batch in namespace ${namespace}: create, delete, get, list, patch, watch (CronJob/${release}-report)`,
    );
    expect(term.message).toMatch(/^cause: RBAC: this identity lacks 6 permission\(s\) the chart needs:$/m);
    expect(await history(release, namespace)).toEqual([]);
    await apply(shipped.filter((d) => d.kind === 'Role'));
  });

  it('release busy: another installer holds the Lease, the pod fails with 7, the Job retries and completes once it is free', async () => {
    await reset();
    // A live holder: the Lease an installer takes (src/cluster/release-lease.ts), renewed by the
    // test as a running installer renews it, so it never expires.
    const lease = leaseName(release);
    const holder = 'storefront-installer-other/1/test';
    const microNow = () => new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    await apply([
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: lease, namespace },
        spec: {
          holderIdentity: holder,
          leaseDurationSeconds: LEASE_DURATION_SECONDS,
          acquireTime: microNow(),
          renewTime: microNow(),
        },
      },
    ]);
    let renewing = true;
    const renewer = (async () => {
      while (renewing) {
        await kubectl(
          ['patch', 'lease', lease, '--type', 'merge', '-p', JSON.stringify({ spec: { renewTime: microNow() } })],
          { ...ns, reject: false },
        );
        await new Promise((r) => setTimeout(r, 3000));
      }
    })();
    try {
      // The one change beyond image and network: the wait bound, 30 s instead of 5 minutes, so the
      // case takes a minute. The Job's own backoff (10 s) separates the pods.
      const busy = oneChart(forRealNode(shipped, image)).map((d) => {
        if (d.kind !== 'Job') return d;
        d.spec.template.spec.containers[0].env.push({ name: 'HELM_INSTALLER_LOCK_TIMEOUT', value: '30s' });
        return d;
      });
      await apply(busy);
      const second = await waitFor(
        'a second installer pod after a failed one',
        async () => {
          const pods = await installerPods();
          return pods.length >= 2 ? pods : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 1000 },
      );
      const first = terminatedOf(second[0]);
      expect(first.exitCode).toBe(7);
      expect(first.message).toMatch(/^helm-installer FAILED \(exit 7: /);
      expect(first.message).toContain(
        `cause: release ${release} is busy: installer ${holder} holds Lease ${namespace}/${lease}`,
      );
      const running = await getJson(['get', 'job', job.metadata.name], ns);
      expect(running.status.failed).toBe(1);
      expect((running.status.conditions ?? []).filter((c: any) => c.type === 'Failed' && c.status === 'True')).toEqual(
        [],
      );
      expect(await history(release, namespace)).toEqual([]);
    } finally {
      // Free the Lease: the holder has finished.
      renewing = false;
      await renewer;
      await kubectl(['delete', 'lease', lease, '--ignore-not-found'], ns);
    }
    const done = await finishedInstaller();
    expect(done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
    const pods = await installerPods();
    expect(pods.map((p) => terminatedOf(p)?.exitCode)).toEqual([7, 0]);
    expect((await history(release, namespace)).map((r) => r.status)).toEqual(['deployed']);
  });

  it("an installer pod killed mid-install: the Job's next pod takes its Lease over at once (the pod has ended), recovers the release and completes", async () => {
    await reset();
    // Values that keep helm waiting (pods that cannot be scheduled), so the kill lands mid-install.
    await apply(oneChart(forRealNode(shipped, image, 'web:\n  replicaCount: 2\n  nodeSelector:\n    zone: nowhere\n')));
    let first: any;
    await waitForRelease(
      release,
      namespace,
      { status: 'pending-install' },
      {
        also: {
          what: 'its one installer pod holding the Lease',
          probe: async () => {
            const pods = await installerPods();
            const l = await kubectl(['get', 'lease', leaseName(release), '-o', 'json'], { ...ns, reject: false });
            [first] = pods;
            return l.exitCode === 0 && pods.length === 1;
          },
        },
        timeoutMs: 180_000,
        intervalMs: 500,
      },
    );
    const held = JSON.parse((await kubectl(['get', 'lease', leaseName(release), '-o', 'json'], ns)).stdout);
    // The holder names its pod (downward API), as the next run needs to find it.
    expect(JSON.parse(held.metadata.annotations['helm-installer/holder']).pod).toEqual({
      namespace,
      name: first.metadata.name,
    });
    const holder = held.spec.holderIdentity as string;
    // The next pod gets the values that can deploy; the killed one leaves the Lease and the
    // release pending-install.
    await apply(forRealNode(shipped, image).filter((d) => d.kind === 'ConfigMap'));
    // The installer's node process, seen from the host (the only installer pod running: the image's
    // path, not this checkout's), killed as the kernel's OOM killer or a lost node would.
    const installerPids = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return readFileSync(`/proc/${d}/cmdline`, 'utf8')
            .split('\0')
            .includes('/opt/helm-installer/dist/bundle/cli.js');
        } catch {
          return false;
        }
      });
    expect(installerPids).toHaveLength(1);
    process.kill(Number(installerPids[0]), 'SIGKILL');

    const done = await finishedInstaller();
    expect(done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
    const pods = await installerPods();
    expect(pods.map((p) => terminatedOf(p)?.exitCode)).toEqual([137, 0]);
    const logs = (await kubectl(['logs', pods[1].metadata.name], ns)).stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const takeover = logs.find(
      (l) =>
        l.msg ===
        `holder ${holder} is gone: its pod ${namespace}/${first.metadata.name} has ended (Failed); taking the Lease over`,
    );
    expect(
      takeover,
      `${JSON.stringify(held.metadata.annotations)}\n${logs.map((l) => JSON.stringify(l)).join('\n')}`,
    ).toBeDefined();
    const startedAt = Date.parse(pods[1].status.containerStatuses[0].state.terminated.startedAt);
    const tookMs = takeover.time - startedAt;
    // At its first look, by proof: it never waited (its own record, not a time that load stretches).
    expect(logs.filter((l) => l.msg === 'another installer holds this release: waiting for it')).toEqual([]);
    process.stderr.write(
      `[figure] the retry pod took the dead pod's Lease over ${(tookMs / 1000).toFixed(2)} s after its container started (Lease renewed ${takeover.renewedSecondsAgo} s before)\n`,
    );
    expect(
      logs.some((l) => String(l.msg).startsWith('release was stuck pending-install: marked revision 1 failed')),
    ).toBe(true);
    expect((await history(release, namespace)).map((r) => r.status)).toEqual(['deployed']);
  }, 400_000);

  it('an installer pod OOM-killed at its memory limit (exit 137) is retried by the Job, not failed for good', async () => {
    // The shipped Job's failure policy and backoff against a real OOM kill: its own namespace (the
    // container dies while Node starts, before any API call, so no RBAC is needed), and a memory
    // limit (32Mi) below what Node needs to start, so the kernel kills it for real.
    const oomNs = await createNamespace('installer-oom', { kubeconfig });
    try {
      const o: KubectlOptions = { kubeconfig, namespace: oomNs };
      const docs = forRealNode(shipped, image);
      const configMap = docs.find((d) => d.kind === 'ConfigMap');
      const oomJob = docs.find((d) => d.kind === 'Job');
      for (const d of [configMap!, oomJob!]) d.metadata.namespace = oomNs;
      delete oomJob!.spec.template.spec.serviceAccountName;
      oomJob!.spec.template.spec.containers[0].resources = { requests: { memory: '32Mi' }, limits: { memory: '32Mi' } };
      await apply([configMap!, oomJob!]);
      const pods = await waitFor(
        'a second installer pod after an OOM-killed one',
        async () => {
          const all = await jobPods(oomJob!.metadata.name, o);
          return all.length >= 2 && terminatedOf(all[0]) ? all : undefined;
        },
        { timeoutMs: 300_000, intervalMs: 1000 },
      );
      expect(terminatedOf(pods[0])).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
      const running = await getJson(['get', 'job', oomJob!.metadata.name], o);
      expect((running.status.conditions ?? []).filter((c: any) => c.type === 'Failed' && c.status === 'True')).toEqual(
        [],
      );
      expect(running.status.failed).toBeGreaterThanOrEqual(1);
      expect(running.spec.backoffLimit).toBe(job.spec.backoffLimit);
    } finally {
      await deleteNamespace(oomNs, { kubeconfig });
    }
  }, 400_000);

  it('an installer pod evicted mid-run is retried by the Job without counting (DisruptionTarget), and the retry completes', async () => {
    // Its own namespace, whose default ServiceAccount is bound to cluster-admin for the case: the
    // run must get as far as the release Lease, where a live holder (renewed by the test) keeps
    // it waiting until the test evicts its pod through the Eviction API.
    const evictNs = await createNamespace('installer-evict', { kubeconfig });
    const binding = `${evictNs}-installer-admin`;
    const o: KubectlOptions = { kubeconfig, namespace: evictNs };
    const lease = leaseName(release);
    const microNow = () => new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    let renewing = true;
    let renewer: Promise<void> | undefined;
    try {
      await kubectl(
        ['create', 'clusterrolebinding', binding, '--clusterrole=cluster-admin', `--serviceaccount=${evictNs}:default`],
        { kubeconfig },
      );
      await apply([
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: lease, namespace: evictNs },
          spec: {
            holderIdentity: 'other-installer/1/test',
            leaseDurationSeconds: LEASE_DURATION_SECONDS,
            acquireTime: microNow(),
            renewTime: microNow(),
          },
        },
      ]);
      renewer = (async () => {
        while (renewing) {
          await kubectl(
            ['patch', 'lease', lease, '--type', 'merge', '-p', JSON.stringify({ spec: { renewTime: microNow() } })],
            { ...o, reject: false },
          );
          await new Promise((r) => setTimeout(r, 3000));
        }
      })();
      const docs = oneChart(forRealNode(shipped, image));
      const configMap = docs.find((d) => d.kind === 'ConfigMap')!;
      const evictJob = docs.find((d) => d.kind === 'Job')!;
      for (const d of [configMap, evictJob]) d.metadata.namespace = evictNs;
      delete evictJob.spec.template.spec.serviceAccountName;
      const env = evictJob.spec.template.spec.containers[0].env as { name: string; value: string }[];
      env.find((e) => e.name === 'HELM_INSTALLER_NAMESPACE')!.value = evictNs;
      await apply([configMap, evictJob]);

      const waiting = await waitFor(
        'the installer waiting for the release Lease',
        async () => {
          const [p] = await jobPods(evictJob.metadata.name, o);
          if (!p?.status?.containerStatuses?.[0]?.state?.running) return undefined;
          const logs = await kubectl(['logs', p.metadata.name], { ...o, reject: false });
          return logs.stdout.includes('other-installer/1/test') ? p : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 1000 },
      );
      // Watched from before the eviction: the Job controller removes the evicted pod once it has
      // accounted for it, so its end is read from what the API server recorded, not polled for.
      const watch = await watchPod(kubeconfig, evictNs, waiting.metadata.name);
      let evicted: any;
      try {
        await watch.ready;
        const eviction = {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: waiting.metadata.name, namespace: evictNs },
        };
        await kubectl(
          ['create', '--raw', `/api/v1/namespaces/${evictNs}/pods/${waiting.metadata.name}/eviction`, '-f', '-'],
          { kubeconfig, input: JSON.stringify(eviction) },
        );
        evicted = await watch.seen('the evicted pod terminated', (p) => !!terminatedOf(p), 120_000);
      } finally {
        watch.stop();
      }
      expect(evicted.status.conditions).toContainEqual(
        expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }),
      );
      expect(terminatedOf(evicted).exitCode).toBe(5);
      // SIGTERM from the kubelet while it waited (the RBAC preflight runs beside the Lease wait).
      expect(terminatedOf(evicted).message).toMatch(
        /^cause: interrupted (while waiting for the lease of release|\(SIGTERM\/SIGINT\) during )/m,
      );

      // The holder finishes; the replacement pod takes the Lease and installs.
      renewing = false;
      await renewer;
      await kubectl(['delete', 'lease', lease, '--ignore-not-found'], o);
      const done = await finishedJob(evictJob.metadata.name, o, 300_000);
      expect(done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
      // The eviction was not counted against backoffLimit.
      expect(done.status.failed ?? 0).toBe(0);
      expect((await history(release, evictNs)).map((r) => r.status)).toEqual(['deployed']);
    } finally {
      renewing = false;
      await renewer;
      await execa(
        helm4,
        ['uninstall', release, '--namespace', evictNs, '--ignore-not-found', '--wait', '--timeout', '90s'],
        { env: { KUBECONFIG: kubeconfig }, reject: false },
      );
      await kubectl(['delete', 'clusterrolebinding', binding, '--ignore-not-found'], { kubeconfig });
      await deleteNamespace(evictNs, { kubeconfig });
    }
  }, 600_000);

  it('customer values ConfigMap missing: the pod waits naming it in kubectl describe (FailedMount), and runs once it is created', async () => {
    await reset();
    const configMap = shipped.find((d) => d.kind === 'ConfigMap')!;
    await kubectl(['delete', 'configmap', configMap.metadata.name, '--ignore-not-found'], ns);
    await apply(forRealNode(shipped, image).filter((d) => d.kind !== 'ConfigMap'));
    const [pod] = await waitFor(
      'the installer pod',
      async () => ((await installerPods()).length ? installerPods() : undefined),
      { timeoutMs: 60_000 },
    );
    const describe = await waitFor(
      'FailedMount in kubectl describe',
      async () => {
        const out = (await kubectl(['describe', 'pod', pod.metadata.name], ns)).stdout;
        return out.includes('FailedMount') ? out : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 2000 },
    );
    expect(describe).toContain(`configmap "${configMap.metadata.name}" not found`);
    expect(describe).toMatch(/Status:\s+Pending/);
    expect(await history(release, namespace)).toEqual([]);
    // The admin creates it: the same pod starts and installs, nothing to re-run.
    await apply(forRealNode(shipped, image).filter((d) => d.kind === 'ConfigMap'));
    const done = await finishedJob(job.metadata.name, ns, 300_000);
    expect(done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
    expect((await installerPods()).map((p) => p.metadata.name)).toEqual([pod.metadata.name]);
    expect((await history(release, namespace)).map((r) => r.status)).toEqual(['deployed']);
  });

  it('installer image that cannot be pulled: kubectl describe names the image and the registry answer (ErrImagePull / ImagePullBackOff)', async () => {
    await reset();
    const missing = `${registry}/helm-installer:no-such-build`;
    await apply(forRealNode(shipped, missing));
    const [pod] = await waitFor(
      'the installer pod',
      async () => ((await installerPods()).length ? installerPods() : undefined),
      { timeoutMs: 60_000 },
    );
    const waiting = await waitFor(
      'a pull failure',
      async () => {
        const [p] = await installerPods();
        const w = p?.status?.containerStatuses?.[0]?.state?.waiting;
        return ['ErrImagePull', 'ImagePullBackOff'].includes(w?.reason) ? w : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000 },
    );
    expect(waiting.message).toContain(missing);
    const describe = await waitFor(
      'the Failed event',
      async () => {
        const out = (await kubectl(['describe', 'pod', pod.metadata.name], ns)).stdout;
        return /Failed to pull image "[^"]+": .*not found/.test(out) ? out : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 2000 },
    );
    expect(describe).toContain(`Failed to pull image "${missing}"`);
    expect(await history(release, namespace)).toEqual([]);
  });

  it("KOTS Job, the next KOTS deploy fails half way (a larger cache upgraded, then the storefront's migration fails): exit 4, the cache goes back, the app is at app revision 1; the next good deploy is app revision 3", async () => {
    // kots/ rendered as KOTS renders it for each deploy (its own sequence, so its own Job name),
    // applied as KOTS applies it (the previous deploy's Job removed: the new one no longer has it).
    const kotsNs = await createNamespace('kots-app-rollback', { kubeconfig });
    const o: KubectlOptions = { kubeconfig, namespace: kotsNs };
    const deploy = (sequence: number, values: Record<string, ConfigValue>) => kotsDeploy(kotsNs, sequence, values);
    const revisions = async (name: string) => (await history(name, kotsNs)).map((r) => `${r.revision} ${r.status}`);
    const appRevisions = async () =>
      JSON.parse(
        (await getJson(['get', 'configmap', 'helm-installer-storefront-releases'], o)).data.appRevisions,
      ) as any[];
    const byKey = (releases: any[]) => Object.fromEntries(releases.map((r) => [r.key, r]));
    const cacheMemory = () => cacheSize(o);
    const started = Date.now();
    try {
      // First deploy: the Config screen's defaults (the cache on, "Cache size" medium).
      const first = await deploy(1, {});
      expect(first.term.exitCode, first.logs.slice(-4000)).toBe(0);
      expect(first.done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
      for (const name of planReleases) expect(await revisions(name), name).toEqual(['1 deployed']);
      expect(await cacheMemory()).toEqual(['512Mi', '400mb']);

      // Second deploy: the admin picks the large cache, so the cache is upgraded (beside the
      // unchanged operator), and the storefront's pre-upgrade migration fails. On a real cluster a
      // migration fails on its own (its database, its data); here the simulated node fails the
      // migration pod that carries the annotation, which the admin's "Helm values override"
      // (Advanced) puts on it: the Config screen's own way to a chart value.
      const failingOverride = { value: `migrations:\n  podAnnotations:\n    ${KWOK_PHASE_ANNOTATION}: Failed\n` };
      const failing = await deploy(2, { cache_size: { value: 'large' }, values_override: failingOverride });
      expect(failing.done.status.conditions.find((c: any) => c.type === 'Failed')).toMatchObject({
        status: 'True',
        reason: 'PodFailurePolicy',
      });
      expect(failing.term.exitCode, failing.logs.slice(-4000)).toBe(4);
      expect(await jobPods(failing.done.metadata.name, o)).toHaveLength(1);
      // The termination message (`kubectl get pod`, `describe`): the app revision the cluster is
      // left at, each release with its revision, and the rollback's step.
      const lines = failing.term.message.trimEnd().split('\n');
      expect(lines[0]).toBe(
        'helm-installer FAILED (exit 4: helm operation failed): 2 of 3 releases done, 1 failed; app revision 2 failed; every release it changed went back: the app is at app revision 1',
      );
      expect(lines).toContainEqual(
        expect.stringMatching(new RegExp(`^  ${kotsNs}/promotions-operator: unchanged, revision 1, [\\d.]+s$`)),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(new RegExp(`^  ${kotsNs}/storefront-cache: upgraded, revision 2, [\\d.]+s$`)),
      );
      expect(
        lines.find((l: string) => l.startsWith(`  ${kotsNs}/storefront: FAILED (exit 4)`)),
        failing.term.message,
      ).toMatch(/: pre-upgrade hooks failed: resource Job\//);
      expect(lines.at(-1)).toBe(
        `  app rollback: ${kotsNs}/storefront-cache: rolled back from revision 2 to 1 (now revision 3)`,
      );
      // Every release at app revision 1: the cache medium again (helm's record and the live
      // objects), the storefront put back by helm without the override, the operator untouched.
      expect(await revisions('storefront-cache')).toEqual(['1 superseded', '2 superseded', '3 deployed']);
      expect((await releaseRecord('storefront-cache', kotsNs)).config).toMatchObject({
        maxmemory: '400mb',
        resources: { limits: { memory: '512Mi' } },
      });
      expect(await cacheMemory()).toEqual(['512Mi', '400mb']);
      expect(await revisions(release)).toEqual(['1 superseded', '2 failed', '3 deployed']);
      expect((await releaseRecord(release, kotsNs)).config.migrations).not.toHaveProperty('podAnnotations');
      expect(await revisions('promotions-operator')).toEqual(['1 deployed']);
      const afterFailure = await appRevisions();
      expect(afterFailure.map((r) => [r.revision, r.status, r.rolledBackTo])).toEqual([
        [1, 'deployed', undefined],
        [2, 'rolled back', 1],
      ]);
      // What the failed app revision left: new revisions of the two releases that moved, each the
      // very inputs of its revision in app revision 1 (a rollback keeps the input digest).
      const [good1, left2] = [byKey(afterFailure[0].releases), byKey(afterFailure[1].releases)];
      const key = (name: string) => `${kotsNs}/${name}`;
      expect(Object.fromEntries(Object.entries(left2).map(([k, r]: [string, any]) => [k, r.revision]))).toEqual({
        [key('promotions-operator')]: 1,
        [key(release)]: 3,
        [key('storefront-cache')]: 3,
      });
      for (const name of planReleases) expect(left2[key(name)].digest, name).toBe(good1[key(name)].digest);
      // The RolledBack Event on the failed Job, as `kubectl describe job` lists it.
      const rolledBack = (await jobEvents(failing.done, o)).filter((e) => e.reason === 'RolledBack');
      expect(rolledBack.map((e) => [e.type, e.note])).toEqual([
        [
          'Warning',
          `release ${kotsNs}/storefront-cache: app revision 2 failed; the app goes back to app revision 1: rolled back from revision 2 to 1 (now revision 3)`,
        ],
      ]);

      // The admin's "Generate a support bundle" now: kots/troubleshoot.yaml as KOTS renders it for
      // this deploy, run by Troubleshoot's support-bundle; its analysis in the admin's words.
      await supportBundleAfterFailure(kotsNs, { cache_size: { value: 'large' }, values_override: failingOverride });

      // Third deploy: the override cleared, the large cache kept: one new app revision, exit 0.
      const good = await deploy(3, { cache_size: { value: 'large' } });
      expect(good.term.exitCode, good.logs.slice(-4000)).toBe(0);
      expect(good.done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
      expect(summaryLines(good.logs)).toMatch(
        new RegExp(
          `helm-installer: release plan done, app revision 3 deployed: 3 of 3 releases done, [\\d.]+s\n {2}${kotsNs}/promotions-operator: unchanged, revision 1, [\\d.]+s\n {2}${kotsNs}/storefront: unchanged, revision 3, [\\d.]+s\n {2}${kotsNs}/storefront-cache: upgraded, revision 4, [\\d.]+s`,
        ),
      );
      expect((await appRevisions()).map((r) => [r.revision, r.status])).toEqual([
        [1, 'deployed'],
        [2, 'rolled back'],
        [3, 'deployed'],
      ]);
      expect(await revisions('storefront-cache')).toEqual([
        '1 superseded',
        '2 superseded',
        '3 superseded',
        '4 deployed',
      ]);
      expect(await cacheMemory()).toEqual(['1Gi', '800mb']);
      process.stderr.write(
        `[figure] three KOTS deploys of the bundled app on the real node (first, failed half way and rolled back, good): ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
    } finally {
      await deleteNamespace(kotsNs, { kubeconfig });
      for (const kind of ['clusterrolebinding', 'clusterrole'])
        await kubectl(['delete', kind, `storefront-installer-crds-${kotsNs}`, '--ignore-not-found'], { kubeconfig });
    }
  }, 900_000);

  it('KOTS Job, its password Secret without the expected key: exit 3 naming the missing file, the Job fails at once, nothing installed', async () => {
    const kotsNs = await createNamespace('kots-secret-key', { kubeconfig });
    try {
      const r = await kotsRender({ namespace: kotsNs, values: { database_password: { valuePlaintext: 'pw-1' } } });
      expect(r.exitCode, r.stderr).toBe(0);
      const docs = kotsOnRealNode(r, apiServerPort, image);
      const kotsJob = docs.find((d) => d.kind === 'Job')!;
      const applied = docs
        // The Secret as an admin might have re-created it by hand: the password under another key.
        .map((d) =>
          d.kind === 'Secret' && d.metadata.name === 'storefront-customer-secrets'
            ? { ...d, stringData: { 'password.yaml': d.stringData['storefront.yaml'] } }
            : d,
        );
      await kubectl(['apply', '-f', '-'], {
        kubeconfig,
        namespace: kotsNs,
        input: applied.map((d) => stringify(d)).join('---\n'),
      });
      const o = { kubeconfig, namespace: kotsNs };
      const done = await finishedJob(kotsJob.metadata.name, o);
      expect(done.status.conditions.find((c: any) => c.type === 'Failed')).toMatchObject({
        status: 'True',
        reason: 'PodFailurePolicy',
      });
      const pods = await jobPods(kotsJob.metadata.name, o);
      expect(pods).toHaveLength(1);
      const term = terminatedOf(pods[0]);
      expect(term.exitCode).toBe(3);
      expect(term.message).toContain('cause: values path not found: /config/secrets/storefront.yaml');
      expect(term.message).toContain('ConfigMap or Secret mounted there exists and has that key');
      expect(await history('storefront', kotsNs)).toEqual([]);
    } finally {
      await deleteNamespace(kotsNs, { kubeconfig });
      for (const kind of ['clusterrolebinding', 'clusterrole'])
        await kubectl(['delete', kind, `storefront-installer-crds-${kotsNs}`, '--ignore-not-found'], { kubeconfig });
    }
  });
});
