// The test of record for airgap on real-world chart patterns (issue 7). Each fixture chart under
// test/fixtures/charts reproduces one pattern seen in public charts. Through the built CLI and the
// real helm 4 AND helm 3:
// - `render --registry` leaves no image reference (field, flag, env value, ConfigMap data)
//   outside the exact KOTS names of the images the chart deploys;
// - `images` lists every one (as the chart names it), `images --registry` their KOTS names.
// The expected names are written here by hand from the fixtures, and the rendered output is
// scanned by a pattern of this file, not by the code under test.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { helm3, helm4, repoRoot, runCli } from '../helpers.js';

const REGISTRY = 'registry.local:5000/acme';
const L = REGISTRY;
const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);
const charts = join(repoRoot, 'test/fixtures/charts');

interface Fixture {
  /** The images the chart deploys, as `images` lists them (first spelling, sorted). */
  images: string[];
  /** Their exact KOTS names. */
  local: string[];
  /** Images that only the chart annotation names (not in the manifests). */
  annotationOnly?: string[];
  /** Lines `images` and `render --registry` must warn with (registry-only settings). */
  warnings?: RegExp[];
  /** What neither may warn about (settings that are no reference). */
  noWarnings?: RegExp[];
  /** Bare names under an `image` key that an operator joins with a reported registry at run time. */
  nameComponents?: string[];
  /** Local names written without a tag (the tag sits in another key): they must stay without one. */
  untagged?: string[];
  /** Strings shaped like references that are not images (labels, selectors): kept as written. */
  notImages?: string[];
  /** Local names written only inside a Secret's base64 data (checked decoded, by their own test). */
  inSecrets?: string[];
}

// How the expectations below mark an OCI artifact the app pulls at run time: the KOTS block's
// comment; `--format list` prints the reference alone, `--format json` says `artifact: true`.
const ARTIFACT = ' # OCI artifact';
const referenceOf = (line: string) => line.replace(ARTIFACT, '');

const FIXTURES: Record<string, Fixture> = {
  'image-verify': {
    images: ['docker.io/bitnami/redis-exporter:1.67.0', 'docker.io/bitnami/redis:7.4.2'],
    local: [`${L}/redis-exporter:1.67.0`, `${L}/redis:7.4.2`],
  },
  'operator-flags': {
    images: [
      'busybox:1.36',
      'docker.mirror.hashicorp.services/hashicorppreview/consul-dataplane:1.6.1',
      'hashicorp/consul-k8s-control-plane:1.6.1',
      'hashicorp/consul:1.20.2',
      'quay.io/jetstack/cert-manager-acmesolver:v1.17.0',
      'quay.io/mongodb/mongodb-agent-ubi:108.0.6.8796-1',
      'quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0',
      'quay.io/prometheus-operator/prometheus-operator:v0.81.0',
      'quay.io/strimzi/kafka:0.45.0-kafka-3.9.0',
      'quay.io/strimzi/kafka:0.45.0-kafka-3.9.1',
      'quay.io/thanos/thanos:v0.37.2',
    ],
    local: [
      `${L}/busybox:1.36`,
      `${L}/cert-manager-acmesolver:v1.17.0`,
      `${L}/consul-dataplane:1.6.1`,
      `${L}/consul-k8s-control-plane:1.6.1`,
      `${L}/consul:1.20.2`,
      `${L}/kafka:0.45.0-kafka-3.9.0`,
      `${L}/kafka:0.45.0-kafka-3.9.1`,
      `${L}/mongodb-agent-ubi:108.0.6.8796-1`,
      `${L}/prometheus-config-reloader:v0.81.0`,
      `${L}/prometheus-operator:v0.81.0`,
      `${L}/thanos:v0.37.2`,
    ],
  },
  'bare-name-tag': {
    images: ['docker.io/istio/pilot:1.24.2', 'docker.io/istio/proxyv2:1.24.2'],
    local: [`${L}/pilot:1.24.2`, `${L}/proxyv2:1.24.2`],
    warnings: [/ConfigMap bare-name-tag-values, data\.values \(hub\) = docker\.io\/istio/],
    // The injector's values hold `"image": "proxyv2"` beside the hub it is joined with: not a
    // reference on its own, and the hub is what the warning above reports.
    nameComponents: ['proxyv2'],
  },
  'multi-segment-global': {
    images: [
      'longhornio/csi-attacher:v4.8.0',
      'longhornio/longhorn-engine:v1.8.0',
      'longhornio/longhorn-manager:v1.8.0',
    ],
    local: [`${L}/csi-attacher:v4.8.0`, `${L}/longhorn-engine:v1.8.0`, `${L}/longhorn-manager:v1.8.0`],
  },
  'configmap-images': {
    images: [
      'quay.io/acme/agent:2.1.0',
      'registry.k8s.io/pause:3.10',
      'registry.k8s.io/sig-storage/csi-attacher:v4.8.0',
      'registry.k8s.io/sig-storage/csi-provisioner:v5.1.0',
      'registry.k8s.io/sig-storage/hostpathplugin:v1.15.0',
      'registry.k8s.io/sig-storage/livenessprobe:v2.15.0',
    ],
    local: [
      `${L}/agent:2.1.0`,
      `${L}/csi-attacher:v4.8.0`,
      `${L}/csi-provisioner:v5.1.0`,
      `${L}/hostpathplugin:v1.15.0`,
      `${L}/livenessprobe:v2.15.0`,
      `${L}/pause:3.10`,
    ],
  },
  'label-selectors': {
    images: ['ghcr.io/acme/chaos-controller:2.7.1', 'ghcr.io/acme/chaos-daemon:2.7.1'],
    local: [`${L}/chaos-controller:2.7.1`, `${L}/chaos-daemon:2.7.1`],
    notImages: [
      'app.kubernetes.io/component:template',
      'app.kubernetes.io/component:webhook',
      'example.com/chaos:enabled',
      'node-role.kubernetes.io/control-plane:NoSchedule',
    ],
  },
  'notebook-hub': {
    images: [
      'quay.io/jupyterhub/configurable-http-proxy:4.6.3',
      'quay.io/jupyterhub/k8s-hub:4.0.0',
      'quay.io/jupyterhub/k8s-network-tools:4.0.0',
      'quay.io/jupyterhub/k8s-singleuser-sample:4.0.0',
    ],
    local: [
      `${L}/configurable-http-proxy:4.6.3`,
      `${L}/k8s-hub:4.0.0`,
      `${L}/k8s-network-tools:4.0.0`,
      `${L}/k8s-singleuser-sample:4.0.0`,
    ],
    inSecrets: [
      `${L}/configurable-http-proxy:4.6.3`,
      `${L}/k8s-network-tools:4.0.0`,
      `${L}/k8s-singleuser-sample:4.0.0`,
    ],
    warnings: [
      /Secret notebook-hub-unread, data\.notes, from notebook-hub\/templates\/hub\.yaml: not valid base64; left untouched/,
      /Secret notebook-hub-unread, data\.broken\.yaml, from notebook-hub\/templates\/hub\.yaml: its values file does not parse \(.*\); left untouched/,
    ],
    noWarnings: [/spawner_class|KubeSpawner|notebook-hub-hub/],
  },
  'secret-image-map': {
    images: [
      'ghcr.io/acme/job-helper:1.0.1',
      'ghcr.io/acme/runner-controller:3.2.0',
      'quay.io/acme/ci/job-runner:3.2.0',
    ],
    local: [`${L}/job-helper:1.0.1`, `${L}/job-runner:3.2.0`, `${L}/runner-controller:3.2.0`],
    // Written as a registry key and a repository key: never whole, in the Secret or elsewhere.
    inSecrets: [`${L}/job-helper:1.0.1`, `${L}/job-runner:3.2.0`],
  },
  'registry-only': {
    images: ['docker.elastic.co/eck/eck-operator:2.16.0'],
    local: [`${L}/eck-operator:2.16.0`],
    warnings: [
      /ConfigMap registry-only-config, data\.eck\.yaml \(container-registry\) = docker\.elastic\.co, from registry-only\/templates\/operator\.yaml/,
      /StatefulSet registry-only-operator, spec\.template\.spec\.containers\[0\]\.env\[0\]\.value \(env MONGODB_REPO_URL\) = docker\.io\/mongodb/,
      /ClusterPolicy registry-only-gpu, spec\.driver\.repository \(repository\) = nvcr\.io\/nvidia, from registry-only\/templates\/operator\.yaml/,
      /ClusterPolicy registry-only-gpu, spec\.toolkit\.repository \(repository\) = nvcr\.io\/nvidia\/k8s, from registry-only\/templates\/operator\.yaml/,
      /StatefulSet registry-only-operator, spec\.template\.spec\.containers\[0\]\.env\[2\]\.value \(env CONNECTOR_IMAGE_REGISTRY\) is empty, from registry-only\/templates\/operator\.yaml: the workload pulls images from its default registry \(Docker Hub\) at run time/,
      /ConfigMap registry-only-env, data\.JOB_KUBE_CONNECTOR_IMAGE_REGISTRY \(JOB_KUBE_CONNECTOR_IMAGE_REGISTRY\) is empty, from registry-only\/templates\/operator\.yaml: the workload pulls images from its default registry \(Docker Hub\) at run time/,
    ],
    noWarnings: [/spawner_class|KubeSpawner|authenticator_class|data\.registry|CONNECTOR_REGISTRY_SEED_PROVIDER/],
    // The ClusterPolicy's names, joined with the reported registries by the operator.
    nameComponents: ['driver', 'container-toolkit'],
  },
  'custom-kind': {
    images: [
      'argoproj/rollouts-demo:blue',
      'ghcr.io/acme/init:0.3.1',
      'ghcr.io/zalando/postgres-operator/logical-backup:v1.14.0',
      'ghcr.io/zalando/spilo-17:4.0-p2',
      'quay.io/acme/task-runner:5.0.1',
      'quay.io/prometheus/prometheus:v3.1.0',
      'registry.opensource.zalan.do/acid/pgbouncer:master-32',
    ],
    local: [
      `${L}/init:0.3.1`,
      `${L}/logical-backup:v1.14.0`,
      `${L}/pgbouncer:master-32`,
      `${L}/prometheus:v3.1.0`,
      `${L}/rollouts-demo:blue`,
      `${L}/spilo-17:4.0-p2`,
      `${L}/task-runner:5.0.1`,
    ],
  },
  'kind-list': {
    images: ['ghcr.io/acme/seed:1.0.0', 'nginx:1.27.3'],
    local: [`${L}/nginx:1.27.3`, `${L}/seed:1.0.0`],
  },
  'images-annotation': {
    images: ['ghcr.io/acme/app:3.2.1', 'ghcr.io/acme/worker:3.2.1'],
    local: [`${L}/app:3.2.1`, `${L}/worker:3.2.1`],
    annotationOnly: [`${L}/worker:3.2.1`],
  },
  'tag-digest': {
    images: [`docker.io/library/envoy:v1.33.0@sha256:${B}`, `ghcr.io/acme/api:1.4.0@sha256:${A}`],
    // KOTS keeps only the digest of a tag+digest reference.
    local: [`${L}/api@sha256:${A}`, `${L}/envoy@sha256:${B}`],
  },
  'global-image-registry': {
    images: [
      `registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:${A}`,
      `registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.6.9@sha256:${B}`,
    ],
    local: [`${L}/controller@sha256:${A}`, `${L}/kube-webhook-certgen@sha256:${B}`],
  },
  'registry-namespace': {
    images: [
      'quay.io/jetstack/cert-manager-acmesolver:v1.19.1',
      'quay.io/jetstack/cert-manager-controller:v1.19.1',
      'quay.io/jetstack/cert-manager-startupapicheck:v1.19.1',
    ],
    local: [
      `${L}/cert-manager-acmesolver:v1.19.1`,
      `${L}/cert-manager-controller:v1.19.1`,
      `${L}/cert-manager-startupapicheck:v1.19.1`,
    ],
  },
  'hook-image': {
    images: ['docker.io/bats/bats:v1.11.1', 'docker.io/bitnami/kubectl:1.33.0', 'docker.io/bitnami/postgresql:17.2.0'],
    local: [`${L}/bats:v1.11.1`, `${L}/kubectl:1.33.0`, `${L}/postgresql:17.2.0`],
  },
  // Issue 21, item 7: three patterns of public charts outside the corpus.
  // A flag and an env value naming the image a container runs as published elsewhere
  // (acme/ingest:3.1.0 beside quay.io/acme/ingest:3.1.0): not an image of its own.
  'image-name-label': {
    images: ['quay.io/acme/ingest:3.1.0', 'quay.io/acme/relay:1.0.0'],
    local: [`${L}/ingest:3.1.0`, `${L}/relay:1.0.0`],
  },
  // The chart's values in a ConfigMap, each image's tag in another key: the name is not an image
  // of its own and stays without a tag.
  'values-configmap': {
    images: ['ghcr.io/acme/collector:2.4.1', 'ghcr.io/acme/exporter:0.7.0'],
    local: [`${L}/collector:2.4.1`, `${L}/exporter:0.7.0`],
    untagged: [`${L}/collector`, `${L}/exporter`],
  },
  // Plugins, rule bundles and a chart the gateway pulls at run time, named in a ConfigMap.
  'runtime-artifacts': {
    images: [
      `ghcr.io/acme/charts/addon:0.3.0${ARTIFACT}`,
      'ghcr.io/acme/gateway:5.2.0',
      `ghcr.io/acme/plugins/auth@sha256:${C}${ARTIFACT}`,
      `ghcr.io/acme/plugins/geoip:1.4.0${ARTIFACT}`,
      `ghcr.io/acme/plugins/ratelimit:0.9.2${ARTIFACT}`,
      `ghcr.io/acme/rules/bots:2025.10${ARTIFACT}`,
      `ghcr.io/acme/rules/core:2025.11${ARTIFACT}`,
      'quay.io/acme/warmup:1.1.0',
    ],
    local: [
      `${L}/addon:0.3.0${ARTIFACT}`,
      `${L}/auth@sha256:${C}${ARTIFACT}`,
      `${L}/bots:2025.10${ARTIFACT}`,
      `${L}/core:2025.11${ARTIFACT}`,
      `${L}/gateway:5.2.0`,
      `${L}/geoip:1.4.0${ARTIFACT}`,
      `${L}/ratelimit:0.9.2${ARTIFACT}`,
      `${L}/warmup:1.1.0`,
    ],
  },
};

// Any reference with a registry host and a tag or digest, anywhere in the text (fields, flags,
// env values, ConfigMap data, JSON), the same after `oci://`, plus the value of every `image:` key.
const HOSTED =
  /(?<![\w.@/-])((?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d+)?\/[a-z0-9._/-]+(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?)/g;
const OCI =
  /oci:\/\/((?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d+)?\/[a-z0-9._/-]+(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?)/g;
const IMAGE_KEY = /^[ \t-]*["']?image["']?:[ \t]*["']?([^\s"',]+)/gm;
const KOTS_LOCAL = new RegExp(
  `^${REGISTRY.replaceAll('.', '\\.')}/[a-z0-9._-]+(?::[\\w][\\w.-]*|@sha256:[0-9a-f]{64})$`,
);

function referencesIn(text: string): Set<string> {
  const found = new Set<string>();
  for (const m of [...text.matchAll(HOSTED), ...text.matchAll(OCI)]) {
    const ref = m[1]!;
    if (/:[\w][\w.-]*$/.test(ref.replace(/^[^/]*\//, '')) || ref.includes('@sha256:')) found.add(ref);
  }
  for (const m of text.matchAll(IMAGE_KEY)) {
    if (!m[1]!.startsWith('{')) found.add(m[1]!);
  }
  return found;
}

const lines = (s: string) => s.trim().split('\n').filter(Boolean);

describe.each([
  ['helm 4', helm4],
  ['helm 3', helm3],
])('airgap on real-world patterns, %s', (_name, helmBin) => {
  const env = { HELM_BIN: helmBin };

  describe.each(Object.entries(FIXTURES))('%s', (chart, fixture) => {
    const args = ['--chart', join(charts, chart)];

    it('images lists every image the chart deploys, and with --registry their exact KOTS names', async () => {
      const listed = await runCli(['images', ...args], { env });
      expect(listed.exitCode, listed.stderr).toBe(0);
      expect(lines(listed.stdout)).toEqual(fixture.images.map(referenceOf));
      const local = await runCli(['images', ...args, '--registry', REGISTRY], { env });
      expect(local.exitCode, local.stderr).toBe(0);
      expect(lines(local.stdout)).toEqual(fixture.local.map(referenceOf));
      for (const warning of fixture.warnings ?? []) expect(local.stderr).toMatch(warning);
      for (const warning of fixture.noWarnings ?? []) expect(local.stderr).not.toMatch(warning);
      // The JSON form: the same references in the same order, artifacts told apart.
      const json = await runCli(['images', ...args, '--registry', REGISTRY, '--format', 'json'], { env });
      expect(json.exitCode, json.stderr).toBe(0);
      const entries = (JSON.parse(json.stdout) as { images: { reference: string; artifact: boolean }[] }).images;
      expect(entries.map((e) => `${e.reference}${e.artifact ? ARTIFACT : ''}`)).toEqual(fixture.local);
    });

    it('render --registry leaves no reference outside those KOTS names, and deploys every one', async () => {
      const r = await runCli(['render', ...args, '--registry', REGISTRY], { env });
      expect(r.exitCode, r.stderr).toBe(0);
      const all = [...referencesIn(r.stdout)];
      const found = all
        .filter(
          (ref) =>
            !fixture.nameComponents?.includes(ref) &&
            !fixture.untagged?.includes(ref) &&
            !fixture.notImages?.includes(ref),
        )
        .sort();
      const local = fixture.local.map(referenceOf);
      const outside = found.filter((ref) => !KOTS_LOCAL.test(ref) || !local.includes(ref));
      expect(outside).toEqual([]);
      expect(found).toEqual(
        local.filter((l) => !fixture.annotationOnly?.includes(l) && !fixture.inSecrets?.includes(l)),
      );
      for (const name of fixture.untagged ?? []) expect(all).toContain(name);
      for (const text of fixture.notImages ?? []) expect(r.stdout).toContain(text);
      for (const warning of fixture.warnings ?? []) expect(r.stderr).toMatch(warning);
      for (const warning of fixture.noWarnings ?? []) expect(r.stderr).not.toMatch(warning);
    });
  });

  it('a collision is refused alike by images --registry and render --registry, naming both images', async () => {
    const args = ['--chart', join(charts, 'collision'), '--registry', REGISTRY];
    for (const command of ['images', 'render']) {
      const r = await runCli([command, ...args], { env });
      expect(r.exitCode, `${command}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toContain(
        `cause: Images "docker.io/bitnami/redis:7.4" and "redis:7.4" would both be pushed to "${L}/redis:7.4" in the local registry`,
      );
      expect(r.stdout).toBe('');
    }
  });

  it('a flag and an env value that only name the image a container runs are no collision: kept out of the list with a warning, left as written by render', async () => {
    const args = ['--chart', join(charts, 'image-name-label')];
    const place = (path: string, via: string, line: number) =>
      `warning: image name only: acme/ingest:3.1.0 (Deployment image-name-label-ingest, spec.template.spec.containers[0].${path}, via ${via}, ` +
      `from image-name-label/templates/deployment.yaml, line ${line} of the rendered manifests) names quay.io/acme/ingest:3.1.0, which a container runs, ` +
      `under the same local name (${L}/ingest:3.1.0): that image is kept; this reference is left as written and not listed`;
    const local = await runCli(['images', ...args, '--registry', REGISTRY], { env });
    expect(local.exitCode, local.stderr).toBe(0);
    expect(local.stdout).toBe(`${L}/ingest:3.1.0\n${L}/relay:1.0.0`);
    expect(lines(local.stderr)).toEqual([
      place('args[1]', '--usage-report-image', 17),
      place('env[0].value', 'env USAGE_REPORT_IMAGE', 21),
    ]);
    // Without a registry the same names are kept out: KOTS would push both to one name.
    const listed = await runCli(['images', ...args], { env });
    expect(listed.stdout).toBe('quay.io/acme/ingest:3.1.0\nquay.io/acme/relay:1.0.0');
    expect(lines(listed.stderr)).toEqual(
      lines(local.stderr).map((l) => l.replace(`(${L}/ingest:3.1.0)`, '(<local registry>/ingest:3.1.0)')),
    );
    const r = await runCli(['render', ...args, '--registry', REGISTRY], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('would both be pushed');
    // render (and install) log the same warnings, one per place.
    expect(
      r.stderr.split('\n').filter((l) => l.includes('"level":40') && l.includes('image name only: acme/ingest:3.1.0'))
        .length,
    ).toBe(2);
    expect(r.stdout).toBe(`---
# Source: image-name-label/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: image-name-label-ingest
spec:
  selector: {matchLabels: {app: ingest}}
  template:
    metadata: {labels: {app: ingest}}
    spec:
      containers:
        - name: ingest
          image: "${L}/ingest:3.1.0"
          args:
            - --listen=:8080
            - --usage-report-image=acme/ingest:3.1.0
          env:
            # What the usage reports call this build: the name it is published under.
            - name: USAGE_REPORT_IMAGE
              value: "acme/ingest:3.1.0"
        - name: relay
          image: ${L}/relay:1.0.0
          env:
            - name: RELAY_IMAGE
              value: ${L}/relay:1.0.0`);
  });

  it('an image in a Secret (a values file with name and tag keys, an env-style line, JSON) is rewritten there: still a Secret, base64 again, every other byte as rendered', async () => {
    const args = ['--chart', join(charts, 'notebook-hub')];
    const plain = await runCli(['render', ...args], { env });
    const r = await runCli(['render', ...args, '--registry', REGISTRY], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const secrets = (text: string) =>
      Object.fromEntries(
        parseAllDocuments(text)
          .map((d) => d.toJS())
          .filter((o) => o?.kind === 'Secret')
          .map((o) => [o.metadata.name, o]),
      );
    const before = secrets(plain.stdout);
    const after = secrets(r.stdout);
    const decoded = (o: any) =>
      Object.fromEntries(Object.entries<string>(o.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    const hub = after['notebook-hub-hub'];
    expect([hub.kind, hub.type]).toEqual(['Secret', 'Opaque']);
    // Only the names change: the tag keys, the cookie secret, the other lines are the same bytes.
    const expected = Object.fromEntries(
      Object.entries(decoded(before['notebook-hub-hub'])).map(([k, v]) => [
        k,
        v.replaceAll('quay.io/jupyterhub/', `${L}/`),
      ]),
    );
    expect(decoded(hub)).toEqual(expected);
    expect(decoded(hub)['values.yaml']).toContain(`    name: ${L}/k8s-singleuser-sample\n    tag: 4.0.0\n`);
    expect(decoded(hub)['spawner.env']).toBe(
      `KUBESPAWNER_IMAGE=${L}/k8s-singleuser-sample:4.0.0\nKUBESPAWNER_UID=1000\n`,
    );
    expect(hub.data['hub.config.JupyterHub.cookie_secret']).toBe(
      before['notebook-hub-hub'].data['hub.config.JupyterHub.cookie_secret'],
    );
    // Secret material shaped like a reference is never taken for one (nor printed by images).
    expect(hub.data.api_token).toBe(before['notebook-hub-hub'].data.api_token);
    expect(decoded(hub)['proxy.yaml']).toContain('secretToken: proxy.example.com/hub:t0ken\n');
    expect((await runCli(['images', ...args], { env })).stdout).not.toMatch(/tokens\.example|t0ken/);
    expect(hub.stringData).toEqual(before['notebook-hub-hub'].stringData);
    // What cannot be read is left exactly as rendered, with a warning naming the Secret and key.
    expect(after['notebook-hub-unread']).toEqual(before['notebook-hub-unread']);
    expect(r.stderr).toMatch(/Secret notebook-hub-unread, data\.notes, .*not valid base64; left untouched/);
    const why = await runCli(['images', ...args, '--why', 'quay.io/jupyterhub/k8s-singleuser-sample:4.0.0'], { env });
    expect(lines(why.stdout)).toEqual([
      expect.stringMatching(
        /^Secret notebook-hub-hub, data\.values\.yaml, via image\.name, from notebook-hub\/templates\/hub\.yaml, line \d+ of the rendered manifests$/,
      ),
      expect.stringMatching(/^Secret notebook-hub-hub, data\.spawner\.env, via KUBESPAWNER_IMAGE, /),
    ]);
  });

  it('an image as registry, repository and tag keys of a values file in a Secret: the registry key gets the local address, the repository key the last component; every other byte as rendered', async () => {
    const args = ['--chart', join(charts, 'secret-image-map')];
    const jobs = async (extra: string[]) => {
      const r = await runCli(['render', ...args, ...extra], { env });
      expect(r.exitCode, r.stderr).toBe(0);
      const secret = parseAllDocuments(r.stdout)
        .map((d) => d.toJS())
        .find((o) => o?.kind === 'Secret');
      expect([secret.kind, secret.type, Object.keys(secret.data)]).toEqual(['Secret', 'Opaque', ['jobs.yaml']]);
      return Buffer.from(secret.data['jobs.yaml'], 'base64').toString();
    };
    // helm's toYaml, keys sorted: as rendered, then rewritten.
    const layout = (helper: [string, string], runner: [string, string]) =>
      `jobs:\n  concurrency: 4\n  helper:\n    image:\n      pullPolicy: IfNotPresent\n      registry: ${helper[0]}\n      repository: ${helper[1]}\n      tag: 1.0.1\n  image:\n    registry: ${runner[0]}\n    repository: ${runner[1]}\n    tag: 3.2.0`;
    expect(await jobs([])).toBe(layout(['ghcr.io', 'acme/job-helper'], ['quay.io', 'acme/ci/job-runner']));
    expect(await jobs(['--registry', REGISTRY])).toBe(layout([L, 'job-helper'], [L, 'job-runner']));
    const why = await runCli(['images', ...args, '--why', 'quay.io/acme/ci/job-runner:3.2.0'], { env });
    expect(lines(why.stdout)).toEqual([
      expect.stringMatching(
        /^Secret secret-image-map-jobs, data\.jobs\.yaml, via image\.registry, from secret-image-map\/templates\/runner\.yaml, /,
      ),
      expect.stringMatching(
        /^Secret secret-image-map-jobs, data\.jobs\.yaml, via image\.repository, from secret-image-map\/templates\/runner\.yaml, /,
      ),
    ]);
  });

  it('a name without a tag in ConfigMap data (its tag in another key) stays without one', async () => {
    const r = await runCli(['render', '--chart', join(charts, 'values-configmap'), '--registry', REGISTRY], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`---
# Source: values-configmap/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: values-configmap-values
data:
  values.yaml: |
    collector:
      image: ${L}/collector
      replicas: 1
      tag: 2.4.1
    exporter:
      image: ${L}/exporter
      tag: 0.7.0
  values.json: |
    {
      "collector": {
        "image": "${L}/collector",
        "replicas": 1,
        "tag": "2.4.1"
      },
      "exporter": {
        "image": "${L}/exporter",
        "tag": "0.7.0"
      }
    }
---
# Source: values-configmap/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: values-configmap-collector
spec:
  replicas: 1
  selector: {matchLabels: {app: collector}}
  template:
    metadata: {labels: {app: collector}}
    spec:
      containers:
        - name: collector
          image: "${L}/collector:2.4.1"
          args: ["--values=/etc/collector/values.yaml"]
        - name: exporter
          image: "${L}/exporter:0.7.0"`);
  });

  it('OCI artifacts named in a ConfigMap are listed, marked, in the KOTS block too, and rewritten like images; URLs and short names are not', async () => {
    const args = ['--chart', join(charts, 'runtime-artifacts')];
    const kots = await runCli(['images', ...args, '--format', 'kots'], { env });
    expect(kots.exitCode, kots.stderr).toBe(0);
    expect(kots.stdout).toBe(`  # Under spec: of the KOTS Application (apiVersion: kots.io/v1beta1, kind: Application).
  # Generated by helm-installer from the rendered chart.
  additionalImages:
    - ghcr.io/acme/charts/addon:0.3.0${ARTIFACT}
    - ghcr.io/acme/gateway:5.2.0
    - ghcr.io/acme/plugins/auth@sha256:${C}${ARTIFACT}
    - ghcr.io/acme/plugins/geoip:1.4.0${ARTIFACT}
    - ghcr.io/acme/plugins/ratelimit:0.9.2${ARTIFACT}
    - ghcr.io/acme/rules/bots:2025.10${ARTIFACT}
    - ghcr.io/acme/rules/core:2025.11${ARTIFACT}
    - quay.io/acme/warmup:1.1.0`);
    const why = await runCli(['images', ...args, '--why', 'ghcr.io/acme/plugins/geoip:1.4.0'], { env });
    expect(lines(why.stdout)).toEqual([
      expect.stringMatching(
        /^ConfigMap runtime-artifacts-plugins, data\.gateway\.yaml, via refs, from runtime-artifacts\/templates\/configmap\.yaml, line \d+ of the rendered manifests$/,
      ),
    ]);
    const r = await runCli(['render', ...args, '--registry', REGISTRY], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`---
# Source: runtime-artifacts/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: runtime-artifacts-plugins
data:
  gateway.yaml: |
    plugins:
      install:
        refs:
          - ${L}/geoip:1.4.0
          - ${L}/ratelimit:0.9.2
          - ${L}/auth@sha256:${C}
          - core-rules:3
        dir: /var/lib/gateway/plugins
      index: https://plugins.acme.example/index.yaml
      mirrors: [https://mirror.acme.example/v2/plugins:1, "registry.acme.example:5000"]
    warmup:
      images:
        - ${L}/warmup:1.1.0
    docs:
      - https://docs.acme.example/plugins/geoip:1.4.0
      - acme.example/docs
  rules.json: |
    {
      "bundles": ["${L}/core:2025.11", "https://rules.acme.example/extra:1"],
      "optional": [
        "${L}/bots:2025.10",
        "rbac.authorization.k8s.io/v1"
      ]
    }
  addon: oci://${L}/addon:0.3.0
---
# Source: runtime-artifacts/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: runtime-artifacts-gateway
spec:
  selector: {matchLabels: {app: gateway}}
  template:
    metadata: {labels: {app: gateway}}
    spec:
      containers:
        - name: gateway
          image: ${L}/gateway:5.2.0
          args: ["--config=/etc/gateway/gateway.yaml", "--rules=/etc/gateway/rules.json"]`);
  });

  it('images --why names every place a reference comes from', async () => {
    const r = await runCli(
      [
        'images',
        '--chart',
        join(charts, 'operator-flags'),
        '--why',
        'quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0',
      ],
      { env },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout)).toEqual([
      expect.stringMatching(
        /^Deployment operator-flags-operator, spec\.template\.spec\.containers\[0\]\.args\[0\], via --prometheus-config-reloader, from operator-flags\/templates\/deployment\.yaml, line \d+ of the rendered manifests$/,
      ),
    ]);
    const cm = await runCli(
      [
        'images',
        '--chart',
        join(charts, 'configmap-images'),
        '--why',
        `${L}/csi-attacher:v4.8.0`,
        '--registry',
        REGISTRY,
      ],
      { env },
    );
    expect(lines(cm.stdout)).toEqual([
      expect.stringMatching(
        /^ConfigMap configmap-images-images, data\.images\.yaml, via csi-attacher, from configmap-images\/templates\/configmap\.yaml/,
      ),
    ]);
    const none = await runCli(['images', '--chart', join(charts, 'operator-flags'), '--why', 'nginx:1'], { env });
    expect(none.exitCode).toBe(3);
  });
});

describe('hints that would change which image runs are left out, and say so', () => {
  it('bare name + separate tag: no hint, the post-render keeps the tag (no <registry>/pilot:latest)', async () => {
    const r = await runCli(['values', '--chart', join(charts, 'bare-name-tag'), '--registry', REGISTRY, '-o', 'json'], {
      env: { HELM_BIN: helm4 },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({});
  });

  it('multi-segment repository under a global registry: global.imageRegistry is dropped, the per-image hints stay exact', async () => {
    const r = await runCli(
      ['values', '--chart', join(charts, 'multi-segment-global'), '--registry', REGISTRY, '-o', 'json'],
      { env: { HELM_BIN: helm4 } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      image: {
        longhorn: { manager: { repository: `${L}/longhorn-manager` }, engine: { repository: `${L}/longhorn-engine` } },
        csi: { attacher: { repository: `${L}/csi-attacher` } },
      },
    });
    expect(r.stderr).toMatch(/trying without global\.imageRegistry/);
  });

  it('an image-verifying chart gets its own allow switch, logged', async () => {
    const r = await runCli(['values', '--chart', join(charts, 'image-verify'), '--registry', REGISTRY, '-o', 'json'], {
      env: { HELM_BIN: helm4 },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      global: { imageRegistry: REGISTRY, security: { allowInsecureImages: true } },
      image: { registry: REGISTRY, repository: 'redis' },
      metrics: { image: { registry: REGISTRY, repository: 'redis-exporter' } },
    });
    expect(r.stderr).toContain('set global.security.allowInsecureImages=true');
  });
});

describe('conventions of current public charts get exact hints, so helm 3 hook images are covered', () => {
  it.each([
    [
      // ingress-nginx: the per-image registry wins over global.image.registry; tag@digest stays
      // (the runtime pulls the digest, which KOTS pushed as <address>/<name>@<digest>).
      'global-image-registry',
      {
        controller: { image: { registry: REGISTRY, image: 'controller' } },
        admissionWebhooks: { patch: { image: { registry: REGISTRY, image: 'kube-webhook-certgen' } } },
      },
    ],
    // cert-manager: <imageRegistry>/<imageNamespace>/<name> for every image, the flag's included.
    ['registry-namespace', { imageRegistry: 'registry.local:5000', imageNamespace: 'acme' }],
  ])('%s', async (chart, hints) => {
    for (const helmBin of [helm4, helm3]) {
      const r = await runCli(['values', '--chart', join(charts, chart), '--registry', REGISTRY, '-o', 'json'], {
        env: { HELM_BIN: helmBin },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(hints);
    }
    // A loopback registry nothing listens on: the registry check fails (exit 6); the hook check
    // before it has nothing to refuse.
    const i = await runCli(['install', '--chart', join(charts, chart), '--registry', '127.0.0.1:1/acme'], {
      env: { HELM_BIN: helm3, KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    expect(i.exitCode, i.stderr).toBe(6);
    expect(i.stderr).not.toContain('does not post-render hooks');
    expect(i.stderr).toContain('cause: Cannot reach the registry 127.0.0.1:1');
  });
});

describe('a hard-coded hook image (no values hint can reach it)', () => {
  const args = ['--chart', join(charts, 'hook-image'), '--registry', REGISTRY, '--set', 'migrate.hardcoded=true'];
  const local = [`${L}/bats:v1.11.1`, `${L}/busybox:1.36`, `${L}/kubectl:1.33.0`, `${L}/postgresql:17.2.0`];

  it.each([
    ['helm 4', helm4],
    ['helm 3', helm3],
  ])(
    'images lists it and render rewrites it (render owns the whole stream, hooks included), %s',
    async (_name, helmBin) => {
      const listed = await runCli(['images', ...args.slice(0, 2), '--set', 'migrate.hardcoded=true'], {
        env: { HELM_BIN: helmBin },
      });
      expect(listed.exitCode, listed.stderr).toBe(0);
      expect(lines(listed.stdout)).toEqual([
        'busybox:1.36',
        'docker.io/bats/bats:v1.11.1',
        'docker.io/bitnami/kubectl:1.33.0',
        'docker.io/bitnami/postgresql:17.2.0',
      ]);
      const localListed = await runCli(['images', ...args], { env: { HELM_BIN: helmBin } });
      expect(lines(localListed.stdout)).toEqual(local);
      const r = await runCli(['render', ...args], { env: { HELM_BIN: helmBin } });
      expect(r.exitCode, r.stderr).toBe(0);
      expect([...referencesIn(r.stdout)].sort()).toEqual(local);
      // The hook Job itself, with both of its containers rewritten.
      const job = r.stdout.split(/^---$/m).find((d) => /kind: Job/.test(d) && /name: hook-image-migrate/.test(d));
      expect(job).toContain('helm.sh/hook: pre-install,pre-upgrade');
      expect(job).toContain(`image: ${L}/busybox:1.36`);
      expect(job).toContain(`image: ${L}/kubectl:1.33.0`);
      expect(r.stderr).not.toMatch(/does not post-render hooks/);
    },
  );

  it('install on helm 3 refuses it in the preflight (exit 6) before helm touches the cluster, naming hook, image, local name and what to do', async () => {
    const r = await runCli(['install', ...args], { env: { HELM_BIN: helm3, KUBECONFIG: '/nonexistent/kubeconfig' } });
    expect(r.exitCode, r.stderr).toBe(6);
    expect(r.stderr).toMatch(
      /1 hook image\(s\) would be pulled from outside registry\.local:5000\/acme: helm 3 does not post-render hooks/,
    );
    expect(r.stderr).toMatch(
      /^ {2}busybox:1\.36 -> registry\.local:5000\/acme\/busybox:1\.36 \(Job hook-image-migrate, spec\.template\.spec\.containers\[1\]\.image, hook pre-install,pre-upgrade, from hook-image\/templates\/workloads\.yaml/m,
    );
    expect(r.stderr).toMatch(
      /Set the chart value that renders each image to the local name after "->".*or run with helm 4 \(HELM_BIN\)/,
    );
  });

  it("a test hook's image matters only with --test: helm 3 runs `helm test` with the hook as written, so the preflight refuses it then (exit 6)", async () => {
    const testArgs = ['--chart', join(charts, 'hook-image'), '--registry', REGISTRY, '--set', 'test.hardcoded=true'];
    const env = { HELM_BIN: helm3, KUBECONFIG: '/nonexistent/kubeconfig' };
    // Without --test the hook check has nothing to refuse; the registry check after it fails
    // (nothing listens at registry.local).
    const plain = await runCli(['install', ...testArgs], { env });
    expect(plain.exitCode, plain.stderr).toBe(6);
    expect(plain.stderr).not.toMatch(/does not post-render hooks/);
    const tested = await runCli(['install', ...testArgs, '--test'], { env });
    expect(tested.exitCode, tested.stderr).toBe(6);
    expect(tested.stderr).toMatch(
      /1 hook image\(s\) would be pulled from outside registry\.local:5000\/acme: helm 3 does not post-render hooks/,
    );
    expect(tested.stderr).toMatch(
      /^ {2}alpine:3\.20 -> registry\.local:5000\/acme\/alpine:3\.20 \(Pod hook-image-test, spec\.containers\[1\]\.image, hook test, from hook-image\/templates\/workloads\.yaml/m,
    );
  });

  it('install on helm 4 has nothing to refuse: its post-renderer sees hooks; on helm 3 --skip-preflight still names the hook image', async () => {
    // No kubeconfig: the run stops at the cluster (exit 2) after the render check; helm 3 would
    // name the hook image even with --skip-preflight.
    const r4 = await runCli(['install', ...args, '--skip-preflight'], {
      env: { HELM_BIN: helm4, KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    expect(r4.exitCode, r4.stderr).toBe(2);
    expect(r4.stdout + r4.stderr).not.toMatch(/does not post-render hooks/);
    const r3 = await runCli(['install', ...args, '--skip-preflight'], {
      env: { HELM_BIN: helm3, KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    expect(r3.exitCode, r3.stderr).toBe(2);
    expect(r3.stdout).toMatch(
      /helm 3 does not post-render hooks: busybox:1\.36 \(Job hook-image-migrate, [^)]*\) is pulled as it is \(--skip-preflight\)/,
    );
  });
});
