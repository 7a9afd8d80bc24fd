import { describe, it, expect } from 'vitest';
import { buildValuesHints } from '../../src/images/values-hints.js';
import { parseRegistryAddress } from '../../src/images/image-reference.js';

const registry = parseRegistryAddress('registry.local:5000/app');

describe('buildValuesHints', () => {
  it('handles a Bitnami-style chart: global.imageRegistry and registry/repository maps at any depth', () => {
    const values = {
      global: { imageRegistry: '', imagePullSecrets: [] },
      image: { registry: 'docker.io', repository: 'bitnami/redis', tag: '7.2.4', digest: '', pullPolicy: 'IfNotPresent' },
      metrics: { enabled: false, image: { registry: 'docker.io', repository: 'bitnami/redis-exporter', tag: '1.58.0' } },
      volumePermissions: { image: { registry: 'docker.io', repository: 'bitnami/os-shell', tag: '12' } },
      sentinel: { image: { registry: 'registry.local:5000', repository: 'app/redis-sentinel', tag: '7' } },
    };
    expect(buildValuesHints(values, registry)).toEqual({
      global: { imageRegistry: 'registry.local:5000/app' },
      image: { registry: 'registry.local:5000/app', repository: 'redis' },
      metrics: { image: { registry: 'registry.local:5000/app', repository: 'redis-exporter' } },
      volumePermissions: { image: { registry: 'registry.local:5000/app', repository: 'os-shell' } },
      // Already local, restated so that global.imageRegistry + repository gives the same name.
      sentinel: { image: { registry: 'registry.local:5000/app', repository: 'redis-sentinel' } },
    });
  });

  it('rewrites registry-prefixed repositories and plain image maps in subchart sections', () => {
    const values = {
      'prometheus-node-exporter': { image: { repository: 'quay.io/prometheus/node-exporter', tag: 'v1.8.2' } },
      web: { image: { repository: 'nginx', tag: '1.27' }, replicas: 2 },
      operator: { kubectlImage: { repository: 'registry.k8s.io/kubectl', tag: 'v1.33.0' } },
    };
    expect(buildValuesHints(values, registry)).toEqual({
      'prometheus-node-exporter': { image: { repository: 'registry.local:5000/app/node-exporter' } },
      web: { image: { repository: 'registry.local:5000/app/nginx' } },
      operator: { kubectlImage: { repository: 'registry.local:5000/app/kubectl' } },
    });
  });

  it('rewrites image strings and leaves non-images, templates, lists and local images alone', () => {
    const values = {
      sidecar: { image: 'ghcr.io/acme/sidecar:1.2@sha256:' + 'a'.repeat(64) },
      job: { backupImage: 'acme/backup:3' },
      templated: { image: '{{ .Values.global.registry }}/x:1' },
      notAnImage: { image: 'Not An Image' },
      local: { image: 'registry.local:5000/app/local:1' },
      list: [{ image: { repository: 'acme/in-a-list' } }],
      git: { repository: 'https://github.com/acme/app' },
      weird: { image: { repository: 'nginx:1.27' } },
      enabled: true,
    };
    expect(buildValuesHints(values, registry)).toEqual({
      sidecar: { image: 'registry.local:5000/app/sidecar:1.2@sha256:' + 'a'.repeat(64) },
      job: { backupImage: 'registry.local:5000/app/backup:3' },
    });
  });

  it('leaves an image map that already says address + last component alone', () => {
    expect(buildValuesHints({ image: { registry: 'registry.local:5000/app', repository: 'redis' } }, registry)).toEqual({});
  });

  it('uses the bare host when the local registry has no namespace', () => {
    const root = parseRegistryAddress('10.0.0.5:5000');
    expect(buildValuesHints({ global: { imageRegistry: 'old' }, image: { registry: '', repository: 'bitnami/redis' } }, root)).toEqual({
      global: { imageRegistry: '10.0.0.5:5000' },
      image: { registry: '10.0.0.5:5000', repository: 'redis' },
    });
  });

  it('returns nothing for values without images or that are not a map', () => {
    expect(buildValuesHints({ replicas: 1 }, registry)).toEqual({});
    expect(buildValuesHints(null, registry)).toEqual({});
    expect(buildValuesHints(['x'], registry)).toEqual({});
  });
});
