// The real node runs what it is given: an image pushed to the loopback registry is pulled by
// containerd and run by the kubelet (logs, exit code, termination message reach the API), a
// missing image is a real ErrImagePull, and cluster:down leaves no process, container or mount.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, inject, test } from 'vitest';
import {
  applyYaml,
  conditionOf,
  createNamespace,
  deleteNamespace,
  getJson,
  kubectl,
  waitFor,
  type KubectlOptions,
} from './kube.js';
import { binaryPaths, cacheRoot, pinnedVersions, repoRoot } from './paths.js';
import { findProcesses, mountsUnder, REAL_NODE_KEY, REAL_NODE_NAME, realNodePlacement } from './real-node.js';
import { pushStaticImage, staticBinary } from './static-image.js';

const kubeconfig = inject('kubeconfig');
const registry = inject('registry');
const apiServerPort = inject('apiServerPort');
const opts: KubectlOptions = { kubeconfig };
const namespaces: string[] = [];

afterAll(async () => {
  await Promise.all(namespaces.map((ns) => deleteNamespace(ns, opts)));
});

/** Prints a line, writes a termination message, exits with the code given as its argument. */
const HELLO_SOURCE = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  printf("hello from the real node\\n");
  fflush(stdout);
  FILE *f = fopen("/dev/termination-log", "w");
  if (f) { fputs("hello: finished", f); fclose(f); }
  return argc > 1 ? atoi(argv[1]) : 0;
}
`;

function pod(name: string, image: string, args: string[], port = apiServerPort): string {
  const { env, ...placement } = realNodePlacement(port);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { ...placement, restartPolicy: 'Never', containers: [{ name: 'main', image, args, env }] },
  });
}

async function terminated(name: string, o: KubectlOptions): Promise<any> {
  return waitFor(
    `pod ${name} terminated`,
    async () => {
      const p = await getJson(['get', 'pod', name], o);
      return ['Succeeded', 'Failed'].includes(p.status?.phase) && p.status.containerStatuses?.[0]?.state?.terminated
        ? p
        : undefined;
    },
    { timeoutMs: 120_000 },
  );
}

describe.concurrent('the real node', () => {
  test('is Ready, labelled and tainted so that only pods that ask land there', async ({ expect }) => {
    const node = await getJson(['get', 'node', REAL_NODE_NAME], opts);
    expect(conditionOf(node, 'Ready')?.status).toBe('True');
    expect(node.metadata.labels[REAL_NODE_KEY]).toBe('true');
    expect(node.spec.taints).toContainEqual({ key: REAL_NODE_KEY, value: 'true', effect: 'NoSchedule' });
    expect(node.metadata.annotations?.['kwok.x-k8s.io/node']).toBeUndefined();
  });

  test('runs an image pushed to the loopback registry: logs, exit code and termination message reach the API', async ({
    expect,
  }) => {
    const ns = { ...opts, namespace: await createNamespace('real-run', opts) };
    namespaces.push(ns.namespace!);
    const tag = randomBytes(4).toString('hex');
    const image = await pushStaticImage(registry, 'test/hello', tag, await staticBinary(HELLO_SOURCE));
    expect(image.reference).toBe(`${registry}/test/hello:${tag}`);
    await applyYaml(pod('hello', image.reference, ['3']), ns);
    const done = await terminated('hello', ns);
    expect(done.spec.nodeName).toBe(REAL_NODE_NAME);
    expect(done.status.phase).toBe('Failed');
    const state = done.status.containerStatuses[0];
    expect(state.state.terminated).toMatchObject({ exitCode: 3, message: 'hello: finished' });
    expect(state.imageID).toBe(`${registry}/test/hello@${image.digest}`);
    const logs = await kubectl(['logs', 'hello'], ns);
    expect(logs.stdout).toBe('hello from the real node\n');
  });

  test('a missing image is a real ErrImagePull naming the image', async ({ expect }) => {
    const ns = { ...opts, namespace: await createNamespace('real-pull', opts) };
    namespaces.push(ns.namespace!);
    const missing = `${registry}/test/not-pushed:${randomBytes(4).toString('hex')}`;
    await applyYaml(pod('missing', missing, []), ns);
    const waiting = await waitFor(
      'ErrImagePull or ImagePullBackOff',
      async () => {
        const p = await getJson(['get', 'pod', 'missing'], ns);
        const w = p.status?.containerStatuses?.[0]?.state?.waiting;
        return w && ['ErrImagePull', 'ImagePullBackOff'].includes(w.reason) ? w : undefined;
      },
      { timeoutMs: 90_000 },
    );
    const events = await kubectl(
      [
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=missing,reason=Failed',
        '-o',
        'jsonpath={.items[*].message}',
      ],
      ns,
    );
    expect(events.stdout).toContain(`Failed to pull image "${missing}"`);
    expect(events.stdout).toMatch(/not found/);
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(waiting.reason);
  });
});

function mountedFrom(pid: number, root: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/mountinfo`, 'utf8').includes(root);
  } catch {
    return false;
  }
}

describe('cluster:down', () => {
  // A cluster of its own (own cache root, the shared binaries linked in), so the shared one stays.
  test('stops a cluster whose real node ran a pod and leaves no process, container or mount behind', async ({
    expect,
  }) => {
    const root = mkdtempSync(join(tmpdir(), 'hi-down-'));
    try {
      const bins = binaryPaths(pinnedVersions());
      symlinkSync(join(cacheRoot(), 'bin'), join(root, 'bin'));
      symlinkSync(bins.kwokStages, join(root, bins.kwokStages.split('/').pop()!));
      mkdirSync(join(root, 'static-programs'));
      const env = { ...process.env, HELM_INSTALLER_CACHE: root };
      const cli = join(repoRoot(), 'dist', 'test', 'cluster', 'cli.js');
      const up = await execa(process.execPath, [cli, 'up'], { env, reject: false, timeout: 300_000 });
      expect(up.exitCode, up.stderr).toBe(0);
      const own: KubectlOptions = { kubeconfig: up.stdout.trim().split('\n').pop()!, namespace: 'default' };
      const ownRegistry = /its registry: (127\.0\.0\.1:\d+)/.exec(up.stderr)![1]!;
      const ownPort = Number(/started: https:\/\/127\.0\.0\.1:(\d+)/.exec(up.stderr)![1]);
      const image = await pushStaticImage(ownRegistry, 'test/hello', 'down', await staticBinary(HELLO_SOURCE));
      await applyYaml(pod('before-down', image.reference, ['0'], ownPort), own);
      await terminated('before-down', own);
      // The sandbox (pause) container still runs, with its mounts, until the node goes.
      expect(mountsUnder(root).length).toBeGreaterThan(0);
      expect(findProcesses((argv) => argv.some((a) => a.includes(root))).length).toBeGreaterThan(0);

      const down = await execa(process.execPath, [cli, 'down'], { env, reject: false, timeout: 120_000 });
      expect(down.exitCode, down.stderr).toBe(0);
      expect(mountsUnder(root)).toEqual([]);
      expect(findProcesses((argv) => argv.some((a) => a.includes(root)))).toEqual([]);
      // A container's own processes name no path of ours, but their root is an overlay of our layers.
      expect(findProcesses(() => true).filter((pid) => mountedFrom(pid, root))).toEqual([]);
      expect(existsSync(join(root, 'cluster'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
