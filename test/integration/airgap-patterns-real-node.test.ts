// Airgap patterns of public charts (issue 31) installed with `install --registry` on the real
// node, helm 4 and helm 3, where the kubelet pulls from the local registry:
// - an image an app names in its own Secret, for pods it starts itself (a notebook hub's values
//   file: the user pod's image as name and tag keys): preflighted with the chart's own images,
//   and a pod started from what the installed Secret names (as the hub's spawner does) pulls;
// - label selectors in env values beside an image (a chaos-engineering operator): the
//   controller's pod pulls, its selectors reach it as written, the image it starts is local.
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { getJson, kubectl } from '../cluster/kube.js';
import { REAL_NODE_KEY, REAL_NODE_NAME } from '../cluster/real-node.js';
import { pushStaticImage, staticBinary } from '../cluster/static-image.js';
import { helm3, helm4, repoRoot } from '../helpers.js';
import { install, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'notebook-hub');
const selectorsChart = join(repoRoot, 'test', 'fixtures', 'charts', 'label-selectors');
const registry = inject('registry');
const newNamespace = namespacesDeletedAfterAll();
const opts = (ns: string) => ({ kubeconfig: kubeconfig(), namespace: ns });

const SLEEP_SOURCE = `#include <signal.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; _exit(0); }
int main(void) {
  signal(SIGTERM, quit);
  signal(SIGINT, quit);
  for (;;) pause();
}
`;

async function running(ns: string, selector: string[]): Promise<any> {
  await kubectl(['wait', '--for=condition=Ready', '--timeout=120s', ...selector], { ...opts(ns), timeoutMs: 130_000 });
  return getJson(['get', ...selector], opts(ns));
}

describe.each([
  ['helm 4', helm4],
  ['helm 3', helm3],
])('airgap patterns on the real node, %s', (_name, helmBin) => {
  it('an image named in a Secret: install --registry rewrites it there, and a pod started from it pulls from the local registry', async () => {
    const ns = await newNamespace('secret-image');
    const local = `${registry}/acme`;
    const bin = await staticBinary(SLEEP_SOURCE);
    // The airgap bundle, pushed where KOTS pushes it: the chart's image and the ones the Secret names.
    for (const name of ['k8s-hub', 'k8s-singleuser-sample', 'k8s-network-tools', 'configurable-http-proxy'])
      await pushStaticImage(registry, `acme/${name}`, name === 'configurable-http-proxy' ? '4.6.3' : '4.0.0', bin);
    const r = await install(
      'hub',
      ns,
      ['--chart', chart, '--set', 'realNode=true', '--set', 'unreadSecret=false', '--registry', local],
      { HELM_BIN: helmBin },
    );
    expect(r.exitCode, r.stderr).toBe(0);

    const hub = await running(ns, ['pod', '-l', 'app=hub']);
    const pod = hub.items[0];
    expect([pod.spec.nodeName, pod.spec.containers[0].image]).toEqual([REAL_NODE_NAME, `${local}/k8s-hub:4.0.0`]);

    // What the hub reads when it starts a user's pod: the name and the tag, as installed.
    const secret = await getJson(['get', 'secret', 'hub-hub'], opts(ns));
    const values = parse(Buffer.from(secret.data['values.yaml'], 'base64').toString());
    const image = `${values.singleuser.image.name}:${values.singleuser.image.tag}`;
    expect(image).toBe(`${local}/k8s-singleuser-sample:4.0.0`);
    const userPod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'jupyter-user', labels: { app: 'user' } },
      spec: {
        nodeSelector: { [REAL_NODE_KEY]: 'true' },
        tolerations: [{ key: REAL_NODE_KEY, operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
        hostNetwork: true,
        containers: [{ name: 'notebook', image }],
      },
    };
    await kubectl(['apply', '-f', '-'], { ...opts(ns), input: JSON.stringify(userPod) });
    const user = await running(ns, ['pod', 'jupyter-user']);
    expect(user.status.containerStatuses[0].imageID).toContain('sha256:');
  });

  it('install --registry leaves label selectors in env values as written, and the controller pulls from the local registry', async () => {
    const ns = await newNamespace('label-selectors');
    const local = `${registry}/acme`;
    const bin = await staticBinary(SLEEP_SOURCE);
    for (const name of ['chaos-controller', 'chaos-daemon'])
      await pushStaticImage(registry, `acme/${name}`, '2.7.1', bin);
    const r = await install('chaos', ns, ['--chart', selectorsChart, '--set', 'realNode=true', '--registry', local], {
      HELM_BIN: helmBin,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const pod = (await running(ns, ['pod', '-l', 'app.kubernetes.io/component=controller-manager'])).items[0];
    expect([pod.spec.nodeName, pod.spec.containers[0].image]).toEqual([
      REAL_NODE_NAME,
      `${local}/chaos-controller:2.7.1`,
    ]);
    const env = Object.fromEntries(
      pod.spec.containers[0].env.map((e: { name: string; value: string }) => [e.name, e.value]),
    );
    expect(env).toEqual({
      TEMPLATE_LABELS: 'app.kubernetes.io/component:template',
      CONFIGMAP_LABELS: 'app.kubernetes.io/component:webhook',
      TARGET_NAMESPACE_SELECTOR: 'example.com/chaos:enabled',
      DAEMON_IMAGE: `${local}/chaos-daemon:2.7.1`,
    });
    expect(pod.spec.containers[0].args).toEqual(['--selector=app.kubernetes.io/component:webhook']);
  });
});
