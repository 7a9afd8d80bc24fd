import { describe, it, expect } from 'vitest';
import { findEmbeddedReferences } from '../../src/images/embedded-images.js';

const D = 'sha256:' + 'c'.repeat(64);
const images = (value: string, context: Parameters<typeof findEmbeddedReferences>[1]) =>
  findEmbeddedReferences(value, context).images.map((r) => [r.reference, value.slice(r.start, r.end), r.via]);

describe('findEmbeddedReferences', () => {
  it('finds --flag=<ref> and keeps the exact characters of the reference', () => {
    const value = '--prometheus-config-reloader=quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0';
    expect(images(value, { where: 'arg' })).toEqual([
      [
        'quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0',
        'quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0',
        '--prometheus-config-reloader',
      ],
    ]);
  });

  it('finds the argument after a flag, and a whole value, but only when it is clearly an image', () => {
    expect(
      images('quay.io/jetstack/cert-manager-acmesolver:v1.17.0', {
        where: 'arg',
        previous: '--acme-http01-solver-image',
      }),
    ).toEqual([
      [
        'quay.io/jetstack/cert-manager-acmesolver:v1.17.0',
        'quay.io/jetstack/cert-manager-acmesolver:v1.17.0',
        '--acme-http01-solver-image',
      ],
    ]);
    // A short name with a tag counts only when the flag says "image".
    expect(images('busybox:1.36', { where: 'arg', previous: '--helper-image' })).toHaveLength(1);
    expect(images('busybox:1.36', { where: 'arg', previous: '--timeout' })).toEqual([]);
    expect(images(`--image=registry.k8s.io/pause@${D}`, { where: 'arg' })).toHaveLength(1);
  });

  it('finds env values under any name when the reference names a host and a tag', () => {
    expect(
      images('quay.io/mongodb/mongodb-agent-ubi:108.0.6.8796-1', { where: 'env', name: 'AGENT_IMAGE' }),
    ).toHaveLength(1);
    expect(images('docker.elastic.co/beats/filebeat:8.17.0', { where: 'env', name: 'DEFAULT' })).toHaveLength(1);
    // A bare name the operator joins with a repository URL is not an image by itself.
    expect(images('mongodb-community-server', { where: 'env', name: 'MONGODB_IMAGE' })).toEqual([]);
  });

  it('never takes version strings, host:port, URLs, API groups or paths for images', () => {
    const none = [
      ['v1.2.3', { where: 'env', name: 'IMAGE_VERSION' }],
      ['0.0.0.0:8080', { where: 'arg', previous: '--metrics-bind-address' }],
      ['--metrics-bind-address=:8443', { where: 'arg' }],
      ['https://quay.io/v2/prometheus/prometheus:v1', { where: 'env', name: 'IMAGE_URL' }],
      ['rbac.authorization.k8s.io/v1', { where: 'env', name: 'API' }],
      ['kubernetes.default.svc:443/api', { where: 'arg', previous: '--master' }],
      ['/etc/config/app.yaml', { where: 'arg', previous: '--config' }],
      ['12:30', { where: 'env', name: 'BACKUP_TIME' }],
      ['--leader-elect=true', { where: 'arg' }],
    ] as const;
    for (const [value, context] of none)
      expect(findEmbeddedReferences(value, context), value).toEqual({ images: [], registries: [] });
  });

  it('finds key: <ref> lines and "image": "<ref>" in ConfigMap data, at their exact place', () => {
    const value = [
      'attacher: registry.k8s.io/sig-storage/csi-attacher:v4.8.0',
      'provisioner = "registry.k8s.io/sig-storage/csi-provisioner:v5.1.0"',
      '{"name": "agent", "image": "quay.io/acme/agent:2.1",',
      '  retries: 3',
      '# url: https://example.com/a:b',
      'image: busybox:1.36',
    ].join('\n');
    const found = images(value, { where: 'data', key: 'images.yaml' });
    expect(found.map(([ref, at, via]) => `${via}=${ref}|${at}`)).toEqual([
      'attacher=registry.k8s.io/sig-storage/csi-attacher:v4.8.0|registry.k8s.io/sig-storage/csi-attacher:v4.8.0',
      'provisioner=registry.k8s.io/sig-storage/csi-provisioner:v5.1.0|registry.k8s.io/sig-storage/csi-provisioner:v5.1.0',
      'image=busybox:1.36|busybox:1.36',
    ]);
  });

  it('finds a single-token ConfigMap value under its key', () => {
    expect(images('quay.io/acme/sidecar:1.0', { where: 'data', key: 'sidecar' })).toHaveLength(1);
    expect(images('enabled', { where: 'data', key: 'sidecarImage' })).toEqual([]);
  });

  it('reads a shell script passed as one argument word by word: -flag="<ref>" and --flag=<ref>, at their exact place', () => {
    const script = [
      'consul-k8s-control-plane inject-connect \\',
      '  -log-level=info \\',
      '  -consul-image="hashicorp/consul:1.20.2" \\',
      '  -consul-dataplane-image="docker.mirror.hashicorp.services/hashicorppreview/consul-dataplane:2.1.0-dev" \\',
      "  --envoy-image='envoyproxy/envoy:v1.33.0' \\",
      '  -listen=0.0.0.0:8080 -config="/etc/consul/config.json" -url=https://quay.io/v2/a:b \\',
      '  -version=1.2.3 -replicas=3 -tls-server-name=server.dc1.consul \\',
      '  && echo "pulled quay.io/acme/notes:1.0 earlier"; SIDECAR=quay.io/acme/sidecar:2.0 run',
    ].join('\n');
    expect(images(script, { where: 'arg', previous: '-ec' })).toEqual([
      ['hashicorp/consul:1.20.2', 'hashicorp/consul:1.20.2', '-consul-image'],
      [
        'docker.mirror.hashicorp.services/hashicorppreview/consul-dataplane:2.1.0-dev',
        'docker.mirror.hashicorp.services/hashicorppreview/consul-dataplane:2.1.0-dev',
        '-consul-dataplane-image',
      ],
      ['envoyproxy/envoy:v1.33.0', 'envoyproxy/envoy:v1.33.0', '--envoy-image'],
      ['quay.io/acme/sidecar:2.0', 'quay.io/acme/sidecar:2.0', 'SIDECAR'],
    ]);
  });

  it('reads an env value of several lines line by line: <version>=<ref>', () => {
    const value = '3.9.0=quay.io/strimzi/kafka:0.45.0-kafka-3.9.0\n3.9.1=quay.io/strimzi/kafka:0.45.0-kafka-3.9.1\n';
    expect(images(value, { where: 'env', name: 'STRIMZI_KAFKA_IMAGES' })).toEqual([
      ['quay.io/strimzi/kafka:0.45.0-kafka-3.9.0', 'quay.io/strimzi/kafka:0.45.0-kafka-3.9.0', '3.9.0'],
      ['quay.io/strimzi/kafka:0.45.0-kafka-3.9.1', 'quay.io/strimzi/kafka:0.45.0-kafka-3.9.1', '3.9.1'],
    ]);
    // Versions listed the same way are not images.
    expect(images('3.9.0=0.45.0\n3.9.1=0.45.0\n', { where: 'env', name: 'STRIMZI_KAFKA_IMAGES' })).toEqual([]);
  });

  it('returns registry-only values apart, under keys that say registry, repo or hub', () => {
    expect(
      findEmbeddedReferences('log-verbosity: 0\ncontainer-registry: docker.elastic.co\n', {
        where: 'data',
        key: 'eck.yaml',
      }).registries.map((r) => `${r.via}=${r.reference}`),
    ).toEqual(['container-registry=docker.elastic.co']);
    expect(
      findEmbeddedReferences('docker.io/mongodb', { where: 'env', name: 'MONGODB_REPO_URL' }).registries.map(
        (r) => r.reference,
      ),
    ).toEqual(['docker.io/mongodb']);
    expect(
      findEmbeddedReferences('        "hub": "docker.io/istio",', { where: 'data', key: 'values' }).registries,
    ).toHaveLength(1);
    // Not a registry: a URL, a plain word, a key that does not say so.
    expect(
      findEmbeddedReferences('https://github.com/acme/charts', { where: 'env', name: 'REPO_URL' }).registries,
    ).toEqual([]);
    expect(findEmbeddedReferences('main', { where: 'env', name: 'GIT_REPO_BRANCH' }).registries).toEqual([]);
    expect(findEmbeddedReferences('docker.io', { where: 'env', name: 'DOMAIN' }).registries).toEqual([]);
    // A Python setting of a notebook hub: the object `JupyterHub` is no "hub" setting, a class no host.
    const python =
      'c.JupyterHub.spawner_class = kubespawner.KubeSpawner\nc.JupyterHub.authenticator_class = jupyterhub.auth.DummyAuthenticator\n';
    expect(findEmbeddedReferences(python, { where: 'data', key: 'jupyterhub_config.py' }).registries).toEqual([]);
    expect(
      findEmbeddedReferences('c.Spawner.registry = quay.io\n', { where: 'data', key: 'config.py' }).registries.map(
        (r) => r.reference,
      ),
    ).toEqual(['quay.io']);
  });

  it("never takes labels or a label selector for an image (a chaos-engineering operator's TEMPLATE_LABELS), and still finds images", () => {
    const env = (name: string, value: string) => images(value, { where: 'env', name }).map(([reference]) => reference);
    expect(env('TEMPLATE_LABELS', 'app.kubernetes.io/component:template')).toEqual([]);
    expect(env('CONFIGMAP_LABELS', 'app.kubernetes.io/component:webhook')).toEqual([]);
    expect(env('POD_SELECTOR', 'ghcr.io/acme/x:1')).toEqual([]);
    expect(env('WATCH_LABEL', 'example.com/team:chaos')).toEqual([]);
    expect(env('EXTRA_LABELS', 'tier=quay.io/a/b:1 team=chaos')).toEqual([]);
    expect(images('--selector=app.kubernetes.io/component:webhook', { where: 'arg' })).toEqual([]);
    expect(images('app.kubernetes.io/component:webhook', { where: 'arg', previous: '--label-image' })).toEqual([]);
    expect(
      images('role: node-role.kubernetes.io/control-plane:NoSchedule\n', { where: 'data', key: 'c.yaml' }),
    ).toEqual([]);
    // A registry under k8s.io is one (registry.k8s.io), and an image env beside the labels is found.
    expect(env('PAUSE_IMAGE', 'registry.k8s.io/pause:3.10')).toEqual(['registry.k8s.io/pause:3.10']);
    expect(env('DAEMON_IMAGE', 'ghcr.io/acme/chaos-daemon:2.7.1')).toEqual(['ghcr.io/acme/chaos-daemon:2.7.1']);
  });

  it('reports an env var naming a registry the workload pulls from, set to "", and nothing else that is empty', () => {
    expect(findEmbeddedReferences('', { where: 'env', name: 'CONNECTOR_IMAGE_REGISTRY' }).registries).toEqual([
      { start: 0, end: 0, reference: '', via: 'env CONNECTOR_IMAGE_REGISTRY' },
    ]);
    expect(findEmbeddedReferences('', { where: 'env', name: 'DOCKER_REGISTRY_URL' }).registries).toHaveLength(1);
    for (const name of ['REGISTRY_PASSWORD', 'IMAGE_TAG', 'SCHEMA_REGISTRY_AUTH', 'HUB_URL']) {
      expect(findEmbeddedReferences('', { where: 'env', name }).registries, name).toEqual([]);
    }
  });

  it('reports the same setting as an env-style key of ConfigMap data set to "" (a chart that keeps its env in a ConfigMap), not a lower-case key', () => {
    expect(findEmbeddedReferences('', { where: 'data', key: 'JOB_KUBE_CONNECTOR_IMAGE_REGISTRY' }).registries).toEqual([
      { start: 0, end: 0, reference: '', via: 'JOB_KUBE_CONNECTOR_IMAGE_REGISTRY' },
    ]);
    for (const key of ['registry', 'imageRegistry', 'REGISTRY_PASSWORD', 'IMAGE_TAG', 'HUB_URL']) {
      expect(findEmbeddedReferences('', { where: 'data', key }).registries, key).toEqual([]);
    }
    // Set, it is no empty registry (a whole value naming only a registry is reported as before).
    expect(
      findEmbeddedReferences('registry.local:5000', {
        where: 'data',
        key: 'JOB_KUBE_CONNECTOR_IMAGE_REGISTRY',
      }).registries.map((r) => r.reference),
    ).not.toContain('');
  });

  it('finds full references among list items of ConfigMap data (YAML block and flow lists, JSON arrays, oci://) as artifacts, unless the list says image', () => {
    const value = [
      'plugins:',
      '  refs:',
      '  - ghcr.io/acme/plugins/geoip:1.4.0',
      `  - "ghcr.io/acme/plugins/auth@${D}"  # pinned`,
      '  - core-rules:3',
      '  - https://plugins.acme.example/geoip:1.4.0',
      '  dir: /var/lib/plugins',
      'prepull:',
      '  images:',
      '    - quay.io/acme/warmup:1.1.0',
      'mirrors: [https://mirror.acme.example/v2/a:1, "ghcr.io/acme/rules/core:2025.11", registry.acme.example:5000]',
      '{"bundles": [',
      '    "ghcr.io/acme/rules/bots:2025.10",',
      '    "rbac.authorization.k8s.io/v1"',
      '  ]}',
      'chart: oci://ghcr.io/acme/charts/addon:0.3.0',
      'docs: https://docs.acme.example/x/y:1',
      'notes:',
      '- acme.example/docs',
      '- localhost:8080',
      '- v1.2.3',
    ].join('\n');
    const found = findEmbeddedReferences(value, { where: 'data', key: 'gateway.yaml' }).images;
    expect(
      found.map((r) => `${r.via}=${r.reference}|${value.slice(r.start, r.end)}${r.artifact ? ' (artifact)' : ''}`),
    ).toEqual([
      'chart=ghcr.io/acme/charts/addon:0.3.0|ghcr.io/acme/charts/addon:0.3.0 (artifact)',
      'refs=ghcr.io/acme/plugins/geoip:1.4.0|ghcr.io/acme/plugins/geoip:1.4.0 (artifact)',
      `refs=ghcr.io/acme/plugins/auth@${D}|ghcr.io/acme/plugins/auth@${D} (artifact)`,
      'images=quay.io/acme/warmup:1.1.0|quay.io/acme/warmup:1.1.0',
      'mirrors=ghcr.io/acme/rules/core:2025.11|ghcr.io/acme/rules/core:2025.11 (artifact)',
      'bundles=ghcr.io/acme/rules/bots:2025.10|ghcr.io/acme/rules/bots:2025.10 (artifact)',
    ]);
    // A whole value that is an oci:// reference; the scheme stays outside the reference's range.
    const oci = findEmbeddedReferences(' oci://ghcr.io/acme/charts/addon@' + D, { where: 'data', key: 'addon' }).images;
    expect(oci.map((r) => [r.reference, r.start, r.artifact])).toEqual([[`ghcr.io/acme/charts/addon@${D}`, 7, true]]);
    // Neither an oci:// reference without a tag or digest, nor another scheme, nor list items outside ConfigMap data.
    expect(findEmbeddedReferences('oci://ghcr.io/acme/charts/addon', { where: 'data', key: 'addon' }).images).toEqual(
      [],
    );
    expect(
      findEmbeddedReferences('https://ghcr.io/acme/charts/addon:1', { where: 'data', key: 'addon' }).images,
    ).toEqual([]);
    expect(findEmbeddedReferences('set -e\n- ghcr.io/acme/plugins/geoip:1.4.0\n', { where: 'arg' }).images).toEqual([]);
  });

  it('an image as registry, repository and tag keys: two ranges, the registry and the repository, for one reference', () => {
    const value =
      'runner:\n  image:\n    registry: quay.io\n    repository: acme/ci/job-runner\n    tag: "3.2.0"\nhelper: {image: {registry: ghcr.io, repository: acme/helper, tag: 1.0}}\n';
    const found = findEmbeddedReferences(value, { where: 'data', key: 'jobs.yaml' });
    expect(found.images.map((r) => `${r.via}=${r.reference}|${value.slice(r.start, r.end)}|${r.part}`)).toEqual([
      'image.registry=quay.io/acme/ci/job-runner:3.2.0|quay.io|registry',
      'image.repository=quay.io/acme/ci/job-runner:3.2.0|acme/ci/job-runner|repository',
      'image.registry=ghcr.io/acme/helper:1.0|ghcr.io|registry',
      'image.repository=ghcr.io/acme/helper:1.0|acme/helper|repository',
    ]);
    // The registry keys are part of an image, not registry-only settings.
    expect(found.registries).toEqual([]);
  });

  it('no triple where the three keys do not make one reference', () => {
    const refs = (v: string) =>
      findEmbeddedReferences(v, { where: 'data', key: 'v.yaml' }).images.map((r) => r.reference);
    // A registry that is no host; a repository with a host of its own (a pair then, name and tag); a tag of its own; an empty registry.
    expect(refs('image:\n  registry: internal\n  repository: acme/x\n  tag: "1"\n')).toEqual([]);
    expect(refs('image:\n  registry: quay.io\n  repository: ghcr.io/acme/x\n  tag: "1"\n')).toEqual([
      'ghcr.io/acme/x:1',
    ]);
    expect(refs('image:\n  registry: quay.io\n  repository: acme/x:2\n  tag: "1"\n')).toEqual([]);
    expect(refs('image:\n  registry: ""\n  repository: acme/x\n  tag: "1"\n')).toEqual(['acme/x:1']);
  });
});
