import { describe, it, expect } from 'vitest';
import { buildHints, buildValuesHints, withoutGlobalRegistry } from '../../src/images/values-hints.js';
import { parseRegistryAddress } from '../../src/common/image-reference.js';

const registry = parseRegistryAddress('registry.local:5000/app');

describe('buildValuesHints', () => {
  it('handles a Bitnami-style chart: global.imageRegistry and registry/repository maps at any depth', () => {
    const values = {
      global: { imageRegistry: '', imagePullSecrets: [] },
      image: {
        registry: 'docker.io',
        repository: 'bitnami/redis',
        tag: '7.2.4',
        digest: '',
        pullPolicy: 'IfNotPresent',
      },
      metrics: {
        enabled: false,
        image: { registry: 'docker.io', repository: 'bitnami/redis-exporter', tag: '1.58.0' },
      },
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

  it('rewrites complete image strings only; leaves names a template may prefix, non-images, templates, lists and local images alone', () => {
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
      // KOTS keeps only the digest of tag@digest.
      sidecar: { image: 'registry.local:5000/app/sidecar@sha256:' + 'a'.repeat(64) },
    });
  });

  it('leaves an image map that already says address + last component alone', () => {
    expect(buildValuesHints({ image: { registry: 'registry.local:5000/app', repository: 'redis' } }, registry)).toEqual(
      {},
    );
  });

  it('uses the bare host when the local registry has no namespace', () => {
    const root = parseRegistryAddress('10.0.0.5:5000');
    expect(
      buildValuesHints(
        { global: { imageRegistry: 'old' }, image: { registry: '', repository: 'bitnami/redis' } },
        root,
      ),
    ).toEqual({
      global: { imageRegistry: '10.0.0.5:5000' },
      image: { registry: '10.0.0.5:5000', repository: 'redis' },
    });
  });

  it('returns nothing for values without images or that are not a map', () => {
    expect(buildValuesHints({ replicas: 1 }, registry)).toEqual({});
    expect(buildValuesHints(null, registry)).toEqual({});
    expect(buildValuesHints(['x'], registry)).toEqual({});
  });

  it('never hints a bare name joined with a hub and a separate tag (istio): the tag would be lost', () => {
    const values = {
      global: { hub: 'docker.io/istio', tag: '1.24.2' },
      pilot: { image: 'pilot' },
      proxy: { image: 'proxyv2' },
    };
    expect(buildValuesHints(values, registry)).toEqual({});
  });

  it('handles the {registry, image, tag, digest} convention (ingress-nginx)', () => {
    const values = {
      controller: {
        image: {
          registry: 'registry.k8s.io',
          image: 'ingress-nginx/controller',
          tag: 'v1.12.0',
          digest: 'sha256:' + 'b'.repeat(64),
        },
      },
    };
    expect(buildValuesHints(values, registry)).toEqual({
      controller: { image: { registry: 'registry.local:5000/app', image: 'controller' } },
    });
  });

  it("sets the chart's own allow switch when hints change the images of a chart that verifies them", () => {
    const values = {
      global: { imageRegistry: '', security: { allowInsecureImages: false } },
      image: { registry: 'docker.io', repository: 'bitnami/redis', tag: '8.0.2' },
    };
    const hints = buildHints(values, registry);
    expect(hints.values).toEqual({
      global: { imageRegistry: 'registry.local:5000/app', security: { allowInsecureImages: true } },
      image: { registry: 'registry.local:5000/app', repository: 'redis' },
    });
    expect(hints.allowSwitches).toEqual(['global.security.allowInsecureImages']);
    // No image changed, no switch flipped.
    expect(buildHints({ global: { security: { allowInsecureImages: false } } }, registry)).toEqual({
      values: {},
      allowSwitches: [],
    });
  });

  it('can drop the global registry and keep the per-image hints', () => {
    const hints = {
      global: { imageRegistry: 'registry.local:5000/app' },
      image: { registry: 'registry.local:5000/app', repository: 'redis' },
    };
    expect(withoutGlobalRegistry(hints)).toEqual({
      image: { registry: 'registry.local:5000/app', repository: 'redis' },
    });
    expect(hints.global.imageRegistry).toBe('registry.local:5000/app');
  });
});
