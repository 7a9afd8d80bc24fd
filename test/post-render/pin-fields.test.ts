// Pins (src/post-render/pin-fields.ts): fields of rendered objects set to their live values, so that
// helm's upgrade changes nothing at paths something else owns. The pure function on fixture
// streams, the same through the post-render's rewrite (with and without an image rewrite), then
// through the real pinned helm 4 and helm 3 (`helm template` running our post-renderer).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { UsageError } from '../../src/common/errors.js';
import { parseRegistryAddress } from '../../src/common/image-reference.js';
import { splitManifestStream } from '../../src/rendered/manifest-stream.js';
import { checkPinPlan, parsePointer, pinFields, type PinPlan } from '../../src/post-render/pin-fields.js';
import { preparePostRenderer } from '../../src/post-render/post-renderer-setup.js';
import { runPostRender } from '../../src/post-render/post-render-run.js';
import { rewriteManifests } from '../../src/post-render/rewrite-manifests.js';
import { loadChart } from '../../src/inputs/chart.js';
import { withRenderSetup, type SetupRun } from '../../src/run/render-setup.js';
import { createHelmClient } from '../../src/run/base-context.js';
import type { CommonOptions } from '../../src/options/config.js';
import { createLogger } from '../../src/common/logger.js';
import { SecretRegistry } from '../../src/common/secrets.js';
import { helm3, helm4 } from '../helpers.js';
import { widgetCrdYaml } from '../fixtures/widget-crd.js';
import { helmTraits } from '../../src/helm/helm-traits.js';

const DEPLOYMENT = `---
# Source: demo/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    example.com/owner: team-a
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 30
      containers:
        - name: web
          image: nginx:1.27
`;
const OTHER_NAMESPACE = `---
# Source: demo/templates/other.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: elsewhere
spec:
  replicas:   1   # spacing and comment kept: an unmatched document is copied
  template:
    spec:
      containers:
        - {name: web, image: "nginx:1.27"}
`;
const HOOK = `---
# Source: demo/templates/hook.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: quay.io/acme/migrate:2.0
`;
const CLUSTER_ROLE = `---
# Source: demo/templates/clusterrole.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: web
rules: []
`;
const CONFIG_MAP = `---
# Source: demo/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: 'yes'
  octal: 0777
`;
const STREAM = DEPLOYMENT + OTHER_NAMESPACE + HOOK + CLUSTER_ROLE + CONFIG_MAP;

const PLAN: PinPlan = {
  releaseNamespace: 'shop',
  objects: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: 'shop',
      name: 'web',
      fields: [
        { path: '/spec/replicas', value: 5 },
        { path: '/metadata/annotations/webhook.example.com~1injected', value: 'true' },
        { path: '/spec/template/spec/terminationGracePeriodSeconds', absent: true },
        { path: '/metadata/labels/tilde~0key', value: 'on' },
      ],
    },
    { kind: 'Job', namespace: 'shop', name: 'migrate', fields: [{ path: '/spec/backoffLimit', value: 6 }] },
    {
      kind: 'ClusterRole',
      name: 'web',
      fields: [{ path: '/metadata/annotations/rbac.example.com~1aggregated', value: 'yes' }],
    },
  ],
};

const PINNED_DEPLOYMENT = `---
# Source: demo/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    example.com/owner: team-a
    webhook.example.com/injected: "true"
  labels:
    tilde~key: "on"
spec:
  replicas: 5
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:
      containers:
        - name: web
          image: nginx:1.27
`;
const PINNED_HOOK = HOOK.replace('backoffLimit: 2', 'backoffLimit: 6');
const PINNED_CLUSTER_ROLE = CLUSTER_ROLE.replace(
  '  name: web\n',
  '  name: web\n  annotations:\n    rbac.example.com/aggregated: "yes"\n',
);

type PinnedObject = PinPlan['objects'][number];
/** A plan for the release namespace shop that pins `fields` of one object there. */
const pinOne = (
  kind: string,
  name: string,
  fields: PinnedObject['fields'],
  more: Partial<PinnedObject> = {},
): PinPlan => ({
  releaseNamespace: 'shop',
  objects: [{ kind, name, namespace: 'shop', fields, ...more }],
});

describe('pinFields', () => {
  it('sets, adds and removes the pinned fields of matching documents; every other document is copied byte for byte', () => {
    const out = pinFields(splitManifestStream(STREAM), PLAN);
    expect(out).toBe(PINNED_DEPLOYMENT + OTHER_NAMESPACE + PINNED_HOOK + PINNED_CLUSTER_ROLE + CONFIG_MAP);
    // What go-yaml (YAML 1.1) reads back: strings stay strings ("on", "yes", "true").
    const [deployment, , hook, role] = parseAllDocuments(out, { version: '1.1' }).map((d) => d.toJS());
    expect(deployment.spec.replicas).toBe(5);
    expect(deployment.metadata.annotations).toEqual({
      'example.com/owner': 'team-a',
      'webhook.example.com/injected': 'true',
    });
    expect(deployment.metadata.labels).toEqual({ 'tilde~key': 'on' });
    expect(deployment.spec.template.spec).not.toHaveProperty('terminationGracePeriodSeconds');
    expect(hook.spec.backoffLimit).toBe(6);
    expect(role.metadata.annotations).toEqual({ 'rbac.example.com/aggregated': 'yes' });
  });

  it('matches a document without a namespace through the release namespace, and only there', () => {
    const pin = (namespace: string) =>
      pinOne('Deployment', 'web', [{ path: '/spec/replicas', value: 3 }], { namespace });
    const stream = DEPLOYMENT + OTHER_NAMESPACE;
    expect(pinFields(splitManifestStream(stream), pin('shop'))).toBe(
      DEPLOYMENT.replace('replicas: 1', 'replicas: 3').replace(/\{app: web\}/g, '{ app: web }') + OTHER_NAMESPACE,
    );
    // The other namespace's Deployment is matched by its own namespace, and keeps its comment.
    expect(pinFields(splitManifestStream(stream), pin('elsewhere'))).toBe(
      DEPLOYMENT +
        OTHER_NAMESPACE.replace('replicas:   1   #', 'replicas: 3 #').replace(
          '{name: web, image: "nginx:1.27"}',
          '{ name: web, image: "nginx:1.27" }',
        ),
    );
    expect(pinFields(splitManifestStream(stream), pin('nowhere'))).toBe(stream);
  });

  it('leaves a path that cannot be reached: a list item that does not exist, a scalar on the way, a field to remove that is not there', () => {
    const plan = pinOne('Deployment', 'web', [
      { path: '/spec/template/spec/containers/1/image', value: 'x' },
      { path: '/spec/template/spec/containers/-', value: 'x' },
      { path: '/spec/replicas/deeper', value: 'x' },
      { path: '/spec/paused', absent: true },
      { path: '/spec/strategy/rollingUpdate/maxSurge', absent: true },
      { path: '/spec/template/spec/containers/0/image', value: 'nginx:1.28' },
    ]);
    const out = pinFields(splitManifestStream(DEPLOYMENT), plan);
    const [deployment] = parseAllDocuments(out, { version: '1.1' }).map((d) => d.toJS());
    expect(deployment.spec.template.spec.containers).toEqual([{ name: 'web', image: 'nginx:1.28' }]);
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec).not.toHaveProperty('strategy');
    expect(deployment.spec).not.toHaveProperty('paused');
  });

  it('creates intermediate maps, also in place of a null, and sets structured values', () => {
    const text = `---
kind: Service
metadata:
  name: web
  annotations:
spec:
  ports: []
`;
    const plan = pinOne('Service', 'web', [
      { path: '/metadata/annotations/a', value: 'b' },
      { path: '/spec/ipFamilies', value: ['IPv4'] },
      { path: '/spec/sessionAffinityConfig/clientIP/timeoutSeconds', value: 10800 },
    ]);
    expect(pinFields(splitManifestStream(text), plan)).toBe(`---
kind: Service
metadata:
  name: web
  annotations:
    a: b
spec:
  ports: []
  ipFamilies:
    - IPv4
  sessionAffinityConfig:
    clientIP:
      timeoutSeconds: 10800
`);
  });

  it("keeps helm 4's file name annotation when the whole annotations map is pinned", () => {
    const text = `apiVersion: v1
kind: ConfigMap
metadata:
  annotations:
    postrenderer.helm.sh/postrender-filename: demo/templates/cm.yaml
  name: settings
data: {}
`;
    const plan = pinOne('ConfigMap', 'settings', [{ path: '/metadata/annotations', value: { live: 'x' } }]);
    const [cm] = parseAllDocuments(pinFields(splitManifestStream(text), plan)).map((d) => d.toJS());
    expect(cm.metadata.annotations).toEqual({
      live: 'x',
      'postrenderer.helm.sh/postrender-filename': 'demo/templates/cm.yaml',
    });
  });

  it('an apiVersion in the pin must name the same group', () => {
    const plan = (apiVersion: string) =>
      pinOne('Deployment', 'web', [{ path: '/spec/replicas', value: 2 }], { apiVersion });
    expect(pinFields(splitManifestStream(DEPLOYMENT), plan('apps/v1beta2'))).toContain('replicas: 2');
    expect(pinFields(splitManifestStream(DEPLOYMENT), plan('example.com/v1'))).toBe(DEPLOYMENT);
  });

  it('reads JSON pointers as RFC 6901 says and refuses what is not one', () => {
    expect(parsePointer('/metadata/annotations/a~1b~0c')).toEqual(['metadata', 'annotations', 'a/b~c']);
    expect(parsePointer('/a/~01')).toEqual(['a', '~1']);
    expect(() => parsePointer('')).toThrow(UsageError);
    expect(() => parsePointer('spec/replicas')).toThrow(UsageError);
    expect(() => parsePointer('/a~2')).toThrow(UsageError);
    expect(() =>
      checkPinPlan({ releaseNamespace: 'x', objects: [{ kind: 'Deployment', name: '', fields: [] }] }),
    ).toThrow(UsageError);
  });
});

describe('pins in the post-render rewrite', () => {
  it('pins only: images are neither searched nor checked, unmatched documents are copied, the report counts pinned documents', async () => {
    // An image reference the image plan would refuse: a pins-only run must not start refusing it.
    const stream =
      STREAM + '---\nkind: Pod\nmetadata: {name: odd}\nspec:\n  containers:\n    - {name: a, image: "Not/Valid:1"}\n';
    const outcome = await runPostRender({ extraPaths: [], pins: PLAN }, tmp, stream);
    expect(outcome.exitCode, outcome.stderr).toBe(0);
    expect(outcome.stdout).toBe(pinFields(splitManifestStream(stream), PLAN));
    expect(outcome.report).toMatchObject({
      ok: true,
      documents: 6,
      images: { occurrences: 0, distinct: 0 },
      rewrites: [],
      pinned: 3,
    });
  });

  it('with a registry, a pinned document gets both its image rewrite and its pins', () => {
    const registry = parseRegistryAddress('registry.local:5000/app');
    const plain = rewriteManifests(STREAM, { registry, extraPaths: [] });
    const pinned = rewriteManifests(STREAM, { registry, extraPaths: [], pins: PLAN });
    expect(pinned.rewrites).toEqual(plain.rewrites);
    const [deployment, other, hook, role, cm] = splitManifestStream(pinned.output).map((p) => p.text);
    const plainPieces = splitManifestStream(plain.output).map((p) => p.text);
    expect(deployment).toBe(
      PINNED_DEPLOYMENT.replace('image: nginx:1.27', 'image: registry.local:5000/app/nginx:1.27'),
    );
    expect(hook).toBe(PINNED_HOOK.replace('quay.io/acme/migrate:2.0', 'registry.local:5000/app/migrate:2.0'));
    expect(role).toBe(PINNED_CLUSTER_ROLE);
    expect([other, cm]).toEqual([plainPieces[1], plainPieces[4]]);
  });

  it('pins a CustomResourceDefinition that the spill file would otherwise hand out as bytes', async () => {
    const crd = widgetCrdYaml({
      rest: `  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service: {name: conv, namespace: shop}
`,
    });
    const plan: PinPlan = {
      releaseNamespace: 'shop',
      objects: [
        {
          kind: 'CustomResourceDefinition',
          name: 'widgets.example.com',
          fields: [{ path: '/spec/conversion/webhook/clientConfig/caBundle', value: 'Q0EK' }],
        },
      ],
    };
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    const outcome = await runPostRender(
      { extraPaths: [], pins: plan },
      tmp,
      crd + DEPLOYMENT,
      (c) => void chunks.push(typeof c === 'string' ? c : decoder.decode(c, { stream: true })),
    );
    expect(outcome.exitCode, outcome.stderr).toBe(0);
    expect(chunks.join('')).toBe(
      crd.replace(
        '        service: {name: conv, namespace: shop}\n',
        '        service: { name: conv, namespace: shop }\n        caBundle: Q0EK\n',
      ) + DEPLOYMENT,
    );
  });
});

// --- Through the real helm 3 and helm 4 -------------------------------------------------------

const HELM = { 3: helm3, 4: helm4 } as const;
let tmp: string;
let chart: string;

async function writeChart(dir: string): Promise<void> {
  await mkdir(join(dir, 'templates'), { recursive: true });
  await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: demo\nversion: 0.1.0\n');
  await writeFile(join(dir, 'values.yaml'), 'replicas: 1\n');
  await writeFile(
    join(dir, 'templates/deployment.yaml'),
    // The stream's Deployment, its replicas from the values; then one in another namespace.
    `${asTemplate(DEPLOYMENT).replace('replicas: 1', 'replicas: {{ .Values.replicas }}')}---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: elsewhere
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
`,
  );
  // The hook and the ClusterRole render as the stream fixtures above have them.
  await writeFile(join(dir, 'templates/hook.yaml'), asTemplate(HOOK));
  await writeFile(join(dir, 'templates/clusterrole.yaml'), asTemplate(CLUSTER_ROLE));
}

/** A stream fixture as the template file it was rendered from: without helm's `---` and `# Source:` lines. */
function asTemplate(doc: string): string {
  return doc.replace(/^---\n# Source: .*\n/, '');
}

/** Helm's own state in the test dir; helm 4 needs a writable cache to load any plugin. */
function helmHomes(dir: string): Record<string, string> {
  return {
    HELM_CACHE_HOME: join(dir, 'cache'),
    HELM_CONFIG_HOME: join(dir, 'config'),
    HELM_DATA_HOME: join(dir, 'data'),
  };
}

type Doc = {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec: Record<string, any>;
};
const docsOf = (stdout: string) =>
  parseAllDocuments(stdout, { version: '1.1' })
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'pin-fields-'));
  chart = join(tmp, 'chart');
  await writeChart(chart);
});
afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe.each([4, 3] as const)('helm %i template with a pins-only post-renderer', (major) => {
  it('renders the live values at the pinned paths, and nothing else changed', async () => {
    const workDir = join(tmp, `helm-${major}`);
    const setup = await preparePostRenderer({ workDir, helm: helmTraits(major), plan: { extraPaths: [], pins: PLAN } });
    const result = await execa(HELM[major], ['template', 'demo', chart, '--namespace', 'shop', ...setup.helmArgs], {
      reject: false,
      env: { ...setup.env, ...helmHomes(workDir) },
    }).finally(setup.dispose);
    expect(result.exitCode, result.stderr).toBe(0);
    const plain = await execa(HELM[major], ['template', 'demo', chart, '--namespace', 'shop'], {
      env: helmHomes(workDir),
    });
    const byKey = (docs: Doc[]) =>
      Object.fromEntries(docs.map((d) => [`${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`, d]));
    const got = byKey(docsOf(result.stdout));
    const want = byKey(docsOf(plain.stdout));
    const web = want['Deployment//web']!;
    web.metadata.annotations!['webhook.example.com/injected'] = 'true';
    (web.metadata as Record<string, unknown>).labels = { 'tilde~key': 'on' };
    web.spec.replicas = 5;
    delete web.spec.template.spec.terminationGracePeriodSeconds;
    want['ClusterRole//web']!.metadata.annotations = { 'rbac.example.com/aggregated': 'yes' };
    // Helm 4 post-renders hooks (pinned like any object); helm 3 never hands them over.
    if (major === 4) want['Job//migrate']!.spec.backoffLimit = 6;
    expect(got).toEqual(want);
    expect(got['Deployment/elsewhere/web']!.spec.replicas).toBe(1);
    expect(got['Job//migrate']!.spec.backoffLimit).toBe(major === 4 ? 6 : 2);
    expect(setup.reports).toMatchObject([{ ok: true, pinned: major === 4 ? 3 : 2 }]);
  });

  it('withRenderSetup serves the pins without a registry: helm template runs through it', async () => {
    const dir = join(tmp, `airgap-${major}`);
    const { setup, stdout } = await templateThroughWithAirgap(major, dir, {});
    expect(setup.postRendererArgs[0]).toBe('--post-renderer');
    expect(setup.plan).toBeUndefined();
    expect(setup.rendered).toBeUndefined();
    const docs = docsOf(stdout);
    expect(docs.find((d) => d.kind === 'Deployment' && d.metadata.namespace === undefined)!.spec.replicas).toBe(5);
    expect(docs.find((d) => d.kind === 'Deployment' && d.metadata.namespace === 'elsewhere')!.spec.replicas).toBe(1);
  });
});

it('withRenderSetup with a registry: the pins join the image rewrite (helm 4)', async () => {
  const dir = join(tmp, 'airgap-registry');
  const { setup, stdout } = await templateThroughWithAirgap(4, dir, { registry: 'registry.local:5000/app' });
  expect(setup.rewrite?.pins).toBe(PLAN);
  const docs = docsOf(stdout);
  const web = docs.find((d) => d.kind === 'Deployment' && d.metadata.namespace === undefined)!;
  expect(web.spec.replicas).toBe(5);
  expect(web.spec.template.spec.containers[0].image).toBe('registry.local:5000/app/nginx:1.27');
  expect(docs.find((d) => d.kind === 'Job')!.spec).toMatchObject({
    backoffLimit: 6,
    template: { spec: { containers: [{ image: 'registry.local:5000/app/migrate:2.0' }] } },
  });
});

it('withRenderSetup refuses a pin that is not a JSON pointer before helm runs', async () => {
  const o = demoOptions(helm4);
  const { helm, logger } = await silentHelm(o);
  let called = false;
  const bad: PinPlan = {
    releaseNamespace: 'shop',
    objects: [{ kind: 'Deployment', name: 'web', fields: [{ path: 'spec.replicas', value: 5 }] }],
  };
  await expect(
    withRenderSetup(
      planRun(o, await loadChart({ chart, appDir: o.appDir }), helm, logger),
      async () => (called = true),
      { pins: bad },
    ),
  ).rejects.toThrow(/Pinned path "spec.replicas" \(Deployment web\) is not a JSON pointer/);
  expect(called).toBe(false);
});

async function templateThroughWithAirgap(major: 3 | 4, dir: string, extra: Partial<CommonOptions>) {
  await mkdir(dir, { recursive: true });
  const o = demoOptions(HELM[major], extra);
  const { helm, logger } = await silentHelm(o);
  const loaded = await loadChart({ chart, appDir: o.appDir });
  const values = { files: [], sets: [] };
  const homes = helmHomes(dir);
  return withRenderSetup(
    planRun(o, loaded, helm, logger),
    async ({ airgap: setup }) => ({
      setup,
      stdout: await helm.template(
        {
          release: 'demo',
          chart,
          namespace: 'shop',
          values,
          postRendererArgs: setup.postRendererArgs,
          includeCrds: true,
        },
        { ...setup.env, ...homes },
      ),
    }),
    { pins: PLAN },
  );
}

/** The options of a run of the demo chart into namespace shop, with no app dir or values. */
function demoOptions(helmBin: string, extra: Partial<CommonOptions> = {}): CommonOptions {
  return {
    chart,
    appDir: '/nonexistent',
    baseValues: [],
    values: [],
    sets: [],
    namespace: 'shop',
    imagePaths: [],
    helmBin,
    logFormat: 'json',
    logLevel: 'silent',
    ...extra,
  };
}

/** A helm client for `o`, and the silent logger it logs to. */
async function silentHelm(o: CommonOptions) {
  const secrets = new SecretRegistry();
  const logger = createLogger({ format: 'json', level: 'silent', secrets, destination: 2 });
  return { helm: await createHelmClient(o, { secrets, logger }), logger };
}

/** What the run plan reads of a run: the options, chart, helm and logger, and no value layers. */
function planRun(
  o: CommonOptions,
  loaded: Awaited<ReturnType<typeof loadChart>>,
  helm: Awaited<ReturnType<typeof createHelmClient>>,
  logger: ReturnType<typeof createLogger>,
): SetupRun {
  return {
    o,
    chart: loaded,
    helm,
    release: 'demo',
    logger,
    resolved: { layers: [], sets: [] },
    signal: new AbortController().signal,
  };
}
