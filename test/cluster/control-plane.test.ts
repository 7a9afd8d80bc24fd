// The local control plane behaves like a cluster where it matters to helm-installer's tests:
// pods become Ready, Jobs complete or fail, claims bind, impossible pods stay Pending.
// Each test works in its own namespace, so they run side by side.
import { afterAll, describe, inject, test } from 'vitest';
import {
  applyYaml,
  conditionOf,
  createNamespace,
  deleteNamespace,
  FAKE_NODE_NAME,
  getJson,
  KWOK_PHASE_ANNOTATION,
  kubectl,
  STORAGE_CLASS,
  waitFor,
  type KubectlOptions,
} from './kube.js';
import { REAL_NODE_NAME } from './real-node.js';
import { realNodeWanted } from './control-plane.js';

const kubeconfig = inject('kubeconfig');
const opts: KubectlOptions = { kubeconfig };
const namespaces: string[] = [];

async function namespace(prefix: string): Promise<KubectlOptions> {
  const ns = await createNamespace(prefix, opts);
  namespaces.push(ns);
  return { ...opts, namespace: ns };
}

afterAll(async () => {
  await Promise.all(namespaces.map((ns) => deleteNamespace(ns, opts)));
});

const container = { name: 'main', image: 'registry.invalid/app:1.0' };

function job(name: string, annotations: Record<string, string> = {}, extraSpec: object = {}): string {
  return JSON.stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      backoffLimit: 0,
      ...extraSpec,
      template: { metadata: { annotations }, spec: { restartPolicy: 'Never', containers: [container] } },
    },
  });
}

function deployment(name: string, podSpec: object = {}): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [container], ...podSpec } },
    },
  });
}

describe.concurrent('local control plane', () => {
  test('serves the pinned Kubernetes version (charts with a kubeVersion constraint need it)', async ({ expect }) => {
    const version = await getJson<{ serverVersion: { gitVersion: string; major: string; minor: string } }>(
      ['version'],
      opts,
    );
    expect(version.serverVersion).toMatchObject({ gitVersion: 'v1.34.4', major: '1', minor: '34' });
  });

  test('has one Ready, untainted fake node (and the tainted real node, see real-node.test.ts)', async ({ expect }) => {
    const nodes = await getJson<{ items: any[] }>(['get', 'nodes'], opts);
    expect(nodes.items.map((n) => n.metadata.name).sort()).toEqual(
      (realNodeWanted() ? [FAKE_NODE_NAME, REAL_NODE_NAME] : [FAKE_NODE_NAME]).sort(),
    );
    const node = nodes.items.find((n) => n.metadata.name === FAKE_NODE_NAME);
    expect(conditionOf(node, 'Ready')?.status).toBe('True');
    expect(node.spec.taints ?? []).toEqual([]);
    expect(node.metadata.annotations['kwok.x-k8s.io/node']).toBe('fake');
    expect(node.metadata.labels.type).toBe('kwok');
  });

  test("a Deployment's pod becomes Ready, and deleting the Deployment garbage-collects it", async ({ expect }) => {
    const ns = await namespace('deploy');
    await applyYaml(deployment('web'), ns);
    await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s'], ns);
    const pods = await getJson<{ items: any[] }>(['get', 'pods', '-l', 'app=web'], ns);
    expect(pods.items).toHaveLength(1);
    expect(pods.items[0].spec.nodeName).toBe(FAKE_NODE_NAME);
    expect(conditionOf(pods.items[0], 'Ready')?.status).toBe('True');

    await kubectl(['delete', 'deployment', 'web', '--wait=true', '--timeout=60s'], ns);
    await waitFor('ReplicaSet and pod garbage-collected', async () => {
      const left = await getJson<{ items: unknown[] }>(['get', 'replicasets,pods', '-l', 'app=web'], ns);
      return left.items.length === 0;
    });
  });

  test('a Job completes', async ({ expect }) => {
    const ns = await namespace('job-ok');
    await applyYaml(job('hook'), ns);
    await kubectl(['wait', 'job/hook', '--for=condition=Complete', '--timeout=60s'], ns);
    const done = await getJson(['get', 'job', 'hook'], ns);
    expect(done.status.succeeded).toBe(1);
  });

  test('a bare Pod with restartPolicy Never runs to completion (helm test and hook pods)', async () => {
    const ns = await namespace('bare');
    await applyYaml(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'test-connection' },
        spec: { restartPolicy: 'Never', containers: [container] },
      }),
      ns,
    );
    await kubectl(['wait', 'pod/test-connection', '--for=jsonpath={.status.phase}=Succeeded', '--timeout=60s'], ns);
  });

  test(`a Job whose pod is annotated ${KWOK_PHASE_ANNOTATION}: Failed fails, exit code 1`, async ({ expect }) => {
    const ns = await namespace('job-fail');
    await applyYaml(job('hook', { [KWOK_PHASE_ANNOTATION]: 'Failed' }), ns);
    await kubectl(['wait', 'job/hook', '--for=condition=Failed', '--timeout=60s'], ns);
    expect(conditionOf(await getJson(['get', 'job', 'hook'], ns), 'Failed')?.reason).toBe('BackoffLimitExceeded');
    const pods = await getJson<{ items: any[] }>(['get', 'pods', '-l', 'job-name=hook'], ns);
    expect(pods.items[0].status.phase).toBe('Failed');
    expect(pods.items[0].status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  });

  test('a podFailurePolicy FailJob rule on exit code 1 sees the failed pod', async ({ expect }) => {
    const ns = await namespace('job-pfp');
    const podFailurePolicy = {
      rules: [{ action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [1] } }],
    };
    await applyYaml(job('hook', { [KWOK_PHASE_ANNOTATION]: 'Failed' }, { backoffLimit: 6, podFailurePolicy }), ns);
    await kubectl(['wait', 'job/hook', '--for=condition=Failed', '--timeout=60s'], ns);
    expect(conditionOf(await getJson(['get', 'job', 'hook'], ns), 'Failed')?.reason).toBe('PodFailurePolicy');
  });

  test(`a Job pod annotated ${KWOK_PHASE_ANNOTATION}: Running keeps running`, async ({ expect }) => {
    const ns = await namespace('job-run');
    await applyYaml(job('hook', { [KWOK_PHASE_ANNOTATION]: 'Running' }), ns);
    await waitFor('job pod Running', async () => {
      const pods = await getJson<{ items: any[] }>(['get', 'pods', '-l', 'job-name=hook'], ns);
      return pods.items[0]?.status.phase === 'Running';
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const status = (await getJson(['get', 'job', 'hook'], ns)).status;
    expect(status.active).toBe(1);
    expect(status.succeeded ?? 0).toBe(0);
  });

  test('a StatefulSet with a volumeClaimTemplate gets its claim Bound and its pod Ready', async ({ expect }) => {
    const ns = await namespace('sts');
    await applyYaml(
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db' },
        spec: {
          serviceName: 'db',
          replicas: 1,
          selector: { matchLabels: { app: 'db' } },
          template: {
            metadata: { labels: { app: 'db' } },
            spec: { containers: [{ ...container, volumeMounts: [{ name: 'data', mountPath: '/data' }] }] },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: 'data' },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '8Gi' } } },
            },
          ],
        },
      }),
      ns,
    );
    await kubectl(['rollout', 'status', 'statefulset/db', '--timeout=90s'], ns);
    const pvc = await getJson(['get', 'pvc', 'data-db-0'], ns);
    expect(pvc.status.phase).toBe('Bound');
    expect(pvc.spec.storageClassName).toBe(STORAGE_CLASS);
    const pod = await getJson(['get', 'pod', 'db-0'], ns);
    expect(conditionOf(pod, 'Ready')?.status).toBe('True');
  });

  test('a released pool volume becomes Available again', async ({ expect }) => {
    const ns = await namespace('pv');
    await applyYaml(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'claim' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      }),
      ns,
    );
    const volume = await waitFor('claim Bound', async () => {
      const pvc = await getJson(['get', 'pvc', 'claim'], ns);
      return pvc.status.phase === 'Bound' && (pvc.spec.volumeName as string);
    });
    await kubectl(['delete', 'pvc', 'claim', '--wait=true', '--timeout=60s'], ns);
    await waitFor(
      `${volume} Available again`,
      async () => (await getJson(['get', 'pv', volume], opts)).status.phase === 'Available',
    );
    expect((await getJson(['get', 'pv', volume], opts)).spec.claimRef).toBeUndefined();
  });

  test('a Deployment with an impossible nodeSelector stays Pending, unschedulable', async ({ expect }) => {
    const ns = await namespace('unsched');
    await applyYaml(deployment('nowhere', { nodeSelector: { 'helm-installer.test/no-such-label': 'x' } }), ns);
    const pod = await waitFor('pod marked Unschedulable', async () => {
      const pods = await getJson<{ items: any[] }>(['get', 'pods', '-l', 'app=nowhere'], ns);
      const first = pods.items[0];
      return first && conditionOf(first, 'PodScheduled')?.reason === 'Unschedulable' ? first : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const again = await getJson(['get', 'pod', pod.metadata.name], ns);
    expect(again.status.phase).toBe('Pending');
    expect(again.spec.nodeName).toBeUndefined();
  });
});
