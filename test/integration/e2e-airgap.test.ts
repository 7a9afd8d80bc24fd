// End to end, airgapped, in one test: the installer image built from the Dockerfile and pushed to
// the local registry under the name KOTS rewrites it to, the chart's images pushed there as KOTS
// pushes an airgap bundle, kots/ rendered by KOTS's engine for that registry, the rendered
// manifests applied, and the Job pulled and run by the real kubelet, its preflight finding every
// image, installing the chart with every image pointing at the local registry.
import { execa } from 'execa';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { createNamespace, deleteNamespace, getJson, kubectl } from '../cluster/kube.js';
import { statePaths } from '../cluster/paths.js';
import { REAL_NODE_NAME } from '../cluster/real-node.js';
import { buildah } from '../image/buildah.js';
import { buildImage, pushImage } from '../image/image-build.js';
import { runCli } from '../helpers.js';
import { pushTestImage } from '../images/registry.js';
import { history } from './cluster-helpers.js';
import { finishedJob, jobPods, onRealNode, ranDigest, registryDigest, terminatedOf } from './job-helpers.js';
import { kotsRender } from './kots-render.js';

const kubeconfig = inject('kubeconfig');
const registryHost = inject('registry');
const apiServerPort = inject('apiServerPort');
const registry = { url: `http://${registryHost}`, host: registryHost, stop: async () => undefined };
const namespaces: string[] = [];

afterAll(async () => {
  for (const ns of namespaces) {
    await deleteNamespace(ns, { kubeconfig });
    // kots/ names its cluster-scoped RBAC after the namespace: gone with it, not left behind.
    for (const kind of ['clusterrolebinding', 'clusterrole'])
      await kubectl(['delete', kind, `storefront-installer-crds-${ns}`, '--ignore-not-found'], { kubeconfig });
  }
});

function jsonLine(line: string): any {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

describe('airgap, end to end', () => {
  it('KOTS-rendered manifests: the installer image and the chart images come from the local registry, the Job runs on the real node and installs', async () => {
    const ns = await createNamespace('e2e-airgap', { kubeconfig });
    namespaces.push(ns);
    const local = `${registryHost}/acme`;

    // The installer image, built and pushed as KOTS's LocalImageName will name it. The node first
    // holds an earlier build under the same tag (a vendor rebuilt 1.4.0 with a fix): the Job's
    // imagePullPolicy must make the kubelet run the build the registry has now, not its cached one.
    const built = await buildImage({ log: () => undefined, registry: registryHost, quietBuild: true });
    const installerImage = `${local}/storefront-installer:1.4.0`;
    const working = await buildah(['from', '--pull=false', built.imageId]);
    await buildah(['config', '--label', 'org.opencontainers.image.revision=earlier-build', working]);
    const earlier = await buildah(['commit', '--quiet', '--format', 'oci', working]);
    await buildah(['rm', working]);
    await pushImage(earlier, installerImage);
    const earlierDigest = await registryDigest(installerImage);
    await execa('ctr', [
      '--address',
      statePaths().node.containerdSocket,
      '-n',
      'k8s.io',
      'images',
      'pull',
      '--plain-http',
      installerImage,
    ]);
    await buildah(['rmi', earlier]).catch(() => undefined); // the node and the registry keep it
    await pushImage(built.imageId, installerImage);
    const builtDigest = await registryDigest(installerImage);
    expect(builtDigest).not.toBe(earlierDigest);

    // The chart's images, as `images --registry` lists them; the CronJob's, pinned by digest in the
    // chart, is pinned to what we push through the Config screen's values override.
    const digest = await pushTestImage(registry, 'acme/alpine', 'pinned');
    const listed = await runCli([
      'images',
      '--registry',
      local,
      '--image-path',
      'Promotion:spec.image',
      '--set',
      `storefront:report.image.digest=${digest}`,
    ]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    // The app's release plan: one reference a line, nothing else (`--format json` names the releases).
    const chartImages = listed.stdout.trim().split('\n');
    for (const image of chartImages) {
      const m = /^[^/]+\/(.+?)(?::([^:@/]+))?(?:@sha256:[0-9a-f]+)?$/.exec(image)!;
      if (m[2]) await pushTestImage(registry, m[1]!, m[2]);
    }

    const rendered = await kotsRender({
      namespace: ns,
      sequence: 7,
      airgap: true,
      registry: { host: registryHost, namespace: 'acme', username: 'kots', password: 'pull-pass' },
      values: {
        database_password: { valuePlaintext: 'e2e-pw' },
        values_override: { value: stringify({ report: { image: { digest } } }) },
      },
    });
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    expect(rendered.dropped).toEqual([]);
    const docs = rendered.documents.map((d) => parse(d.content) as any);
    const job = docs.find((d) => d.kind === 'Job');
    expect(job.spec.template.spec.containers[0].image).toBe(installerImage);
    const applied = docs
      .map((d) => (d.kind === 'Job' ? onRealNode(d, apiServerPort) : d))
      .filter((d) => d.apiVersion?.startsWith('kots.io') !== true && d.kind !== 'Application');
    await kubectl(['apply', '-f', '-'], {
      kubeconfig,
      namespace: ns,
      input: applied.map((d) => stringify(d)).join('---\n'),
    });

    const o = { kubeconfig, namespace: ns };
    const done = await finishedJob(job.metadata.name, o);
    const [pod] = await jobPods(job.metadata.name, o);
    const logs = (await kubectl(['logs', pod.metadata.name], o)).stdout;
    expect(terminatedOf(pod)?.exitCode, `${terminatedOf(pod)?.message}\n${logs.slice(-3000)}`).toBe(0);
    expect(done.status.conditions.find((c: any) => c.type === 'Complete')?.status).toBe('True');
    expect(pod.spec.nodeName).toBe(REAL_NODE_NAME);
    // Pulled from the local registry: the kubelet reports the digest it pulled by that name.
    expect(pod.spec.containers[0].image).toBe(installerImage);
    expect(ranDigest(pod)).toBe(builtDigest);
    // One preflight per release of the app's plan, each finding every image that release needs.
    const preflights = logs
      .split('\n')
      .map(jsonLine)
      .filter((l) => l?.msg === 'registry preflight');
    expect(Object.fromEntries(preflights.map((l) => [l.releaseKey, [l.registry, l.present, l.missing]]))).toEqual({
      [`${ns}/promotions-operator`]: [local, 1, 0],
      [`${ns}/storefront`]: [local, 6, 0],
      [`${ns}/storefront-cache`]: [local, 2, 0],
    });
    expect(chartImages).toHaveLength(8);

    for (const name of ['promotions-operator', 'storefront', 'storefront-cache'])
      expect(
        (await history(name, ns)).map((h) => h.status),
        name,
      ).toEqual(['deployed']);
    const web = await getJson(['get', 'deployment', 'storefront-web'], o);
    expect(web.spec.template.spec.containers.map((c: any) => c.image)).toEqual([`${local}/storefront-web:2.3.1`]);
    const cron = await getJson(['get', 'cronjob', 'storefront-report'], o);
    expect(cron.spec.jobTemplate.spec.template.spec.containers[0].image).toBe(`${local}/alpine@${digest}`);
    for (const image of chartImages) expect(image.startsWith(`${local}/`)).toBe(true);
  });
});
