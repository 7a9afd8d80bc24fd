// Pods the cluster refuses or cannot place, named in seconds (issue 36, part 2), with helm 4 and
// helm 3, each beside plain helm on the same chart, values and namespace set-up: Pod Security
// `restricted` enforced, a ResourceQuota with no room, a LimitRange the pods exceed, a
// ValidatingAdmissionPolicy that denies them and a nodeSelector no node has each stop the install
// within --fail-fast-after (exit 4) with the cluster's words and the way out, the first install
// removed (a StatefulSet's refusal read from its FailedCreate Event; an upgrade rolled back); the refusals the API server gives a dry run are warned about before helm runs; a
// StorageClass that does not exist stops it before any change (exit 3), naming the classes the
// cluster has. Plain helm waits for its whole --timeout; both times are printed, never asserted.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { applyYaml, getJson, kubectl, waitFor } from '../cluster/kube.js';
import { cliResult, helm3, helm4, repoRoot, runCli, tempDir, type CliResult } from '../helpers.js';
import { history, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const CHART = join(repoRoot, 'test/fixtures/charts/refused');
const FAIL_FAST_S = 5;
/** Plain helm's --timeout (its default is 5m): the figure beside the installer's is this bound. */
const PLAIN_TIMEOUT_S = 60;
const RELEASE = 'web';

const namespace = namespacesDeletedAfterAll();
const clusterObjects: string[][] = [];
afterAll(async () => {
  for (const o of clusterObjects) await kubectl(['delete', '--ignore-not-found', ...o], { kubeconfig: kubeconfig() });
});
const k = (args: string[], ns?: string) =>
  kubectl(args, { kubeconfig: kubeconfig(), ...(ns ? { namespace: ns } : {}) });
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

interface Case {
  name: string;
  values: object;
  /** Makes the namespace refuse (or not place) the pods; resolves once the API server enforces it. */
  setUp(ns: string): Promise<void>;
  /** The refusal kind named in the cause line (undefined: the scheduler). */
  kind?: string;
  /** Lines the summary must hold, for a namespace. */
  expected(ns: string): string[];
  /** A dry run of the pods is refused before helm runs. */
  warnedBefore: boolean;
  /** Another warning logged before helm runs. */
  alsoWarned?: string;
}

/** Until a server-side dry run of a pod like the chart's is refused with `words`. */
async function refusing(
  ns: string,
  words: RegExp,
  labels: Record<string, string> = {},
  resources?: object,
): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'probe-', namespace: ns, labels },
    spec: {
      containers: [{ name: 'app', image: 'registry.example.com/shop/app:1.0', ...(resources ? { resources } : {}) }],
    },
  };
  await waitFor(
    `namespace ${ns} to refuse pods (${words})`,
    async () => {
      const r = await kubectl(['create', '--dry-run=server', '-f', '-', '-o', 'name'], {
        kubeconfig: kubeconfig(),
        input: JSON.stringify(pod),
        reject: false,
      });
      return r.exitCode !== 0 && words.test(r.stderr);
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
}

const limits = { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '500m', memory: '64Mi' } };

const CASES: Case[] = [
  {
    name: 'Pod Security restricted enforced',
    values: {},
    kind: 'pod-security',
    warnedBefore: true,
    async setUp(ns) {
      await k(['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted']);
      await refusing(ns, /violates PodSecurity/);
    },
    expected: (ns) => [
      `way out: namespace ${ns} enforces Pod Security "restricted:latest" (label pod-security.kubernetes.io/enforce=restricted); the pods must fix:`,
      '- allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)',
      '- unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"])',
      '- runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)',
      `or, where the cluster admin allows it: kubectl label namespace ${ns} pod-security.kubernetes.io/enforce=baseline --overwrite`,
    ],
  },
  {
    name: 'a ResourceQuota with no room',
    values: {},
    kind: 'resource-quota',
    warnedBefore: true,
    alsoWarned:
      "the pods may not fit ResourceQuota/tight: the chart's pods need pods=1 in all; ResourceQuota tight has hard pods=0, used pods=0: they cannot fit even when nothing else uses it",
    async setUp(ns) {
      await applyYaml(
        stringify({
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'tight', namespace: ns },
          spec: { hard: { pods: '0' } },
        }),
        { kubeconfig: kubeconfig() },
      );
      await refusing(ns, /exceeded quota: tight/);
    },
    expected: (ns) => [
      'way out: ResourceQuota tight has no room: requested pods=1, used pods=0, hard pods=0',
      `raise it (kubectl -n ${ns} edit resourcequota tight), free room in namespace ${ns}, or lower the chart's replicas or resources.requests`,
    ],
  },
  {
    name: 'a LimitRange the pods exceed',
    values: { resources: limits },
    kind: 'limit-range',
    warnedBefore: true,
    async setUp(ns) {
      await applyYaml(
        stringify({
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'small', namespace: ns },
          spec: { limits: [{ type: 'Container', max: { cpu: '100m' } }] },
        }),
        { kubeconfig: kubeconfig() },
      );
      await refusing(ns, /maximum cpu usage per Container/, {}, limits);
    },
    expected: (ns) => [
      `way out: a LimitRange in namespace ${ns} bounds the pods: maximum cpu usage per Container is 100m, but limit is 500m`,
      `set the chart's resources (resources.requests and resources.limits) within it (kubectl -n ${ns} describe limitrange)`,
    ],
  },
  {
    name: 'a ValidatingAdmissionPolicy that denies the pods',
    values: { podLabels: { 'refuse-me': 'refused' } },
    kind: 'admission-policy',
    warnedBefore: true,
    async setUp(ns) {
      const name = `deny-refuse-me-${ns}`;
      clusterObjects.push(['validatingadmissionpolicybinding', name], ['validatingadmissionpolicy', name]);
      await applyYaml(
        [
          {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicy',
            metadata: { name },
            spec: {
              failurePolicy: 'Fail',
              matchConstraints: {
                resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
              },
              validations: [
                {
                  expression: "!has(object.metadata.labels) || !('refuse-me' in object.metadata.labels)",
                  message: 'pods labelled refuse-me are not allowed here',
                },
              ],
            },
          },
          {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingAdmissionPolicyBinding',
            metadata: { name },
            spec: {
              policyName: name,
              validationActions: ['Deny'],
              matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
            },
          },
        ]
          .map((d) => stringify(d))
          .join('---\n'),
        { kubeconfig: kubeconfig() },
      );
      await refusing(ns, /ValidatingAdmissionPolicy/, { 'refuse-me': 'refused' });
    },
    expected: (ns) => [
      `way out: ValidatingAdmissionPolicy deny-refuse-me-${ns} (binding deny-refuse-me-${ns}) denied the pods: pods labelled refuse-me are not allowed here`,
      `change the values so the pods meet it, or ask the cluster admin (kubectl get validatingadmissionpolicy deny-refuse-me-${ns} -o yaml)`,
    ],
  },
  {
    name: 'a nodeSelector no node has',
    values: { nodeSelector: { 'topology.kubernetes.io/zone': 'nowhere' } },
    warnedBefore: false,
    async setUp() {},
    expected: () => [
      "way out: no node has the labels the pods ask for (nodeSelector topology.kubernetes.io/zone=nowhere): fix the chart's nodeSelector or affinity values, or label a node (kubectl get nodes --show-labels)",
    ],
  },
];

interface Timed {
  exitCode: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

async function timed(run: () => Promise<CliResult>): Promise<Timed> {
  const started = Date.now();
  const r = await run();
  return { ...r, seconds: (Date.now() - started) / 1000 };
}

const cli = (args: string[]) => timed(() => runCli(args, { env: { KUBECONFIG: kubeconfig() }, timeoutMs: 600_000 }));

function valuesFile(values: object): string {
  const file = join(tempDir('refused'), 'values.yaml');
  writeFileSync(file, stringify(values));
  return file;
}

/** The fixture chart's release in `ns` with `values`: what install and plan are given alike. */
const target = (ns: string, values: string) => [
  '--chart',
  CHART,
  '--release',
  RELEASE,
  '--namespace',
  ns,
  '-f',
  values,
];

const installer = (ns: string, values: string, bin: string) =>
  cli([
    'install',
    ...target(ns, values),
    '--timeout',
    '300s',
    '--fail-fast-after',
    `${FAIL_FAST_S}s`,
    '--helm-bin',
    bin,
  ]);

const plainHelm = (ns: string, values: string, bin: string) =>
  timed(async () =>
    cliResult(
      await execa(
        bin,
        [
          'upgrade',
          '--install',
          RELEASE,
          CHART,
          '--namespace',
          ns,
          '-f',
          values,
          '--wait',
          '--timeout',
          `${PLAIN_TIMEOUT_S}s`,
        ],
        { env: { KUBECONFIG: kubeconfig() }, reject: false, timeout: 600_000 },
      ),
    ),
  );

const logLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; time: number; [k: string]: unknown });

const lastLine = (s: string) => s.trim().split('\n').at(-1) ?? '';

describe('plan: what the cluster says before any change', () => {
  it('Pod Security refusing the pods and a StorageClass that does not exist, with the way out; nothing created', async () => {
    const ns = await namespace('refusedplan');
    await CASES[0]!.setUp(ns);
    const values = valuesFile({ storageClass: 'no-such-class' });
    const r = await cli(['plan', ...target(ns, values), '-o', 'json']);
    expect(r.exitCode, r.stderr).toBe(10); // the install would change something
    const refusals = JSON.parse(r.stdout).refusals as {
      object: string;
      kind: string;
      blocks: boolean;
      message: string;
      wayOut: string[];
    }[];
    expect(refusals.map((x) => [x.object, x.kind, x.blocks])).toEqual([
      ['StorageClass/no-such-class', 'missing-class', true],
      [`Deployment/${RELEASE}-app`, 'pod-security', true],
    ]);
    expect(refusals[1]!.message).toMatch(
      /^pods "web-app-[a-z0-9]*" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false/,
    );
    expect(refusals[1]!.wayOut[0]).toBe(CASES[0]!.expected(ns)[0]!.replace(/^way out: /, ''));
    expect((await k(['get', 'all,persistentvolumeclaims', '-o', 'name'], ns)).stdout).toBe('');
  });
});

for (const [major, bin] of [
  ['4', helm4],
  ['3', helm3],
] as const) {
  describe.concurrent(`helm ${major}: pods the cluster refuses or cannot place`, () => {
    for (const c of CASES) {
      it(`${c.name}: named within --fail-fast-after with the way out (exit 4), the first install removed; plain helm waits its timeout`, async () => {
        const [ns, plainNs] = await Promise.all([namespace(`refused${major}`), namespace(`plain${major}`)]);
        await Promise.all([c.setUp(ns), c.setUp(plainNs)]);
        const values = valuesFile(c.values);
        const [run, plain] = await Promise.all([installer(ns, values, bin), plainHelm(plainNs, values, bin)]);
        const logs = logLines(run.stdout);
        const started = logs[0]?.time ?? 0;
        const failing = logs.find((l) => l.msg.startsWith('failing fast: '));
        process.stderr.write(
          `[figure] helm ${major}, ${c.name}: installer named the cause after ${failing ? ((failing.time - started) / 1000).toFixed(1) : '?'} s and exited ${run.exitCode} after ${run.seconds.toFixed(1)} s (fail-fast ${FAIL_FAST_S} s); plain helm exited ${plain.exitCode} after ${plain.seconds.toFixed(1)} s (--timeout ${PLAIN_TIMEOUT_S}s): ${lastLine(plain.stderr).slice(0, 160)}\n`,
        );
        expect(run.exitCode, run.stderr).toBe(4);
        expect(plain.exitCode).not.toBe(0);
        const cause = c.kind
          ? new RegExp(
              `^cause: install of release ${RELEASE} failed fast: the cluster refused to create the pods of ReplicaSet/${RELEASE}-app-[a-z0-9]+ for ${FAIL_FAST_S}s \\(${c.kind}\\), which waiting does not fix$`,
              'm',
            )
          : new RegExp(
              `^cause: install of release ${RELEASE} failed fast: no node could take Pod/${RELEASE}-app-[a-z0-9]+-[a-z0-9]+ for ${FAIL_FAST_S}s, which waiting does not fix$`,
              'm',
            );
        expect(run.stderr).toMatch(cause);
        for (const line of c.expected(ns)) expect(run.stderr).toMatch(new RegExp(`^ +${escape(line)}$`, 'm'));
        expect(run.stderr).toMatch(/^next: Take the way out above/m);
        // Before helm: the dry run of the pods was refused, with the same way out.
        const helmStarted = logs.findIndex((l) => l.msg === 'running helm upgrade --install');
        const warned = logs.findIndex((l) =>
          l.msg.startsWith(`the cluster would refuse the pods of Deployment/${RELEASE}-app: `),
        );
        if (c.warnedBefore) {
          expect(warned).toBeGreaterThanOrEqual(0);
          expect(warned).toBeLessThan(helmStarted);
          expect((logs[warned]!.wayOut as string[])[0]).toBe(c.expected(ns)[0]!.replace(/^way out: /, ''));
        } else expect(warned).toBe(-1);
        if (c.alsoWarned) {
          const also = logs.findIndex((l) => l.msg === c.alsoWarned);
          expect(also).toBeGreaterThanOrEqual(0);
          expect(also).toBeLessThan(helmStarted);
        }
        // helm was stopped and removed the first install; nothing of it is left.
        expect(await history(RELEASE, ns, bin)).toEqual([]);
        expect((await k(['get', 'deployments,replicasets', '-o', 'name'], ns)).stdout).toBe('');
      });
    }

    it('an upgrade whose new pod the quota refuses: exit 4 within --fail-fast-after, helm rolls the release back to what ran', async () => {
      const ns = await namespace(`refusedup${major}`);
      const first = await installer(ns, valuesFile({}), bin);
      expect(first.exitCode, first.stderr).toBe(0);
      await applyYaml(
        stringify({
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: 'one-pod', namespace: ns },
          spec: { hard: { pods: '1' } },
        }),
        { kubeconfig: kubeconfig() },
      );
      await waitFor(
        'the quota to count the running pod',
        async () =>
          (await getJson(['get', 'resourcequota', 'one-pod'], { kubeconfig: kubeconfig(), namespace: ns })).status?.used
            ?.pods === '1',
        {
          timeoutMs: 60_000,
          intervalMs: 500,
        },
      );
      // New pod labels: a new ReplicaSet, whose first pod (the surge) the quota has no room for.
      const run = await installer(ns, valuesFile({ podLabels: { tier: 'next' } }), bin);
      process.stderr.write(
        `[figure] helm ${major}, upgrade refused by a quota: installer exited ${run.exitCode} after ${run.seconds.toFixed(1)} s (fail-fast ${FAIL_FAST_S} s)\n`,
      );
      expect(run.exitCode, run.stderr).toBe(4);
      expect(run.stderr).toMatch(
        new RegExp(
          `^cause: upgrade of release ${RELEASE} failed fast: the cluster refused to create the pods of ReplicaSet/${RELEASE}-app-[a-z0-9]+ for ${FAIL_FAST_S}s \\(resource-quota\\)`,
          'm',
        ),
      );
      expect(run.stderr).toMatch(
        /^ +way out: ResourceQuota one-pod has no room: requested pods=1, used pods=1, hard pods=1$/m,
      );
      expect((await history(RELEASE, ns, bin)).map((h) => `${h.revision} ${h.status}`)).toEqual([
        '1 superseded',
        '2 failed',
        '3 deployed',
      ]);
      const deployment = await getJson(['get', 'deployment', `${RELEASE}-app`], {
        kubeconfig: kubeconfig(),
        namespace: ns,
      });
      expect(deployment.spec.template.metadata.labels.tier).toBeUndefined();
    });

    it('a StatefulSet under Pod Security restricted: named from its FailedCreate Event within --fail-fast-after (exit 4), the first install removed', async () => {
      const ns = await namespace(`refusedsts${major}`);
      await CASES[0]!.setUp(ns);
      const run = await installer(ns, valuesFile({ workload: 'StatefulSet' }), bin);
      process.stderr.write(
        `[figure] helm ${major}, a StatefulSet under Pod Security: installer exited ${run.exitCode} after ${run.seconds.toFixed(1)} s (fail-fast ${FAIL_FAST_S} s)\n`,
      );
      expect(run.exitCode, run.stderr).toBe(4);
      expect(run.stderr).toMatch(
        new RegExp(
          `^cause: install of release ${RELEASE} failed fast: the cluster refused to create the pods of StatefulSet/${RELEASE}-app for ${FAIL_FAST_S}s \\(pod-security\\), which waiting does not fix$`,
          'm',
        ),
      );
      // The StatefulSet controller's wrapping (`create Pod ... failed error: `) taken off.
      expect(run.stderr).toContain(
        `\nStatefulSet/${RELEASE}-app: FailedCreate: pods "${RELEASE}-app-0" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`,
      );
      for (const line of CASES[0]!.expected(ns)) expect(run.stderr).toMatch(new RegExp(`^ +${escape(line)}$`, 'm'));
      expect(await history(RELEASE, ns, bin)).toEqual([]);
      expect((await k(['get', 'statefulsets', '-o', 'name'], ns)).stdout).toBe('');
    });

    it('a StorageClass that does not exist: exit 3 before any change, naming the classes the cluster has; plain helm waits its timeout', async () => {
      const [ns, plainNs] = await Promise.all([namespace(`noclass${major}`), namespace(`plainsc${major}`)]);
      const values = valuesFile({ storageClass: 'no-such-class' });
      const [run, plain] = await Promise.all([installer(ns, values, bin), plainHelm(plainNs, values, bin)]);
      process.stderr.write(
        `[figure] helm ${major}, a StorageClass that does not exist: installer exited ${run.exitCode} after ${run.seconds.toFixed(1)} s; plain helm exited ${plain.exitCode} after ${plain.seconds.toFixed(1)} s (--timeout ${PLAIN_TIMEOUT_S}s): ${lastLine(plain.stderr).slice(0, 160)}\n`,
      );
      // What the cluster has, read here: names, the default marked.
      const classes = await getJson<{ items: any[] }>(['get', 'storageclasses'], { kubeconfig: kubeconfig() });
      const have = classes.items
        .map(
          (s) =>
            `${s.metadata.name}${s.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true' ? ' (default)' : ''}`,
        )
        .sort()
        .join(', ');
      expect(run.exitCode, run.stderr).toBe(3);
      expect(run.stderr).toContain('cause: the chart names classes the cluster does not have:\n');
      expect(run.stderr).toContain(
        `\n  StorageClass no-such-class (named by PersistentVolumeClaim/${RELEASE}-data) does not exist; the cluster has: ${have}\n`,
      );
      expect(run.stderr).toMatch(
        /^next: Set the chart's values to a class the cluster has \(values such as persistence.storageClass, storageClassName\)/m,
      );
      expect(logLines(run.stdout).some((l) => l.msg === 'running helm upgrade --install')).toBe(false);
      expect(await history(RELEASE, ns, bin)).toEqual([]);
      expect((await k(['get', 'deployments,persistentvolumeclaims', '-o', 'name'], ns)).stdout).toBe('');
      expect(plain.exitCode).not.toBe(0);
    });
  });
}
