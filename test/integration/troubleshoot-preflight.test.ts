// The Preflight `troubleshoot-specs` writes, run by Troubleshoot's own `preflight` (built from its
// Go module at the pinned version, test/cluster/troubleshoot.ts) against the local cluster: it
// passes for the bundled app, and fails naming the cause for a chart too old for the cluster, a
// StorageClass, IngressClass and PriorityClass that do not exist (listing those that do; a warning
// when the identity cannot list them), pods Pod Security "restricted" refuses, and (airgap) an image
// missing from the local registry or a registry that does not answer.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, deleteNamespace, getJson, kubectl } from '../cluster/kube.js';
import { ensureTroubleshootBinaries, runPreflight, type TroubleshootPaths } from '../cluster/troubleshoot.js';
import { parse } from 'yaml';
import { pushTestImage } from '../images/registry.js';
import { kotsRender } from './kots-render.js';
import { repoRoot, runCli, tempDir } from '../helpers.js';

const kubeconfig = inject('kubeconfig');
const registryHost = inject('registry');
const refused = join(repoRoot, 'test', 'fixtures', 'charts', 'troubleshoot-refused');
let binaries: TroubleshootPaths;
const namespaces: string[] = [];

beforeAll(async () => {
  binaries = await ensureTroubleshootBinaries((line) => process.stderr.write(`[troubleshoot] ${line}\n`));
}, 60 * 60_000);

afterAll(async () => {
  for (const ns of namespaces) await deleteNamespace(ns, { kubeconfig });
});

/** The specs for the given arguments, written to a file; the Preflight is its first document. */
async function specsFile(args: string[]): Promise<string> {
  const r = await runCli(['troubleshoot-specs', '--format', 'plain', ...args], { env: { KUBECONFIG: kubeconfig } });
  expect(r.exitCode, r.stderr).toBe(0);
  const file = join(tempDir('troubleshoot-preflight'), 'specs.yaml');
  writeFileSync(file, `${r.stdout}\n`);
  return file;
}

const failures = (r: Awaited<ReturnType<typeof runPreflight>>) => r.results.filter((x) => x.outcome === 'fail');

/** The names of a cluster-scoped kind as the API lists them (by name), read with kubectl. */
async function existing(resource: string): Promise<string[]> {
  const r = await kubectl(['get', resource, '-o', 'jsonpath={.items[*].metadata.name}'], { kubeconfig });
  return r.stdout.trim().split(/\s+/).filter(Boolean);
}

/** A kubeconfig for a ServiceAccount that may only read the namespace (`view` bound there): no cluster-wide list. */
async function namespaceViewer(ns: string): Promise<string> {
  await kubectl(['create', 'serviceaccount', 'viewer', '--namespace', ns], { kubeconfig });
  await kubectl(
    ['create', 'rolebinding', 'viewer', '--namespace', ns, '--clusterrole=view', `--serviceaccount=${ns}:viewer`],
    { kubeconfig },
  );
  const token = (
    await kubectl(['create', 'token', 'viewer', '--namespace', ns, '--duration', '1h'], { kubeconfig })
  ).stdout.trim();
  const admin = await getJson(['config', 'view', '--raw', '--minify'], { kubeconfig });
  const file = join(tempDir('ts-preflight-viewer'), 'kubeconfig');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: admin.clusters[0].cluster }],
    users: [{ name: 'viewer', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'viewer', namespace: ns } }],
    'current-context': 'c',
  };
  writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

const missingClass = (kind: string, name: string, by: string, exist: string[]) =>
  `${kind} ${name} does not exist, and troubleshoot-refused: ${by} names it: the install fails or its pods never start. ` +
  `The ${kind}es that exist: ${exist.length ? exist.join(', ') : 'none'}. Create ${name}, or set the chart's value to one of them.`;

describe('the generated Preflight, run by Troubleshoot', () => {
  it('passes for the bundled app (every chart, class and CRD it needs; its pods admitted)', async () => {
    const ns = await createNamespace('ts-preflight-app', { kubeconfig });
    namespaces.push(ns);
    const r = await runPreflight(binaries.preflight, await specsFile(['--namespace', ns]), kubeconfig);
    expect(failures(r), r.stderr.slice(-2000)).toEqual([]);
    expect([0, 4]).toContain(r.exitCode);
    const passed = r.results.filter((x) => x.outcome === 'pass').map((x) => x.title);
    for (const title of [
      'Kubernetes version for promotions-operator',
      'Kubernetes version for storefront',
      'Kubernetes version for storefront-cache',
    ])
      expect(passed).toContain(title);
  });

  it('fails (exit 3) naming the chart too old for the cluster, the missing classes (listing those that exist) and the fields Pod Security "restricted" refuses', async () => {
    const ns = await createNamespace('ts-preflight-refused', { kubeconfig });
    namespaces.push(ns);
    await kubectl(
      [
        'label',
        'namespace',
        ns,
        'pod-security.kubernetes.io/enforce=restricted',
        'pod-security.kubernetes.io/audit=restricted',
      ],
      { kubeconfig },
    );
    // Rendered as for the Kubernetes its chart allows: helm refuses the chart on 1.34 itself.
    const r = await runPreflight(
      binaries.preflight,
      await specsFile(['--chart', refused, '--namespace', ns, '--', '--kube-version=1.29.0']),
      kubeconfig,
    );
    expect(r.exitCode, r.stderr.slice(-2000)).toBe(3);
    const failed = Object.fromEntries(failures(r).map((x) => [x.title, x.message]));
    expect(Object.keys(failed).sort()).toEqual([
      'IngressClass no-such-ingress',
      'Kubernetes version for troubleshoot-refused',
      `Pod Security of namespace ${ns}`,
      'PriorityClass no-such-priority',
      'StorageClass no-such-class',
    ]);
    expect(failed['Kubernetes version for troubleshoot-refused']).toMatch(
      /^The chart troubleshoot-refused 0\.1\.0 \(release troubleshoot-refused\) installs on Kubernetes >=1\.20\.0-0 <1\.30\.0-0 only/,
    );
    const [storage, ingress, priority] = [
      await existing('storageclasses'),
      await existing('ingressclasses'),
      await existing('priorityclasses'),
    ];
    expect(storage).toContain('standard'); // the local cluster's own; the message must list it
    expect(failed['StorageClass no-such-class']).toBe(
      missingClass('StorageClass', 'no-such-class', 'PersistentVolumeClaim/troubleshoot-refused-data', storage),
    );
    expect(failed['IngressClass no-such-ingress']).toBe(
      missingClass('IngressClass', 'no-such-ingress', 'Ingress/troubleshoot-refused-web', ingress),
    );
    expect(failed['PriorityClass no-such-priority']).toBe(
      missingClass('PriorityClass', 'no-such-priority', 'Deployment/troubleshoot-refused-web', priority),
    );
    expect(failed[`Pod Security of namespace ${ns}`]).toBe(
      `The namespace ${ns} enforces Pod Security "restricted", which refuses pods of the app: troubleshoot-refused: Deployment/troubleshoot-refused-web: ` +
        'spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation != false, spec.template.spec.containers[0].securityContext.capabilities.drop lacks ALL, ' +
        'spec.template.spec.containers[0].securityContext.runAsNonRoot != true, spec.template.spec.containers[0].securityContext.seccompProfile.type unset (RuntimeDefault or Localhost). ' +
        'Label the namespace with a lower level (pod-security.kubernetes.io/enforce), or ask the vendor.',
    );
    expect(r.results.every((x) => x.outcome !== 'fail' || x.strict === true)).toBe(true);

    // The same namespace enforcing baseline admits these pods: that check passes. Classes that exist
    // pass (a PriorityClass listed after another: the check finds any item, not only the first).
    await kubectl(['label', '--overwrite', 'namespace', ns, 'pod-security.kubernetes.io/enforce=baseline'], {
      kubeconfig,
    });
    const [sc, pc] = ['standard', priority.at(-1)!];
    const baseline = await runPreflight(
      binaries.preflight,
      await specsFile([
        '--chart',
        refused,
        '--namespace',
        ns,
        '--set',
        `storageClassName=${sc}`,
        '--set',
        `priorityClassName=${pc}`,
        '--',
        '--kube-version=1.29.0',
      ]),
      kubeconfig,
    );
    const outcomeOf = (title: string) => baseline.results.find((x) => x.title === title);
    expect(outcomeOf(`Pod Security of namespace ${ns}`)?.outcome).toBe('pass');
    expect(outcomeOf(`StorageClass ${sc}`)).toMatchObject({ outcome: 'pass', message: `StorageClass ${sc} exists.` });
    expect(outcomeOf(`PriorityClass ${pc}`)).toMatchObject({ outcome: 'pass', message: `PriorityClass ${pc} exists.` });
  });

  it('an identity that cannot list the classes gets a warning naming the errors file, never a false "none exist"', async () => {
    const ns = await createNamespace('ts-preflight-unlisted', { kubeconfig });
    namespaces.push(ns);
    const viewer = await namespaceViewer(ns);
    const r = await runPreflight(
      binaries.preflight,
      await specsFile(['--chart', refused, '--namespace', ns, '--', '--kube-version=1.29.0']),
      viewer,
    );
    const of = (title: string) => r.results.find((x) => x.title === title);
    expect(of('StorageClass no-such-class'), r.stderr.slice(-2000)).toMatchObject({
      outcome: 'warn',
      message:
        'Troubleshoot could not list the StorageClasses (cluster-resources/storage-classes-errors.json says why): whether no-such-class exists is not known here; the installer checks it again before helm.',
    });
    expect(of('PriorityClass no-such-priority')?.outcome).toBe('warn');
    expect(of('IngressClass no-such-ingress')?.outcome).toBe('warn');
  });

  it('airgap: fails when an image is missing from the local registry, and when the registry does not answer', async () => {
    const ns = await createNamespace('ts-preflight-airgap', { kubeconfig });
    namespaces.push(ns);
    const local = `${registryHost}/${ns}`;
    // The chart's one image pushed under its local name, then a second one the registry lacks.
    await pushTestImage(
      { url: `http://${registryHost}`, host: registryHost, stop: async () => undefined },
      `${ns}/busybox`,
      '1.36.1',
    );
    const chart = ['--chart', refused, '--namespace', ns, '--', '--kube-version=1.29.0'];
    const present = await runPreflight(
      binaries.preflight,
      await specsFile(['--registry', local, ...chart]),
      kubeconfig,
    );
    expect(present.results.find((x) => x.title === 'Images in the local registry')).toMatchObject({
      outcome: 'pass',
      message: 'The local registry holds all 1 images of the app.',
    });

    const missing = await runPreflight(
      binaries.preflight,
      await specsFile(['--registry', local, '--set', 'image=docker.io/library/busybox:9.9.9', ...chart]),
      kubeconfig,
    );
    expect(missing.exitCode).toBe(3);
    expect(missing.results.find((x) => x.title === 'Images in the local registry')).toMatchObject({
      outcome: 'fail',
      strict: true,
    });
    expect(missing.results.find((x) => x.title === 'Images in the local registry')?.message).toMatch(
      /^Images of the app are missing from the local registry/,
    );

    const unreachable = await runPreflight(
      binaries.preflight,
      await specsFile(['--registry', `127.0.0.1:9/${ns}`, ...chart]),
      kubeconfig,
    );
    expect(unreachable.results.find((x) => x.title === 'Images in the local registry')?.message).toMatch(
      /^The local registry could not be asked for every image of the app \(unreachable/,
    );
  });

  it('the shipped kots/troubleshoot.yaml, rendered by KOTS: with a local registry it checks every image `images --registry` lists, in the namespace KOTS deploys to; without one the check is excluded', async () => {
    const registry = { host: 'registry.example:5000', namespace: 'acme' };
    const rendered = await kotsRender({
      namespace: 'shop',
      sequence: 4,
      airgap: true,
      registry,
      values: { database_password: { valuePlaintext: 'pw-1' } },
      kotsKinds: true,
    });
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    // KOTS's own kinds: the Application and Config screen beside ours.
    const docs = rendered.documents
      .map((d) => parse(d.content))
      .filter((d) => d.apiVersion === 'troubleshoot.sh/v1beta2');
    expect(docs.map((d) => d.kind)).toEqual(['Preflight', 'SupportBundle', 'Redactor']);
    const collector = docs[0].spec.collectors[0].registryImages;
    const listed = await runCli(['images', '--registry', `${registry.host}/${registry.namespace}`]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    // The same names, in the order of the charts' spellings.
    expect({ ...collector, images: [...collector.images].sort() }).toEqual({
      collectorName: 'local-registry-images',
      exclude: 'false',
      namespace: 'shop',
      imagePullSecret: { name: 'storefront-registry' },
      images: listed.stdout.trim().split('\n').sort(),
    });
    expect(docs[1].spec.collectors.find((c: any) => c.logs?.name === 'installer').logs.selector).toEqual([
      'batch.kubernetes.io/job-name=storefront-installer-4',
    ]);

    const online = await kotsRender({
      namespace: 'shop',
      values: { database_password: { valuePlaintext: 'pw-1' } },
      kotsKinds: true,
    });
    const preflight = online.documents.map((d) => parse(d.content)).find((d) => d.kind === 'Preflight');
    expect(preflight.spec.collectors[0].registryImages.exclude).toBe('true');
  });
});
