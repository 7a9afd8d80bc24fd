import { describe, it, expect } from 'vitest';
import { parse } from 'yaml';
import { InvalidInputError } from '../../src/common/errors.js';
import { isKotsLocalName, parseImageReference, parseRegistryAddress } from '../../src/common/image-reference.js';
import {
  buildImageCatalog,
  listedImages,
  requiredLocalImages,
  sourceImages,
  targetOf,
  whyImage,
} from '../../src/images/image-catalog.js';
import { parseImagesAnnotation } from '../../src/inputs/chart-images.js';
import { collectImages } from '../../src/images/manifest-images.js';

const registry = parseRegistryAddress('registry.local:5000/acme');
const D = 'sha256:' + 'd'.repeat(64);

const STREAM = `apiVersion: apps/v1
kind: Deployment
metadata: {name: operator}
spec:
  template:
    spec:
      containers:
        - name: op
          image: quay.io/prometheus-operator/prometheus-operator:v0.81.0
          args:
            - --prometheus-config-reloader=quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0
            - --log-level=info
          env:
            - {name: SOLVER_IMAGE, value: "quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: csi-images}
data:
  images.yaml: |
    attacher: registry.k8s.io/sig-storage/csi-attacher:v4.8.0
    pause: registry.k8s.io/pause:3.10@${D}
`;

describe('isKotsLocalName', () => {
  it('accepts only <address>/<one component> with a tag or a digest, not both', () => {
    const yes = ['registry.local:5000/acme/redis:7', `registry.local:5000/acme/redis@${D}`];
    const no = [
      'registry.local:5000/acme/bitnami/redis:7',
      'registry.local:5000/redis:7',
      `registry.local:5000/acme/redis:7@${D}`,
      'docker.io/acme/redis:7',
    ];
    for (const r of yes) expect(isKotsLocalName(parseImageReference(r), registry), r).toBe(true);
    for (const r of no) expect(isKotsLocalName(parseImageReference(r), registry), r).toBe(false);
  });
});

describe('buildImageCatalog', () => {
  it('plans every image, embedded ones included, with its exact KOTS name and every place it came from', () => {
    const plan = buildImageCatalog({ occurrences: collectImages(STREAM), registry });
    expect(plan.images.map((i) => [i.source, i.target])).toEqual([
      [
        'quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0',
        'registry.local:5000/acme/prometheus-config-reloader:v0.81.0',
      ],
      [
        'quay.io/prometheus-operator/prometheus-operator:v0.81.0',
        'registry.local:5000/acme/prometheus-operator:v0.81.0',
      ],
      ['registry.k8s.io/pause:3.10@' + D, 'registry.local:5000/acme/pause@' + D],
      ['registry.k8s.io/sig-storage/csi-attacher:v4.8.0', 'registry.local:5000/acme/csi-attacher:v4.8.0'],
    ]);
    expect(requiredLocalImages(plan)).toEqual([
      'registry.local:5000/acme/csi-attacher:v4.8.0',
      'registry.local:5000/acme/pause@' + D,
      'registry.local:5000/acme/prometheus-config-reloader:v0.81.0',
      'registry.local:5000/acme/prometheus-operator:v0.81.0',
    ]);
    const why = whyImage(plan, 'quay.io/prometheus-operator/prometheus-config-reloader:v0.81.0');
    expect(why).toHaveLength(2);
    expect(why[0]).toMatch(
      /^Deployment operator, spec.template.spec.containers\[0\].args\[0\], via --prometheus-config-reloader, line 11/,
    );
    expect(why[1]).toMatch(
      /^Deployment operator, spec.template.spec.containers\[0\].env\[0\].value, via env SOLVER_IMAGE, line 14/,
    );
    // The local name finds the same places.
    expect(whyImage(plan, 'registry.local:5000/acme/prometheus-config-reloader:v0.81.0')).toEqual(why);
    expect(whyImage(plan, 'registry.local:5000/acme/csi-attacher:v4.8.0')[0]).toMatch(
      /^ConfigMap csi-images, data.images.yaml, via attacher/,
    );
  });

  it('refuses a collision, naming both images, whatever command asks', () => {
    const occurrences = collectImages(`kind: Pod
apiVersion: v1
metadata: {name: p}
spec: {containers: [{name: a, image: "bitnami/redis:7"}, {name: b, image: "redis:7"}]}
`);
    expect(() => buildImageCatalog({ occurrences, registry })).toThrow(
      /"bitnami\/redis:7" and "redis:7".*registry.local:5000\/acme\/redis:7/,
    );
    // Without a registry there is nothing to collide.
    expect(buildImageCatalog({ occurrences }).images).toHaveLength(2);
  });

  it('counts a hinted <registry>/<org>/<name> as NOT local: it gets its KOTS name', () => {
    const occurrences = collectImages(`kind: Pod
apiVersion: v1
metadata: {name: p}
spec: {containers: [{name: a, image: "registry.local:5000/acme/grafana/grafana:11.0.0"}, {name: b, image: "registry.local:5000/acme/redis:7"}]}
`);
    const plan = buildImageCatalog({ occurrences, registry });
    expect(plan.images.map((i) => [i.source, i.target, i.local])).toEqual([
      ['registry.local:5000/acme/grafana/grafana:11.0.0', 'registry.local:5000/acme/grafana:11.0.0', false],
      ['registry.local:5000/acme/redis:7', 'registry.local:5000/acme/redis:7', true],
    ]);
  });

  it('adds the images of the helm.sh/images annotation', () => {
    const annotated = parseImagesAnnotation(
      '- name: worker\n  image: ghcr.io/acme/worker:2.0\n- image: busybox:1.36\n',
      'demo',
      (t) => parse(t),
    );
    const plan = buildImageCatalog({ occurrences: [], annotated, registry });
    expect(requiredLocalImages(plan)).toEqual([
      'registry.local:5000/acme/busybox:1.36',
      'registry.local:5000/acme/worker:2.0',
    ]);
    expect(whyImage(plan, 'ghcr.io/acme/worker:2.0')).toEqual(['helm.sh/images annotation of chart demo (worker)']);
    expect(() => parseImagesAnnotation('name: x', 'demo', (t) => parse(t))).toThrow(InvalidInputError);
    expect(() => parseImagesAnnotation('- name: x', 'demo', (t) => parse(t))).toThrow(/entry 1 has no image/);
  });

  it('names the place of an invalid reference', () => {
    const occurrences = collectImages(
      'kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {containers: [{name: a, image: "Bad:Image"}]}\n',
    );
    expect(() => buildImageCatalog({ occurrences, registry })).toThrow(
      /document 1: Pod "p", spec.containers\[0\].image, line 4 of the rendered manifests/,
    );
  });

  it('a reference found only in flags or env values that shares its KOTS name with an image a container runs only names it: kept out, left as written, warned', () => {
    const occurrences = collectImages(`kind: Deployment
apiVersion: apps/v1
metadata: {name: ingest}
spec:
  template:
    spec:
      containers:
        - name: ingest
          image: quay.io/acme/ingest:3.1.0
          args: [--usage-report-image=acme/ingest:3.1.0]
          env: [{name: USAGE_REPORT_IMAGE, value: "acme/ingest:3.1.0"}]
`);
    for (const r of [registry, undefined]) {
      const plan = buildImageCatalog({ occurrences, registry: r });
      expect(plan.images.map((i) => [i.source, i.nameOf?.reason ?? 'image'])).toEqual([
        ['docker.io/acme/ingest:3.1.0', 'collision'],
        ['quay.io/acme/ingest:3.1.0', 'image'],
      ]);
      expect(sourceImages(plan)).toEqual(['quay.io/acme/ingest:3.1.0']);
      expect(listedImages(plan)).toEqual([
        { reference: r ? 'registry.local:5000/acme/ingest:3.1.0' : 'quay.io/acme/ingest:3.1.0', artifact: false },
      ]);
      expect(plan.warnings).toEqual([
        expect.stringMatching(
          /^image name only: acme\/ingest:3\.1\.0 \(Deployment ingest, spec\.template\.spec\.containers\[0\]\.args\[0\], via --usage-report-image, line 10 .*\) names quay\.io\/acme\/ingest:3\.1\.0, which a container runs, under the same local name \((registry\.local:5000\/acme|<local registry>)\/ingest:3\.1\.0\): that image is kept; this reference is left as written and not listed$/,
        ),
        expect.stringMatching(
          /^image name only: acme\/ingest:3\.1\.0 \(Deployment ingest, spec\.template\.spec\.containers\[0\]\.env\[0\]\.value, via env USAGE_REPORT_IMAGE, line 11 /,
        ),
      ]);
    }
    const plan = buildImageCatalog({ occurrences, registry });
    expect(requiredLocalImages(plan)).toEqual(['registry.local:5000/acme/ingest:3.1.0']);
    expect(targetOf(plan, 'acme/ingest:3.1.0')).toBeUndefined();
    expect(targetOf(plan, 'quay.io/acme/ingest:3.1.0')).toBe('registry.local:5000/acme/ingest:3.1.0');
    expect(whyImage(plan, 'acme/ingest:3.1.0')).toHaveLength(2);
  });

  it('still refuses a collision that is not only a name: two images that run, a ConfigMap reference, two flags', () => {
    const pod = (containers: string, data = '') => `kind: Pod
apiVersion: v1
metadata: {name: p}
spec: {containers: [${containers}]}
${data ? `---\nkind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\ndata: {images: "${data}"}\n` : ''}`;
    const cases = [
      pod(
        '{name: a, image: "quay.io/acme/ingest:3", args: [--image=acme/ingest:3]}, {name: b, image: "ghcr.io/acme/ingest:3"}',
      ),
      pod('{name: a, image: "quay.io/acme/ingest:3"}', 'ghcr.io/acme/ingest:3'),
      pod('{name: a, image: "busybox:1", args: [--a-image=quay.io/acme/ingest:3, --b-image=ghcr.io/acme/ingest:3]}'),
    ];
    for (const stream of cases)
      expect(() => buildImageCatalog({ occurrences: collectImages(stream), registry }), stream).toThrow(
        /would both be pushed to "registry\.local:5000\/acme\/ingest:3"/,
      );
  });

  // (With its tag under a `tag` key, the name and the tag are one reference: name-tag-pairs.ts.)
  it('an untagged reference inside strings, for a repository the chart deploys with a tag, is a name: not listed, its local name has no tag', () => {
    const occurrences = collectImages(`kind: ConfigMap
apiVersion: v1
metadata: {name: values}
data:
  values.yaml: |
    collector:
      image: ghcr.io/acme/collector
      version: 2.4.1
    probe:
      image: ghcr.io/acme/probe
---
kind: Pod
apiVersion: v1
metadata: {name: p}
spec: {containers: [{name: a, image: "ghcr.io/acme/collector:2.4.1"}]}
`);
    const plan = buildImageCatalog({ occurrences, registry });
    expect(plan.images.map((i) => [i.source, i.target, i.nameOf?.reason ?? 'image'])).toEqual([
      ['ghcr.io/acme/collector:2.4.1', 'registry.local:5000/acme/collector:2.4.1', 'image'],
      ['ghcr.io/acme/collector:latest', 'registry.local:5000/acme/collector', 'untagged'],
      // Nothing else names this repository: the runtime's default tag is what it would pull.
      ['ghcr.io/acme/probe:latest', 'registry.local:5000/acme/probe:latest', 'image'],
    ]);
    expect(requiredLocalImages(plan)).toEqual([
      'registry.local:5000/acme/collector:2.4.1',
      'registry.local:5000/acme/probe:latest',
    ]);
    expect(sourceImages(plan)).toEqual(['ghcr.io/acme/collector:2.4.1', 'ghcr.io/acme/probe']);
    expect(plan.warnings).toEqual([]);
  });

  it('marks OCI artifacts (ConfigMap list items, oci://) unless a container also runs the reference', () => {
    const occurrences = collectImages(`kind: ConfigMap
apiVersion: v1
metadata: {name: plugins}
data:
  plugins.yaml: |
    refs:
      - ghcr.io/acme/plugins/geoip:1.4.0
      - ghcr.io/acme/tools/shell:1.0
  addon: oci://ghcr.io/acme/charts/addon:0.3.0
---
kind: Pod
apiVersion: v1
metadata: {name: p}
spec: {containers: [{name: a, image: "ghcr.io/acme/tools/shell:1.0"}]}
`);
    const plan = buildImageCatalog({ occurrences, registry });
    expect(listedImages(plan)).toEqual([
      { reference: 'registry.local:5000/acme/addon:0.3.0', artifact: true },
      { reference: 'registry.local:5000/acme/geoip:1.4.0', artifact: true },
      { reference: 'registry.local:5000/acme/shell:1.0', artifact: false },
    ]);
    expect(listedImages({ ...plan, registry: undefined })).toEqual([
      { reference: 'ghcr.io/acme/charts/addon:0.3.0', artifact: true },
      { reference: 'ghcr.io/acme/plugins/geoip:1.4.0', artifact: true },
      { reference: 'ghcr.io/acme/tools/shell:1.0', artifact: false },
    ]);
    expect(whyImage(plan, 'ghcr.io/acme/plugins/geoip:1.4.0')).toEqual([
      expect.stringMatching(/^ConfigMap plugins, data\.plugins\.yaml, via refs, line 5 of the rendered manifests$/),
    ]);
  });
});
