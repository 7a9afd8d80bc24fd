// install's own render sees the cluster helm upgrade sees. On the local control plane (its API
// server's version, the APIs it serves), through the real helm 4 and helm 3:
// - the version and API list the installer reads equal those helm itself gives a chart at install;
// - the same read's resource index names each kind's resource and scope as the API server does,
//   and the RBAC preflight answers the same with it as with a discovery read per apiVersion;
// - installing a chart whose images depend on .Capabilities (kubeVersion/semverCompare, an
//   APIVersions.Has gate on a kind, which a plain helm template lacks) with --registry: the
//   image plan (checked by the preflight against a registry holding exactly the images the
//   cluster's render needs) is what helm installed, read back from the cluster.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterCapabilities, clusterDiscovery } from '../../src/cluster/capabilities.js';
import { checkRbac, RbacQueries } from '../../src/rbac/rbac-preflight.js';
import { connectKube } from '../../src/cluster/kube-client.js';
import { getJson, kubectl } from '../cluster/kube.js';
import { appDir, chartDir, helm, helm3, helm4, repoRoot, tempDir } from '../helpers.js';
import { pushTestImage, startRegistry, type TestRegistry } from '../images/registry.js';
import { install, kinds, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const HELMS = [
  { name: 'helm 4', bin: helm4 },
  { name: 'helm 3', bin: helm3 },
];
const charts = join(repoRoot, 'test/fixtures/charts');
const newNamespace = namespacesDeletedAfterAll();
let registry: TestRegistry;
let serverVersion: string;

beforeAll(async () => {
  process.env.KUBECONFIG = kubeconfig();
  registry = await startRegistry();
  serverVersion = (
    await getJson<{ serverVersion: { gitVersion: string } }>(['version', '-o', 'json'], { kubeconfig: kubeconfig() })
  ).serverVersion.gitVersion;
});
afterAll(async () => {
  await registry?.stop();
});

/** A chart that prints the Capabilities helm gives it into a ConfigMap. */
function probeChart(): string {
  const dir = join(tempDir('capabilities-probe'), 'probe');
  mkdirSync(join(dir, 'templates'), { recursive: true });
  writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: probe\nversion: 0.1.0\n');
  writeFileSync(
    join(dir, 'templates', 'probe.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n  apis: {{ toJson .Capabilities.APIVersions | quote }}\n',
  );
  return dir;
}

const minor = (v: string) => Number(/^v?1\.(\d+)/.exec(v)![1]);

describe('one discovery read for the Capabilities and the RBAC preflight', () => {
  it("indexes each kind's resource and scope as the API server names them, the same with or without aggregated discovery", async () => {
    const { config } = await connectKube();
    const aggregated = await clusterDiscovery(config);
    // Built-in kinds as Kubernetes names them (written out here, not derived).
    const expected: Record<string, { group: string; resource: string; namespaced: boolean }> = {
      'v1:Pod': { group: '', resource: 'pods', namespaced: true },
      'v1:ConfigMap': { group: '', resource: 'configmaps', namespaced: true },
      'v1:Namespace': { group: '', resource: 'namespaces', namespaced: false },
      'v1:PersistentVolume': { group: '', resource: 'persistentvolumes', namespaced: false },
      'apps/v1:Deployment': { group: 'apps', resource: 'deployments', namespaced: true },
      'apps/v1:StatefulSet': { group: 'apps', resource: 'statefulsets', namespaced: true },
      'batch/v1:CronJob': { group: 'batch', resource: 'cronjobs', namespaced: true },
      'networking.k8s.io/v1:Ingress': { group: 'networking.k8s.io', resource: 'ingresses', namespaced: true },
      'networking.k8s.io/v1:IngressClass': {
        group: 'networking.k8s.io',
        resource: 'ingressclasses',
        namespaced: false,
      },
      'policy/v1:PodDisruptionBudget': { group: 'policy', resource: 'poddisruptionbudgets', namespaced: true },
      'rbac.authorization.k8s.io/v1:ClusterRole': {
        group: 'rbac.authorization.k8s.io',
        resource: 'clusterroles',
        namespaced: false,
      },
      'rbac.authorization.k8s.io/v1:RoleBinding': {
        group: 'rbac.authorization.k8s.io',
        resource: 'rolebindings',
        namespaced: true,
      },
      'apiextensions.k8s.io/v1:CustomResourceDefinition': {
        group: 'apiextensions.k8s.io',
        resource: 'customresourcedefinitions',
        namespaced: false,
      },
      'coordination.k8s.io/v1:Lease': { group: 'coordination.k8s.io', resource: 'leases', namespaced: true },
    };
    for (const [key, info] of Object.entries(expected)) expect(aggregated.resources.get(key), key).toEqual(info);
    // A kind served only as a subresource (deployments/scale) is no resource of its own.
    expect(aggregated.resources.has('autoscaling/v1:Scale')).toBe(false);
    // Every kind of a served group version is indexed: as many as `kubectl api-resources` lists for apps/v1.
    const apps = (
      await kubectl(['api-resources', '--api-group=apps', '-o', 'name'], { kubeconfig: kubeconfig() })
    ).stdout
      .split('\n')
      .filter(Boolean)
      .sort();
    expect(
      [...aggregated.resources]
        .filter(([k]) => k.startsWith('apps/v1:'))
        .map(([, r]) => `${r.resource}.apps`)
        .sort(),
    ).toEqual(apps);
    // A server without aggregated discovery: the same index from one read per group version.
    const legacy = await clusterDiscovery(config, { aggregated: false });
    expect(new Map([...legacy.resources].sort())).toEqual(new Map([...aggregated.resources].sort()));
  });

  it('the RBAC preflight answers the same from the index as from discovery per apiVersion, a CRD the chart defines included', async () => {
    const { config } = await connectKube();
    // The bundled chart, CRDs included, plus a custom resource of a CRD this render alone defines.
    const crd = [
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'metadata:\n  name: gadgets.index-test.example.com',
      'spec:\n  group: index-test.example.com\n  scope: Cluster\n  names:\n    kind: Gadget\n    plural: gadgets\n  versions:\n    - name: v1\n      served: true\n      storage: true',
    ].join('\n');
    const bundled = await helm(helm4, [
      'template',
      'storefront',
      chartDir,
      '--namespace',
      'rbac-index',
      '--include-crds',
      '--values',
      join(appDir, 'examples', 'customer-values.yaml'),
    ]);
    const manifests = [
      bundled,
      crd,
      'apiVersion: index-test.example.com/v1\nkind: Gadget\nmetadata:\n  name: one',
    ].join('\n---\n');
    const input = { manifests, releaseNamespace: 'rbac-index' };
    const withIndex = await checkRbac(
      input,
      config,
      RbacQueries.of(
        config,
        clusterDiscovery(config).then((d) => d.resources),
      ),
    );
    const perApiVersion = await checkRbac(input, config, RbacQueries.of(config));
    expect(withIndex).toEqual(perApiVersion);
    expect(withIndex.denied).toEqual([]);
    // The Gadget is checked (the six object verbs on cluster-wide gadgets), not left out as unknown;
    // its CRD adds nothing the bundled chart's own CRD does not already need.
    const alone = await checkRbac(
      { manifests: bundled, releaseNamespace: 'rbac-index' },
      config,
      RbacQueries.of(
        config,
        clusterDiscovery(config).then((d) => d.resources),
      ),
    );
    expect(withIndex.checked).toBe(alone.checked + 6);
  });
});

describe.each(HELMS)('the cluster as helm upgrade sees it ($name)', ({ bin }) => {
  it('the installer reads the version and API list helm gives a chart at install', async () => {
    const r = await execa(bin, ['install', 'probe', probeChart(), '--namespace', 'default', '--dry-run=server'], {
      env: { KUBECONFIG: kubeconfig() },
    });
    // Helm 3 prints the template's text, helm 4 its re-serialisation: one line per key either way.
    const line = (key: string) => JSON.parse(new RegExp(`^ {2}${key}: (".*")$`, 'm').exec(r.stdout)![1]!) as string;
    const helmApis = (JSON.parse(line('apis')) as string[]).sort();
    const helmKube = line('kube');

    const ours = await clusterCapabilities((await connectKube()).config);
    expect(ours.kubeVersion).toBe(helmKube);
    expect(ours.kubeVersion).toBe(serverVersion);
    expect(ours.apiVersions).toEqual(helmApis);
    // Kind-level entries are what a plain helm template lacks.
    expect(ours.apiVersions).toContain('batch/v1/CronJob');
    // A server without aggregated discovery (before Kubernetes 1.27): one read per group version, the same list.
    expect(await clusterCapabilities((await connectKube()).config, { aggregated: false })).toEqual(ours);
  });

  it('install --registry: the image plan the preflight checks is what helm installs, for Capabilities-gated charts', async () => {
    // The fixture's rules (templates/*.yaml), applied to this API server's version.
    const m = minor(serverVersion);
    const csi = [
      'longhorn-manager:v1.8.0',
      m >= 33 ? 'csi-resizer:v1.13.1' : 'csi-resizer:v1.9.4',
      m >= 35 ? 'csi-snapshotter:v8.2.0' : 'csi-snapshotter:v7.0.2',
    ];
    // What the cluster serves, by kubectl (the cluster is shared: a CRD another test added counts).
    const served = (await kubectl(['api-versions'], { kubeconfig: kubeconfig() })).stdout.split('\n');
    const cronJobs = (
      await kubectl(['api-resources', '--api-group=batch', '-o', 'name'], { kubeconfig: kubeconfig() })
    ).stdout
      .split('\n')
      .includes('cronjobs.batch');
    const gated = [
      'nginx:1.27.3',
      cronJobs && served.includes('batch/v1') ? 'kubectl:1.31.4' : 'busybox:1.37.0',
      ...(served.includes('monitoring.coreos.com/v1') ? ['nginx-prometheus-exporter:1.4.0'] : []),
    ];
    expect(gated).toContain('kubectl:1.31.4'); // the kind-level gate a plain helm template never opens
    const ns = await newNamespace(`caps-${bin === helm4 ? 'h4' : 'h3'}`);
    const address = `${registry.host}/caps-${bin === helm4 ? 'h4' : 'h3'}`;
    // The registry holds exactly these: an image the plan adds is missing (exit 6), one it misses is not installed.
    for (const image of [...csi, ...gated]) {
      const [name, tag] = image.split(':');
      await pushTestImage(registry, `${address.slice(registry.host.length + 1)}/${name}`, tag!);
    }

    for (const [chart, expected] of [
      ['kube-version-gated', csi],
      ['api-versions-gated', gated],
    ] as const) {
      const r = await install(chart, ns, ['--chart', join(charts, chart), '--registry', address, '--helm-bin', bin]);
      expect(r.exitCode, `${chart}: ${r.stdout.slice(-1500)}\n${r.stderr}`).toBe(0);
      const preflight = r.stdout
        .split('\n')
        .filter((l) => l.includes('"msg":"registry preflight"'))
        .map((l) => JSON.parse(l) as { present: number; missing: number });
      expect(preflight, chart).toEqual([expect.objectContaining({ present: expected.length, missing: 0 })]);
    }

    const installed: string[] = [];
    for (const kind of ['deployments', 'cronjobs']) {
      for (const obj of await kinds(ns, kind)) {
        const spec = kind === 'cronjobs' ? obj.spec.jobTemplate.spec.template.spec : obj.spec.template.spec;
        installed.push(...spec.containers.map((c: { image: string }) => c.image));
      }
    }
    expect(installed.sort()).toEqual([...csi, ...gated].map((i) => `${address}/${i}`).sort());
  });
});
