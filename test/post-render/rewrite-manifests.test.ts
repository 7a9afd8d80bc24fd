import { describe, it, expect } from 'vitest';
import { collectAll, collectImages } from '../../src/images/manifest-images.js';
import { rewriteManifests } from '../../src/post-render/rewrite-manifests.js';
import { parseRegistryAddress } from '../../src/common/image-reference.js';
import { InvalidInputError, UsageError } from '../../src/common/errors.js';
import { parseStream, setAt, WORKLOADS } from '../images/manifest-fixtures.js';

const registry = parseRegistryAddress('registry.local:5000/app');
const L = 'registry.local:5000/app';
const E = 'e'.repeat(64);

describe('collectImages', () => {
  it('finds every container list of every workload kind, hooks included', () => {
    const found = collectImages(WORKLOADS);
    expect(found.map((o) => [o.kind, o.name, o.path, o.image])).toEqual([
      ['Pod', 'pod', 'spec.containers[0].image', 'nginx:1.27'],
      ['Pod', 'pod', 'spec.ephemeralContainers[0].image', 'busybox'],
      ['Deployment', 'web', 'spec.template.spec.containers[0].image', 'grafana/grafana:7.3.5'],
      ['Deployment', 'web', 'spec.template.spec.containers[1].image', `docker.io/library/envoy@sha256:${E}`],
      ['Deployment', 'web', 'spec.template.spec.initContainers[0].image', 'quay.io/acme/migrate:2.0'],
      ['StatefulSet', 'db', 'spec.template.spec.containers[0].image', 'bitnami/postgresql:16'],
      ['DaemonSet', 'agent', 'spec.template.spec.containers[0].image', 'quay.io/prometheus/node-exporter:v1.8.2'],
      ['ReplicaSet', 'rs', 'spec.template.spec.containers[0].image', 'ghcr.io/acme/rs:1'],
      ['Job', 'once', 'spec.template.spec.containers[0].image', 'registry.k8s.io/kubectl:v1.33.0'],
      ['CronJob', 'nightly', 'spec.jobTemplate.spec.template.spec.containers[0].image', 'acme/backup:3'],
      ['CronJob', 'nightly', 'spec.jobTemplate.spec.template.spec.initContainers[0].image', 'busybox:1.36'],
      ['ReplicationController', 'legacy', 'spec.template.spec.containers[0].image', 'acme/legacy:0.1'],
      ['Job', 'pre-install', 'spec.template.spec.containers[0].image', 'acme/hook:1'],
      // An operator reads ConfigMap data at run time: a tagged reference under an image key is one.
      ['ConfigMap', 'cfg', 'data.image', 'not-a-pod/so-untouched:1'],
    ]);
    const web = found.find((o) => o.name === 'web')!;
    expect(web).toMatchObject({ namespace: 'shop', source: 'demo/templates/deployment.yaml', document: 1 });
    expect(WORKLOADS.split('\n')[web.line - 1]).toContain("image: 'grafana/grafana:7.3.5'");
    expect(found.find((o) => o.name === 'pre-install')!.hook).toBe('pre-install,pre-upgrade');
  });

  it('follows extra paths for custom resources, with [] and * and an apiVersion filter; image keys of custom kinds count anyway', () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  image: acme/top:1
  templates:
    - container: {image: acme/a:1}
    - container: {image: acme/b:1}
    - script: {}
  sidecars:
    one: {image: acme/s1:1}
    two: {image: acme/s2:1}
---
apiVersion: other.io/v1
kind: Workflow
metadata: {name: other}
spec:
  image: acme/ignored:1
`;
    const found = collectImages(text, [
      { kind: 'Workflow', apiVersion: 'argoproj.io/v1alpha1', path: 'spec.image' },
      { kind: 'Workflow', apiVersion: 'argoproj.io/v1alpha1', path: 'spec.templates[].container.image' },
      { kind: 'Workflow', apiVersion: 'argoproj.io/v1alpha1', path: 'spec.sidecars.*.image' },
    ]);
    expect(found.map((o) => `${o.path}=${o.image}`)).toEqual([
      'spec.image=acme/top:1',
      'spec.templates[0].container.image=acme/a:1',
      'spec.templates[1].container.image=acme/b:1',
      'spec.sidecars.one.image=acme/s1:1',
      'spec.sidecars.two.image=acme/s2:1',
      // Not named by an extra path (other apiVersion), but a tagged `image` key of a custom kind.
      'spec.image=acme/ignored:1',
    ]);
  });

  it('custom resources: image keys in any case style, and registry-only repository keys, never a URL, a bare word or a version', () => {
    const text = `apiVersion: acid.zalan.do/v1
kind: OperatorConfiguration
metadata: {name: pg}
configuration:
  docker_image: ghcr.io/zalando/spilo-17:4.0-p2
  logical_backup: {logical_backup_docker_image: "ghcr.io/zalando/postgres-operator/logical-backup:v1.14.0", logical_backup_schedule: "30 00 * * *"}
  sidecar-image: quay.io/acme/sidecar:2.1
  image_pull_policy: IfNotPresent
  default_image_tag: "1.2.3"
  docker_image_repository: ghcr.io/zalando
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: gpu}
spec:
  driver: {repository: nvcr.io/nvidia, image: driver, version: "570.86.15"}
  toolkit: {imageRegistry: nvcr.io/nvidia/k8s, image: container-toolkit}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app}
spec:
  source: {repoURL: "https://github.com/acme/charts", repository: nginx, targetRevision: main}
  registry: registry-1.docker.io:443/v2/x:y
`;
    const { images, registries } = collectAll(text);
    expect(images.map((o) => `${o.kind} ${o.path}=${o.image}`)).toEqual([
      'OperatorConfiguration configuration.docker_image=ghcr.io/zalando/spilo-17:4.0-p2',
      'OperatorConfiguration configuration.logical_backup.logical_backup_docker_image=ghcr.io/zalando/postgres-operator/logical-backup:v1.14.0',
      'OperatorConfiguration configuration.sidecar-image=quay.io/acme/sidecar:2.1',
    ]);
    expect(registries.map((r) => `${r.kind} ${r.path} (${r.via})=${r.value}`)).toEqual([
      'OperatorConfiguration configuration.docker_image_repository (docker_image_repository)=ghcr.io/zalando',
      'ClusterPolicy spec.driver.repository (repository)=nvcr.io/nvidia',
      'ClusterPolicy spec.toolkit.imageRegistry (imageRegistry)=nvcr.io/nvidia/k8s',
    ]);
  });

  it('refuses a malformed extra path and one that points at a map', () => {
    expect(() => collectImages(WORKLOADS, [{ kind: 'X', path: 'spec..image' }])).toThrow(UsageError);
    expect(() => collectImages(WORKLOADS, [{ kind: 'X', path: 'spec.a[0].image' }])).toThrow(/bad segment "a\[0\]"/);
    expect(() =>
      collectImages('kind: X\nspec: {image: {repository: a}}\n', [{ kind: 'X', path: 'spec.image' }]),
    ).toThrow(/points at a map/);
  });

  it('reads a look-alike kind of another API group as a custom kind; ignores empty images', () => {
    const text = `apiVersion: batch.volcano.sh/v1alpha1
kind: Job
spec: {template: {spec: {containers: [{image: acme/volcano:1}]}}}
---
apiVersion: v1
kind: Pod
spec: {containers: [{name: a, image: ""}, {name: b}]}
`;
    expect(collectImages(text).map((o) => `${o.kind} ${o.path}=${o.image}`)).toEqual([
      'Job spec.template.spec.containers[0].image=acme/volcano:1',
    ]);
  });

  it('walks the items of a List', () => {
    const text = `apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: one}
    spec: {template: {spec: {containers: [{name: a, image: acme/one:1}]}}}
  - apiVersion: v1
    kind: Service
    metadata: {name: svc}
  - apiVersion: batch/v1
    kind: CronJob
    metadata: {name: two}
    spec:
      jobTemplate:
        spec:
          template:
            spec:
              containers:
                - {name: b, image: acme/two:1}
`;
    expect(collectImages(text).map((o) => `${o.kind}/${o.name} ${o.path}`)).toEqual([
      'Deployment/one items[0].spec.template.spec.containers[0].image',
      'CronJob/two items[2].spec.jobTemplate.spec.template.spec.containers[0].image',
    ]);
  });

  it('reports invalid YAML with its line and template', () => {
    const text = '---\n# Source: demo/templates/bad.yaml\nkind: Pod\nspec:\n  a: [1, 2\n  b: c\n';
    let error: InvalidInputError | undefined;
    try {
      collectImages(text);
    } catch (e) {
      error = e as InvalidInputError;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error!.message).toMatch(/not valid YAML \(document 1, line \d+ of the stream\)/);
    expect(error!.file).toBe('demo/templates/bad.yaml');
  });
});

describe('rewriteManifests', () => {
  it('rewrites every image and changes nothing else', () => {
    const { output, rewrites } = rewriteManifests(WORKLOADS, { registry, extraPaths: [] });
    expect(rewrites).toHaveLength(14);
    expect(rewrites).toContainEqual({
      from: 'acme/hook:1',
      to: `${L}/hook:1`,
      kind: 'Job',
      name: 'pre-install',
      path: 'spec.template.spec.containers[0].image',
    });
    // Textually: only the image scalars differ, in their original quoting style.
    const expected = WORKLOADS.replace('image: nginx:1.27', `image: ${L}/nginx:1.27`)
      .replace('image: busybox\n', `image: ${L}/busybox:latest\n`)
      .replace('image: "quay.io/acme/migrate:2.0"', `image: "${L}/migrate:2.0"`)
      .replace("image: 'grafana/grafana:7.3.5'", `image: '${L}/grafana:7.3.5'`)
      .replace(`image: docker.io/library/envoy@sha256:${E}`, `image: ${L}/envoy@sha256:${E}`)
      .replace('image: bitnami/postgresql:16}', `image: ${L}/postgresql:16}`)
      .replace('image: quay.io/prometheus/node-exporter:v1.8.2', `image: ${L}/node-exporter:v1.8.2`)
      .replace('image: ghcr.io/acme/rs:1', `image: ${L}/rs:1`)
      .replace('image: registry.k8s.io/kubectl:v1.33.0', `image: ${L}/kubectl:v1.33.0`)
      .replace('image: busybox:1.36', `image: ${L}/busybox:1.36`)
      .replace('image: acme/backup:3', `image: ${L}/backup:3`)
      .replace('image: acme/legacy:0.1', `image: ${L}/legacy:0.1`)
      .replace('image: acme/hook:1', `image: ${L}/hook:1`)
      .replace('image: not-a-pod/so-untouched:1', `image: ${L}/so-untouched:1`);
    expect(output).toBe(expected);
  });

  it('is idempotent', () => {
    const plan = { registry, extraPaths: [], imagePullSecret: 'regcred' };
    const once = rewriteManifests(WORKLOADS, plan);
    const twice = rewriteManifests(once.output, plan);
    expect(twice.output).toBe(once.output);
    expect(twice.rewrites).toEqual([]);
    expect(twice.images.map((i) => i.image).every((i) => i.startsWith(`${L}/`))).toBe(true);
  });

  it('adds the pull secret to every pod spec, parsing to the same objects otherwise', () => {
    const { output } = rewriteManifests(WORKLOADS, { extraPaths: [], imagePullSecret: 'regcred' });
    const before = parseStream(WORKLOADS);
    const specPaths: Record<number, (string | number)[]> = {
      0: ['spec'],
      1: ['spec', 'template', 'spec'],
      2: ['spec', 'template', 'spec'],
      3: ['spec', 'template', 'spec'],
      4: ['spec', 'template', 'spec'],
      5: ['spec', 'template', 'spec'],
      6: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
      7: ['spec', 'template', 'spec'],
      8: ['spec', 'template', 'spec'],
    };
    for (const [doc, path] of Object.entries(specPaths)) {
      setAt(before[Number(doc)], [...path, 'imagePullSecrets'], [{ name: 'regcred' }]);
    }
    expect(parseStream(output)).toEqual(before);
    // No image changes without a registry.
    expect(collectImages(output).map((o) => o.image)).toEqual(collectImages(WORKLOADS).map((o) => o.image));
  });

  it('merges the pull secret into existing imagePullSecrets of every shape without duplicating', () => {
    const text = `kind: Pod
apiVersion: v1
spec:
  imagePullSecrets:
    - name: other
  containers: [{name: a, image: x/a:1}]
---
kind: Pod
apiVersion: v1
spec:
  imagePullSecrets: [{name: other}]
  containers: [{name: a, image: x/a:1}]
---
kind: Pod
apiVersion: v1
spec:
  imagePullSecrets: []
  containers: [{name: a, image: x/a:1}]
---
kind: Pod
apiVersion: v1
spec:
  imagePullSecrets: # none yet
  containers: [{name: a, image: x/a:1}]
---
kind: Pod
apiVersion: v1
spec:
  imagePullSecrets: ~
  containers: [{name: a, image: x/a:1}]
---
kind: Pod
apiVersion: v1
spec:
  imagePullSecrets:
  - name: regcred
  containers: [{name: a, image: x/a:1}]
---
kind: Pod
apiVersion: v1
spec: {containers: [{name: a, image: x/a:1}]}
---
kind: Pod
apiVersion: v1
spec: {}
`;
    const { output } = rewriteManifests(text, { extraPaths: [], imagePullSecret: 'regcred' });
    const secrets = parseStream(output).map(
      (d) => (d as { spec: { imagePullSecrets?: unknown } }).spec.imagePullSecrets,
    );
    expect(secrets).toEqual([
      [{ name: 'regcred' }, { name: 'other' }],
      [{ name: 'regcred' }, { name: 'other' }],
      [{ name: 'regcred' }],
      [{ name: 'regcred' }],
      [{ name: 'regcred' }],
      [{ name: 'regcred' }],
      [{ name: 'regcred' }],
      [{ name: 'regcred' }],
    ]);
    expect(output).toContain('imagePullSecrets: [{name: "regcred"}] # none yet');
    expect(rewriteManifests(output, { extraPaths: [], imagePullSecret: 'regcred' }).output).toBe(output);
  });

  it('refuses a bad pull secret name and a non-list imagePullSecrets', () => {
    expect(() => rewriteManifests(WORKLOADS, { extraPaths: [], imagePullSecret: 'Bad_Name' })).toThrow(UsageError);
    expect(() =>
      rewriteManifests('kind: Pod\nspec:\n  imagePullSecrets: regcred\n  containers: []\n', {
        extraPaths: [],
        imagePullSecret: 'regcred',
      }),
    ).toThrow(/imagePullSecrets of Pod "" \(spec\) is not a list/);
  });

  it('keeps comments, anchors, block scalars, empty documents and YAML 1.1 scalars byte for byte', () => {
    const text = `# Source: demo/templates/first.yaml
# a comment before everything
---
---
# only a comment
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: tricky # trailing comment
data:
  yes: yes
  on: on
  mode: 0777
  time: 12:30
  y: y
  hex: 0x1F
  exp: 1e3
  under: 1_000
  nul: ~
  date: 2001-12-14
  folded: >
    folded text that is long enough that a printer would refold it at eighty columns, surely
    second line
  literal: |2
      indented more
    than needed
  long: this is a very long plain scalar that goes well beyond eighty columns and would be folded
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: anchored
  labels: &labels
    app: anchored
    enabled: on
spec:
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels: *labels
    spec:
      containers:
        - &main
          name: main
          image: &img acme/app:1 # the app
          args:
            - |
              multi
              line
        - name: copy
          image: *img
      initContainers:
        - <<: *main
          name: init
`;
    const { output, rewrites } = rewriteManifests(text, { registry, extraPaths: [] });
    // The anchored scalar is edited once; every place that uses it is reported.
    expect(output).toBe(text.replace('image: &img acme/app:1 # the app', `image: &img ${L}/app:1 # the app`));
    expect(rewrites.map((r) => r.path)).toEqual([
      'spec.template.spec.containers[0].image',
      'spec.template.spec.containers[1].image',
      'spec.template.spec.initContainers[0].image',
    ]);
    const docs = parseStream(output) as Array<Record<string, Record<string, unknown>> | null>;
    expect(docs).toHaveLength(4);
    expect(docs[0]).toBeNull();
    expect(docs[1]).toBeNull();
    expect(docs[2]!.data).toMatchObject({ mode: 511, time: 750, hex: 31, exp: 1000, under: 1000 });
  });

  it('reports an invalid image with its object, path, line and template', () => {
    const text = `---
# Source: demo/templates/web.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
        - name: web
          image: Acme/Web:1
`;
    let error: InvalidInputError | undefined;
    try {
      rewriteManifests(text, { registry, extraPaths: [] });
    } catch (e) {
      error = e as InvalidInputError;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error!.message).toMatch(
      /"Acme\/Web:1".*lowercase.*document 1: Deployment "web", spec.template.spec.containers\[0\].image, line 11 of the rendered manifests/,
    );
    expect(error!.file).toBe('demo/templates/web.yaml');
    expect(error!.key).toBe('spec.template.spec.containers[0].image');
  });

  it('refuses two images that collide in the local registry', () => {
    const text = `apiVersion: v1
kind: Pod
spec:
  containers:
    - {name: a, image: bitnami/redis:7}
    - {name: b, image: docker.io/library/redis:7}
`;
    expect(() => rewriteManifests(text, { registry, extraPaths: [] })).toThrow(
      /"bitnami\/redis:7" and "docker.io\/library\/redis:7"/,
    );
  });

  it('rewrites extra paths and quotes a rewritten plain scalar only when needed', () => {
    const text = `apiVersion: acme.io/v1
kind: Thing
metadata: {name: t}
spec:
  image: acme/thing:1
  flow: {images: [acme/a:1, "acme/b:2"]}
  block: |-
    acme/c:3
`;
    const { output } = rewriteManifests(text, {
      registry,
      extraPaths: [
        { kind: 'Thing', path: 'spec.image' },
        { kind: 'Thing', path: 'spec.flow.images[]' },
        { kind: 'Thing', path: 'spec.block' },
      ],
    });
    const doc = parseStream(output)[0] as { spec: Record<string, unknown> };
    expect(doc.spec).toEqual({
      image: `${L}/thing:1`,
      flow: { images: [`${L}/a:1`, `${L}/b:2`] },
      block: `${L}/c:3`,
    });
    expect(output).toContain(`flow: {images: [${L}/a:1, "${L}/b:2"]}`);
  });

  it('rewrites and adds pull secrets inside the items of a List, idempotently', () => {
    const text = `apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: one}
    spec:
      template:
        spec:
          containers:
            - {name: a, image: acme/one:1}
  - apiVersion: v1
    kind: Pod
    metadata: {name: two}
    spec: {containers: [{name: b, image: acme/two:1}]}
`;
    const plan = { registry, extraPaths: [], imagePullSecret: 'regcred' };
    const { output, rewrites } = rewriteManifests(text, plan);
    expect(rewrites.map((r) => `${r.name}:${r.to}`)).toEqual([`one:${L}/one:1`, `two:${L}/two:1`]);
    const [list] = parseStream(output) as [{ items: Array<{ spec: Record<string, any> }> }];
    expect(list.items[0]!.spec.template.spec).toEqual({
      imagePullSecrets: [{ name: 'regcred' }],
      containers: [{ name: 'a', image: `${L}/one:1` }],
    });
    expect(list.items[1]!.spec).toEqual({
      imagePullSecrets: [{ name: 'regcred' }],
      containers: [{ name: 'b', image: `${L}/two:1` }],
    });
    expect(rewriteManifests(output, plan).output).toBe(output);
  });

  it('passes a CustomResourceDefinition through unparsed and byte for byte; an extra path naming the kind reads it', () => {
    // Past its head this CRD is not even valid YAML: it is not parsed (helm reads the output
    // after us and names such an error itself). Its image-looking schema default is no image.
    const crd = `---
# Source: op/crds/widgets.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  image: acme/widget:1
  versions: [{name: v1, schema: {openAPIV3Schema: {properties: {image: {type: string, default: acme/widget:1}}}}}]
  broken: [1, 2
`;
    const deployment = `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {template: {spec: {containers: [{name: web, image: acme/web:2}]}}}
`;
    const plan = { registry, extraPaths: [], imagePullSecret: 'regcred' };
    const { output, images } = rewriteManifests(crd + deployment, plan);
    expect(output.startsWith(crd)).toBe(true);
    expect(images.map((i) => `${i.kind}:${i.image}`)).toEqual(['Deployment:acme/web:2']);
    expect(collectImages(crd + deployment).map((i) => i.image)).toEqual(['acme/web:2']);
    // With an extra path for the kind the CRD is parsed like any other document.
    const valid = crd.replace('  broken: [1, 2\n', '');
    const extra = { registry, extraPaths: [{ kind: 'CustomResourceDefinition', path: 'spec.image' }] };
    const read = rewriteManifests(valid + deployment, extra);
    expect(read.images.map((i) => `${i.kind}:${i.image}`)).toEqual([
      'CustomResourceDefinition:acme/widget:1',
      'Deployment:acme/web:2',
    ]);
    expect(read.output).toContain(`  image: ${L}/widget:1\n`);
    expect(() => rewriteManifests(crd, extra)).toThrow(InvalidInputError);
  });

  it('passes an empty stream and a stream with no workloads through unchanged', () => {
    expect(rewriteManifests('', { registry, extraPaths: [], imagePullSecret: 's' }).output).toBe('');
    const text = '---\n# Source: x\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n';
    expect(rewriteManifests(text, { registry, extraPaths: [], imagePullSecret: 's' }).output).toBe(text);
  });
});

describe('rewriteManifests: references inside strings', () => {
  it('rewrites only the reference in flags, env values and ConfigMap data, keeping the rest of each string and its style', () => {
    const text = `apiVersion: apps/v1
kind: Deployment
metadata: {name: operator}
spec:
  template:
    spec:
      containers:
        - name: op
          image: "quay.io/acme/operator:1.0"
          args:
            - --reloader=quay.io/acme/reloader:1.0
            - "--solver-image"
            - 'ghcr.io/acme/solver:2.0'
            - --log-level=info
          env:
            - name: AGENT_IMAGE
              value: quay.io/acme/agent:3.0
---
apiVersion: v1
kind: ConfigMap
metadata: {name: images}
data:
  images.yaml: |
    # the CSI sidecars
    attacher: registry.k8s.io/sig-storage/csi-attacher:v4.8.0
    timeout: 30s
  long: 'a long line that helm 4 may fold: quay.io/acme/agent:3.0 is used here
    and registry.k8s.io/pause:3.10 there'
`;
    const { output, rewrites } = rewriteManifests(text, { registry, extraPaths: [] });
    const expected = text
      .replace('"quay.io/acme/operator:1.0"', `"${L}/operator:1.0"`)
      .replace('--reloader=quay.io/acme/reloader:1.0', `--reloader=${L}/reloader:1.0`)
      .replace("'ghcr.io/acme/solver:2.0'", `'${L}/solver:2.0'`)
      .replace('value: quay.io/acme/agent:3.0', `value: ${L}/agent:3.0`)
      .replace('attacher: registry.k8s.io/sig-storage/csi-attacher:v4.8.0', `attacher: ${L}/csi-attacher:v4.8.0`);
    expect(output).toBe(expected);
    expect(rewrites.map((r) => `${r.path} ${r.to}`)).toEqual([
      `spec.template.spec.containers[0].image ${L}/operator:1.0`,
      `spec.template.spec.containers[0].args[0] ${L}/reloader:1.0`,
      `spec.template.spec.containers[0].args[2] ${L}/solver:2.0`,
      `spec.template.spec.containers[0].env[0].value ${L}/agent:3.0`,
      `data.images.yaml ${L}/csi-attacher:v4.8.0`,
    ]);
    // Idempotent: nothing left to rewrite.
    expect(rewriteManifests(output, { registry, extraPaths: [] }).rewrites).toEqual([]);
  });

  it('rewrites pod templates of custom kinds and kind: List items', () => {
    const text = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: canary}
spec:
  template:
    spec:
      containers: [{name: app, image: "ghcr.io/acme/app:1.2"}]
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Pod
    metadata: {name: in-list}
    spec: {containers: [{name: a, image: "quay.io/acme/listed:1"}]}
`;
    const { output } = rewriteManifests(text, { registry, extraPaths: [] });
    expect(output).toBe(
      text.replace('ghcr.io/acme/app:1.2', `${L}/app:1.2`).replace('quay.io/acme/listed:1', `${L}/listed:1`),
    );
  });

  it('leaves a flag or env value that only names an image a container runs as written, wherever it comes first in the stream', () => {
    const text = `apiVersion: batch/v1
kind: Job
metadata: {name: report}
spec:
  template:
    spec:
      containers:
        - name: report
          image: quay.io/acme/report:1.0
          env:
            - {name: USAGE_REPORT_IMAGE, value: "acme/ingest:3.1.0"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ingest}
spec:
  template:
    spec:
      containers:
        - name: ingest
          image: quay.io/acme/ingest:3.1.0
          args: [--usage-report-image=acme/ingest:3.1.0, --report-image=quay.io/acme/report:1.0]
`;
    const { output } = rewriteManifests(text, { registry, extraPaths: [] });
    expect(output).toBe(
      text
        .replace('image: quay.io/acme/report:1.0', `image: ${L}/report:1.0`)
        .replace('image: quay.io/acme/ingest:3.1.0', `image: ${L}/ingest:3.1.0`)
        .replace('--report-image=quay.io/acme/report:1.0', `--report-image=${L}/report:1.0`),
    );
    expect(output.match(/acme\/ingest:3\.1\.0/g)).toHaveLength(2);
  });

  it("keeps a reference written without a tag without one (its tag sits elsewhere); an image field gets the runtime's :latest as before", () => {
    const text = `apiVersion: v1
kind: ConfigMap
metadata: {name: values}
data:
  values.yaml: |
    collector:
      image: ghcr.io/acme/collector
      tag: 2.4.1
  values.json: |
    {
      "collector": {
        "image": "ghcr.io/acme/collector",
        "tag": "2.4.1"
      }
    }
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: collector
      image: ghcr.io/acme/collector:2.4.1
      args: [--probe-image=quay.io/acme/probe]
    - name: tools
      image: ghcr.io/acme/tools
`;
    const { output } = rewriteManifests(text, { registry, extraPaths: [] });
    expect(output).toBe(
      text
        .replace('image: ghcr.io/acme/collector\n', `image: ${L}/collector\n`)
        .replace('"image": "ghcr.io/acme/collector"', `"image": "${L}/collector"`)
        .replace('image: ghcr.io/acme/collector:2.4.1', `image: ${L}/collector:2.4.1`)
        .replace('--probe-image=quay.io/acme/probe', `--probe-image=${L}/probe`)
        .replace('image: ghcr.io/acme/tools', `image: ${L}/tools:latest`),
    );
  });

  it('rewrites OCI artifacts named in ConfigMap data (list items, oci://) like images, and no URL', () => {
    const D = `sha256:${'a'.repeat(64)}`;
    const text = `apiVersion: v1
kind: ConfigMap
metadata: {name: plugins}
data:
  plugins.yaml: |
    refs:
      - ghcr.io/acme/plugins/geoip:1.4.0
      - "ghcr.io/acme/plugins/auth@${D}"
      - https://plugins.acme.example/geoip:1.4.0
    bundles: [ghcr.io/acme/rules/core:2025.11, https://rules.acme.example/extra:1]
  addon: oci://ghcr.io/acme/charts/addon:0.3.0
`;
    const { output } = rewriteManifests(text, { registry, extraPaths: [] });
    expect(output).toBe(
      text
        .replace('- ghcr.io/acme/plugins/geoip:1.4.0', `- ${L}/geoip:1.4.0`)
        .replace(`"ghcr.io/acme/plugins/auth@${D}"`, `"${L}/auth@${D}"`)
        .replace('[ghcr.io/acme/rules/core:2025.11,', `[${L}/core:2025.11,`)
        .replace('oci://ghcr.io/acme/charts/addon:0.3.0', `oci://${L}/addon:0.3.0`),
    );
  });
});
