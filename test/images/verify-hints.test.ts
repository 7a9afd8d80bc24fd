import { describe, it, expect } from 'vitest';
import { parseRegistryAddress } from '../../src/common/image-reference.js';
import type { ImageOccurrence } from '../../src/images/manifest-images.js';
import { compareHintedImages } from '../../src/images/verify-hints.js';

const registry = parseRegistryAddress('registry.local:5000/acme');
const D = 'sha256:' + 'f'.repeat(64);
const at = (image: string, name = 'web', path = 'spec.template.spec.containers[0].image'): ImageOccurrence => ({
  image,
  kind: 'Deployment',
  name,
  path,
  document: 0,
  line: 1,
});

describe('compareHintedImages', () => {
  it('accepts an image left alone or under its exact KOTS name', () => {
    expect(
      compareHintedImages(
        [at('docker.io/bitnami/redis:7'), at('nginx:1', 'b')],
        [at('registry.local:5000/acme/redis:7'), at('nginx:1', 'b')],
        registry,
      ),
    ).toEqual([]);
    // KOTS's own rule: a tag beside a digest is dropped by the post-render, the name is exact.
    expect(
      compareHintedImages([at(`quay.io/a/b:1@${D}`)], [at(`registry.local:5000/acme/b:1@${D}`)], registry),
    ).toEqual([]);
  });

  it('refuses a full path under the registry, another tag, or another image', () => {
    const wrong = [
      ['docker.io/grafana/grafana:11.0.0', 'registry.local:5000/acme/grafana/grafana:11.0.0'],
      ['docker.io/istio/pilot:1.24.2', 'registry.local:5000/acme/pilot:latest'],
      ['docker.io/bitnami/redis:7', 'registry.local:5000/acme/valkey:7'],
    ];
    for (const [before, after] of wrong) {
      expect(compareHintedImages([at(before!)], [at(after!)], registry)).toEqual([
        {
          at: 'Deployment web, spec.template.spec.containers[0].image, line 1 of the rendered manifests',
          expected: before,
          got: after,
        },
      ]);
    }
  });

  it('accepts a location that appears with the hints only when it holds a planned local name', () => {
    expect(
      compareHintedImages([at('nginx:1')], [at('nginx:1'), at('registry.local:5000/acme/nginx:1', 'extra')], registry),
    ).toEqual([]);
    expect(
      compareHintedImages([at('nginx:1')], [at('nginx:1'), at('registry.local:5000/acme/other:1', 'extra')], registry),
    ).toHaveLength(1);
  });
});
