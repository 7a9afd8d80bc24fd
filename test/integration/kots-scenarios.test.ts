// kots/ rendered as KOTS renders it (test/kots-render) for the scenarios a customer meets: the
// API server accepts every rendered object (server-side dry run), the installer accepts the
// rendered values, and running the installer exactly as the rendered Job would (its env, its
// mounts as files) installs what the answers asked for.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { getJson, kubectl, waitFor } from '../cluster/kube.js';
import { chartDir, helm4, runCli, tempDir, type CliResult } from '../helpers.js';
import { history, installerEvents, kinds, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { kotsRender, type ConfigValue, type KotsRenderOptions, type KotsRenderResult } from './kots-render.js';
import { startReceiver } from './notify-receiver.js';

const opts = () => ({ kubeconfig: kubeconfig() });
const namespace = namespacesDeletedAfterAll();

const objects = (r: KotsRenderResult) => r.documents.map((d) => parse(d.content) as any);
const find = (r: KotsRenderResult, kind: string, name?: string) => {
  const o = objects(r).find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!o) throw new Error(`no ${kind} ${name ?? ''} among ${r.documents.map((d) => d.source).join(', ')}`);
  return o;
};

/** Renders, checks KOTS keeps every document, and runs the server-side dry run of all of them. */
async function renderAndDryRun(o: KotsRenderOptions): Promise<KotsRenderResult> {
  const r = await kotsRender(o);
  expect(r.exitCode, r.stderr).toBe(0);
  expect(r.dropped).toEqual([]);
  const dry = await kubectl(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], {
    ...opts(),
    namespace: o.namespace,
    input: r.yaml,
    reject: false,
  });
  expect(dry.exitCode, dry.stderr).toBe(0);
  return r;
}

/**
 * Runs the built CLI as the rendered Job's container would: its args and env, with the mounts
 * (/config/...) materialised as files from the rendered ConfigMap and Secrets.
 */
async function runAsJob(
  r: KotsRenderResult,
  command: string,
  extraEnv: Record<string, string> = {},
): Promise<CliResult> {
  const job = find(r, 'Job');
  const pod = job.spec.template.spec;
  const container = pod.containers[0];
  const root = tempDir('kots-job');
  for (const mount of container.volumeMounts as { name: string; mountPath: string }[]) {
    const volume = pod.volumes.find((v: any) => v.name === mount.name);
    const dir = join(root, mount.mountPath);
    mkdirSync(dir, { recursive: true });
    let files: Record<string, string> = {};
    if (volume.configMap) {
      const data: Record<string, string> = find(r, 'ConfigMap', volume.configMap.name).data ?? {};
      // `items` mounts only the keys it names, each at its path, as the kubelet does.
      const items = volume.configMap.items as { key: string; path: string }[] | undefined;
      files = items ? Object.fromEntries(items.filter((i) => i.key in data).map((i) => [i.path, data[i.key]!])) : data;
    }
    if (volume.secret) {
      const secret = objects(r).find((x) => x.kind === 'Secret' && x.metadata.name === volume.secret.secretName);
      if (!secret && !volume.secret.optional)
        throw new Error(`Secret ${volume.secret.secretName} missing: the pod would never start`);
      files = { ...secret?.stringData };
      for (const [k, v] of Object.entries<string>(secret?.data ?? {})) files[k] = Buffer.from(v, 'base64').toString();
    }
    for (const [k, v] of Object.entries(files)) writeFileSync(join(dir, k), v);
  }
  const env: Record<string, string> = {};
  // Values only: the downward API's (its pod name and namespace) exist only in a pod.
  for (const e of container.env as { name: string; value?: string }[])
    if (e.value !== undefined) env[e.name] = e.value.replaceAll('/config/', `${root}/config/`);
  // The Job runs `install` (the app's release plan); `values` and `render` read the same env and
  // files for the storefront release's chart (they take one chart).
  expect(container.args).toEqual(['install']);
  const oneChart: Record<string, string> = command === 'install' ? {} : { HELM_INSTALLER_CHART: chartDir };
  return runCli([command], {
    env: {
      ...env,
      ...oneChart,
      KUBECONFIG: kubeconfig(),
      HELM_INSTALLER_TIMEOUT: '120s',
      HELM_INSTALLER_TERMINATION_LOG: join(root, 'termination-log'),
      ...extraEnv,
    },
  });
}

async function userValues(release: string, ns: string): Promise<any> {
  return JSON.parse(
    execFileSync(helm4, ['get', 'values', release, '--namespace', ns, '-o', 'json'], {
      env: { ...process.env, KUBECONFIG: kubeconfig() },
    }).toString(),
  );
}

const PASSWORD = 'it\'s "q" #x: {y} - z \\';
const required = (extra: Record<string, ConfigValue> = {}): Record<string, ConfigValue> => ({
  database_password: { valuePlaintext: 'pw-1' },
  ...extra,
});

/**
 * The app installed as KOTS runs it, then rendered again with the config `box` ticked and the
 * storefront's web replicas changed to 3 (a change the box must keep from the cluster).
 */
async function installedThenTicked(ns: string, box: string): Promise<KotsRenderResult> {
  const installed = await runAsJob(await renderAndDryRun({ namespace: ns, values: required() }), 'install');
  expect(installed.exitCode, installed.stderr).toBe(0);
  return renderAndDryRun({ namespace: ns, values: required({ [box]: { value: '1' }, web_replicas: { value: '3' } }) });
}

/** The storefront's web Deployment's resourceVersion: unchanged when nothing wrote to it. */
const webVersion = async (ns: string): Promise<string> =>
  (await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() })).metadata.resourceVersion;

describe('kots/ rendered by KOTS, applied and installed', () => {
  it('online defaults: the Job as shipped, a PVC of the default size, status informers that name real workloads', async () => {
    const ns = await namespace('kots-online');
    const r = await renderAndDryRun({ namespace: ns, sequence: 3, values: required() });
    const job = find(r, 'Job');
    expect(job.metadata.name).toBe('storefront-installer-3');
    expect(job.spec.template.spec.containers[0].image).toBe('ghcr.io/acme-shop/storefront-installer:1.4.0');
    // A rebuild under the same tag reaches a node that ran the earlier one (e2e-airgap proves it).
    expect(job.spec.template.spec.containers[0].imagePullPolicy).toBe('Always');
    // The vendor's image is private: online, KOTS pulls it through the Replicated proxy.
    const proxied = await renderAndDryRun({
      namespace: ns,
      sequence: 3,
      values: required(),
      proxyPrivateImages: 'proxy.replicated.com',
    });
    expect(find(proxied, 'Job').spec.template.spec.containers[0].image).toBe(
      'proxy.replicated.com/proxy/storefront/ghcr.io/acme-shop/storefront-installer:1.4.0',
    );
    expect(objects(r).filter((o) => o.metadata.name === 'storefront-tls')).toEqual([]); // excluded: no HTTPS chosen
    const env = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
    expect(env).toMatchObject({
      HELM_INSTALLER_NAMESPACE: ns,
      HELM_INSTALLER_REGISTRY: '',
      HELM_INSTALLER_IMAGE_PULL_SECRET: '',
    });

    const values = await runAsJob(r, 'values', { HELM_INSTALLER_LOG_LEVEL: 'error' });
    expect(values.exitCode, values.stderr).toBe(0);
    expect(parse(values.stdout)).toMatchObject({
      web: { hostname: 'shop.example.com', replicaCount: 2, ingress: { enabled: false, tls: false } },
      database: { storage: { enabled: true, size: '20Gi' } },
      cache: { enabled: true },
      report: { recipients: [] },
    });

    const install = await runAsJob(r, 'install');
    expect(install.exitCode, install.stderr).toBe(0);
    const claims = await kinds(ns, 'pvc');
    expect(claims.map((c) => [c.metadata.name, c.spec.resources.requests.storage])).toEqual([
      ['data-storefront-db-0', '20Gi'],
    ]);
    // "Cache size" medium, the default: the cache release's own file, as app/plan/cache.yaml ships it.
    const cache = await getJson(['get', 'deployment', 'storefront-cache'], { namespace: ns, ...opts() });
    expect(cache.spec.template.spec.containers[0].resources.limits.memory).toBe('512Mi');
    expect(
      (await getJson(['get', 'configmap', 'storefront-cache'], { namespace: ns, ...opts() })).data['redis.conf'],
    ).toContain('maxmemory 400mb\n');
    expect(r.stderr).toBe('');
    // Each informer (kind/name, in the namespace KOTS deploys to) names a workload the install created.
    const informers = (await kotsRender({ namespace: ns, values: required() })).statusInformers;
    expect(informers).toEqual([
      'deployment/promotions-operator',
      'deployment/storefront-web',
      'statefulset/storefront-db',
      'deployment/storefront-cache',
    ]);
    for (const informer of informers) await getJson(['get', informer], { namespace: ns, ...opts() });
  });

  it('"Cache size": the cache release gets its own values file, Redis\'s maxmemory with the memory limit above it', async () => {
    const ns = await namespace('kots-cache-size');
    const cacheFile = async (values: Record<string, ConfigValue>) => {
      const r = await renderAndDryRun({ namespace: ns, values: required(values) });
      const volumes = find(r, 'Job').spec.template.spec.volumes;
      expect(volumes.find((v: any) => v.name === 'customer-values').configMap.items).toContainEqual({
        key: 'storefront-cache.yaml',
        path: 'storefront-cache.yaml',
      });
      return parse(find(r, 'ConfigMap', 'storefront-customer-values').data['storefront-cache.yaml']);
    };
    const sized = (maxmemory: string, memory: string) => ({ maxmemory, resources: { limits: { memory } } });
    expect(await cacheFile({})).toEqual(sized('400mb', '512Mi'));
    expect(await cacheFile({ cache_size: { value: 'small' } })).toEqual(sized('200mb', '256Mi'));
    expect(await cacheFile({ cache_size: { value: 'large' } })).toEqual(sized('800mb', '1Gi'));
    // The item hidden with the cache off: the file still parses (it goes to no installed release).
    expect(await cacheFile({ enable_cache: { value: '0' }, cache_size: { value: 'large' } })).toMatchObject({
      maxmemory: expect.stringMatching(/^\d+mb$/),
    });
    // The installer gives the file to the cache release, and only to it.
    const r = await renderAndDryRun({ namespace: ns, values: required({ cache_size: { value: 'small' } }) });
    const install = await runAsJob(r, 'install');
    expect(install.exitCode, install.stderr).toBe(0);
    expect(await userValues('storefront-cache', ns)).toMatchObject(sized('200mb', '256Mi'));
    expect(await userValues('storefront', ns)).not.toHaveProperty('maxmemory');
    const cache = await getJson(['get', 'deployment', 'storefront-cache'], { namespace: ns, ...opts() });
    expect(cache.spec.template.spec.containers[0].resources.limits.memory).toBe('256Mi');
    expect(
      (await getJson(['get', 'configmap', 'storefront-cache'], { namespace: ns, ...opts() })).data['redis.conf'],
    ).toContain('maxmemory 200mb\n');
  });

  it('the Redis cache box unticked: the Job KOTS renders leaves the cache release out of the plan, and the next deploy uninstalls it', async () => {
    const ns = await namespace('kots-cache-off');
    const on = await renderAndDryRun({ namespace: ns, values: required() });
    const first = await runAsJob(on, 'install');
    expect(first.exitCode, first.stderr).toBe(0);
    expect((await history('storefront-cache', ns)).map((h) => h.status)).toEqual(['deployed']);

    const off = await renderAndDryRun({ namespace: ns, values: required({ enable_cache: { value: '0' } }) });
    const env = Object.fromEntries(
      find(off, 'Job').spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]),
    );
    expect(env.STOREFRONT_CACHE_ENABLED).toBe('false');
    expect(
      (await kotsRender({ namespace: ns, values: required({ enable_cache: { value: '0' } }) })).statusInformers,
    ).toEqual(['deployment/promotions-operator', 'deployment/storefront-web', 'statefulset/storefront-db']);
    const second = await runAsJob(off, 'install');
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toContain(`${ns}/storefront-cache: uninstalled (no longer in the plan)`);
    expect(await history('storefront-cache', ns)).toEqual([]);
    expect(
      (await kubectl(['get', 'deployment', 'storefront-cache'], { ...opts(), namespace: ns, reject: false })).exitCode,
    ).not.toBe(0);
    // The storefront no longer points at a cache (the same box sets its cache.enabled).
    expect(
      (await getJson(['get', 'configmap', 'storefront-web'], { ...opts(), namespace: ns })).data.STOREFRONT_CACHE_URL,
    ).toBe('');
  });

  it('airgap: the installer image and every chart image come from the local registry, with KOTS pull secret', async () => {
    const ns = await namespace('kots-airgap');
    const registry = { host: 'registry.internal:5443', namespace: 'acme', username: 'kots', password: 'pull-pass' };
    const r = await renderAndDryRun({ namespace: ns, sequence: 4, values: required(), registry, airgap: true });
    const job = find(r, 'Job');
    const pod = job.spec.template.spec;
    expect(pod.containers[0].image).toBe('registry.internal:5443/acme/storefront-installer:1.4.0');
    expect(pod.containers[0].imagePullPolicy).toBe('Always');
    expect(pod.imagePullSecrets).toEqual([{ name: 'storefront-registry' }]);
    const env = Object.fromEntries(pod.containers[0].env.map((e: any) => [e.name, e.value]));
    expect(env).toMatchObject({
      HELM_INSTALLER_REGISTRY: 'registry.internal:5443/acme',
      HELM_INSTALLER_IMAGE_PULL_SECRET: 'storefront-registry',
      HELM_INSTALLER_PULL_SECRET_FILE: '/config/pull-secret/.dockerconfigjson',
    });
    expect(find(r, 'Secret', 'storefront-registry').type).toBe('kubernetes.io/dockerconfigjson');

    // No registry here holds the images: the preflight is the one step skipped (KWOK pulls nothing).
    const install = await runAsJob(r, 'install', { HELM_INSTALLER_SKIP_PREFLIGHT: 'true' });
    expect(install.exitCode, install.stderr).toBe(0);
    const deploy = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() });
    expect(deploy.spec.template.spec.containers.map((c: any) => c.image)).toEqual([
      'registry.internal:5443/acme/storefront-web:2.3.1',
    ]);
    expect(deploy.spec.template.spec.initContainers.map((c: any) => c.image)).toEqual([
      'registry.internal:5443/acme/busybox:1.36.1',
    ]);
    expect(deploy.spec.template.spec.imagePullSecrets).toContainEqual({ name: 'storefront-registry' });
    const db = await getJson(['get', 'statefulset', 'storefront-db'], { namespace: ns, ...opts() });
    expect(db.spec.template.spec.containers[0].image).toBe('registry.internal:5443/acme/postgres:16.4');
  });

  it('RBAC: two installs in two namespaces each get their own grants (cluster-scoped names per namespace), none cluster-admin', async () => {
    const installs = [await namespace('kots-rbac-a'), await namespace('kots-rbac-b')];
    const clusterScoped: string[][] = [];
    try {
      for (const ns of installs) {
        const r = await renderAndDryRun({ namespace: ns, values: required() });
        const rbac = objects(r).filter(
          (o) => o.apiVersion === 'rbac.authorization.k8s.io/v1' || o.kind === 'ServiceAccount',
        );
        expect(rbac.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
          `ClusterRole/storefront-installer-crds-${ns}`,
          `ClusterRoleBinding/storefront-installer-crds-${ns}`,
          'Role/helm-installer',
          'RoleBinding/helm-installer',
          'ServiceAccount/helm-installer',
        ]);
        expect(objects(r).filter((o) => o.roleRef?.name === 'cluster-admin')).toEqual([]);
        clusterScoped.push(
          ['clusterrolebinding', `storefront-installer-crds-${ns}`],
          ['clusterrole', `storefront-installer-crds-${ns}`],
        );
        await kubectl(['apply', '-f', '-'], {
          ...opts(),
          namespace: ns,
          input: rbac.map((o) => stringify(o)).join('---\n'),
        });
      }
      // The second install took nothing from the first: each ServiceAccount may do its chart's
      // work in its own namespace and apply the CRD, and nothing in the other namespace.
      const can = async (ns: string, args: string[]) =>
        (
          await kubectl(['auth', 'can-i', ...args, `--as=system:serviceaccount:${ns}:helm-installer`], {
            ...opts(),
            reject: false,
          })
        ).stdout.trim();
      for (const [ns, other] of [
        [installs[0]!, installs[1]!],
        [installs[1]!, installs[0]!],
      ] as const) {
        await waitFor(
          `${ns} may patch the CRD`,
          async () => (await can(ns, ['patch', 'customresourcedefinitions.apiextensions.k8s.io'])) === 'yes',
          { timeoutMs: 20_000 },
        );
        expect(await can(ns, ['create', 'statefulsets.apps', '-n', ns])).toBe('yes');
        expect(await can(ns, ['update', 'leases.coordination.k8s.io', '-n', ns])).toBe('yes');
        expect(await can(ns, ['create', 'statefulsets.apps', '-n', other])).toBe('no');
        expect(await can(ns, ['delete', 'customresourcedefinitions.apiextensions.k8s.io'])).toBe('no');
      }
    } finally {
      for (const [kind, name] of clusterScoped) await kubectl(['delete', kind!, name!, '--ignore-not-found'], opts());
    }
  });

  it('preview only: the Job KOTS renders with the box ticked prints the plan, reports its count, and changes nothing', async () => {
    const ns = await namespace('kots-preview');
    const r = await installedThenTicked(ns, 'preview_only');
    expect(find(r, 'Job').spec.template.spec.containers[0].env).toContainEqual({
      name: 'HELM_INSTALLER_PLAN_ONLY',
      value: 'true',
    });
    const before = await webVersion(ns);
    const termination = join(tempDir('kots-preview'), 'termination-log');
    const preview = await runAsJob(r, 'install', { HELM_INSTALLER_TERMINATION_LOG: termination });
    expect(preview.exitCode, preview.stderr).toBe(0);
    expect(preview.stdout).toContain('~ change Deployment ' + ns + '/storefront-web');
    // One line per release of the app's plan: only the storefront's replicas change.
    expect(readFileSync(termination, 'utf8')).toBe(
      `plan only: release plan of 3 release(s); the install would make app revision 2 (from app revision 1); a failure takes every release back to app revision 1\n  ${ns}/promotions-operator: nothing; 0 to create, 0 to change, 0 to delete\n  ${ns}/storefront: upgrade; 0 to create, 1 to change, 0 to delete\n  ${ns}/storefront-cache: nothing; 0 to create, 0 to change, 0 to delete\n`,
    );
    expect(await webVersion(ns)).toBe(before);
    expect(await history('storefront', ns)).toHaveLength(1);
  });

  it('pause automatic changes: the Job KOTS renders with the box ticked changes nothing and records a Suspended Event', async () => {
    const ns = await namespace('kots-pause');
    const r = await installedThenTicked(ns, 'pause_changes');
    expect(find(r, 'Job').spec.template.spec.containers[0].env).toContainEqual({
      name: 'HELM_INSTALLER_SUSPEND',
      value: 'true',
    });
    const before = await webVersion(ns);
    const paused = await runAsJob(r, 'install');
    expect(paused.exitCode, paused.stderr).toBe(0);
    expect(paused.stderr).toContain(
      `helm-installer: suspended; nothing changed (${ns}/promotions-operator, ${ns}/storefront, ${ns}/storefront-cache)`,
    );
    expect(await webVersion(ns)).toBe(before);
    expect(await history('storefront', ns)).toHaveLength(1);
    // Per release of the plan: installed, then suspended.
    const reasons = (await installerEvents(ns)).map((e) => e.reason);
    expect(reasons.slice(0, 3)).toEqual(['Installed', 'Installed', 'Installed']);
    expect(reasons.slice(3)).toEqual(['Suspended', 'Suspended', 'Suspended']);
  });

  it('pause and preview both ticked: the pause wins, changes nothing, shows no preview, and its Suspended Events say why', async () => {
    const ns = await namespace('kots-pause-preview');
    const r = await renderAndDryRun({
      namespace: ns,
      values: required({ pause_changes: { value: '1' }, preview_only: { value: '1' } }),
    });
    const env = find(r, 'Job').spec.template.spec.containers[0].env;
    expect(env).toContainEqual({ name: 'HELM_INSTALLER_SUSPEND', value: 'true' });
    expect(env).toContainEqual({ name: 'HELM_INSTALLER_PLAN_ONLY', value: 'true' });
    const both = await runAsJob(r, 'install');
    expect(both.exitCode, both.stderr).toBe(0);
    expect(both.stderr).toContain(
      `helm-installer: suspended; nothing changed (${ns}/promotions-operator, ${ns}/storefront, ${ns}/storefront-cache)`,
    );
    expect(both.stderr).toContain('no preview: "preview only" is ticked too, and a pause wins');
    expect(both.stdout).not.toContain('to create');
    expect((await getJson(['get', 'deployments'], { namespace: ns, ...opts() })).items).toEqual([]);
    const events = await installerEvents(ns);
    expect(events.map((e) => e.reason)).toEqual(['Suspended', 'Suspended', 'Suspended']);
    for (const e of events)
      expect(e.note).toContain('no preview made: HELM_INSTALLER_PLAN_ONLY=true too, and a pause wins');
  });

  // Namespaces whose names YAML reads as another type unquoted: a number and a YAML 1.1 boolean.
  it.each(['123', 'on'])(
    'namespace %s: every string KOTS renders stays a string; the API server takes the Job and its bindings',
    async (ns) => {
      await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=120s'], {
        ...opts(),
        timeoutMs: 130_000,
      });
      await kubectl(['create', 'namespace', ns], opts());
      try {
        const r = await renderAndDryRun({ namespace: ns, values: required() });
        const job = find(r, 'Job');
        expect(job.spec.template.spec.containers[0].env).toContainEqual({
          name: 'HELM_INSTALLER_NAMESPACE',
          value: ns,
        });
        expect(find(r, 'RoleBinding').subjects).toEqual([
          { kind: 'ServiceAccount', name: 'helm-installer', namespace: ns },
        ]);
        expect(find(r, 'ClusterRoleBinding').subjects).toEqual([
          { kind: 'ServiceAccount', name: 'helm-installer', namespace: ns },
        ]);
        // Applied for real (not only a dry run): the API server keeps the strings as written.
        await kubectl(['apply', '-f', '-'], { ...opts(), namespace: ns, input: r.yaml });
        const applied = await getJson(['get', 'job', job.metadata.name], { namespace: ns, ...opts() });
        expect(applied.spec.template.spec.containers[0].env).toContainEqual({
          name: 'HELM_INSTALLER_NAMESPACE',
          value: ns,
        });
        expect(
          (await getJson(['get', 'clusterrolebinding', `storefront-installer-crds-${ns}`], opts())).subjects[0]
            .namespace,
        ).toBe(ns);
        // The installer reads the rendered env as the Job would.
        const values = await runAsJob(r, 'values', { HELM_INSTALLER_LOG_LEVEL: 'error' });
        expect(values.exitCode, values.stderr).toBe(0);
      } finally {
        for (const kind of ['clusterrolebinding', 'clusterrole'])
          await kubectl(['delete', kind, `storefront-installer-crds-${ns}`, '--ignore-not-found'], opts());
        await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], opts());
      }
    },
  );

  it('notifications: the URL (a password item) reaches the installer only through its Secret, and the receiver gets one Slack POST per release', async () => {
    const ns = await namespace('kots-notify');
    const token = 'T0KEN-kots-notify-2b7f0e';
    const hook = await startReceiver('ok');
    try {
      const url = hook.url(token);
      const r = await renderAndDryRun({
        namespace: ns,
        values: required({
          notify_url: { valuePlaintext: url },
          notify_format: { value: 'slack' },
          notify_timeout: { value: '3s' },
        }),
      });
      expect(find(r, 'Secret', 'storefront-notify').stringData).toEqual({ url });
      for (const o of objects(r).filter((x) => x.metadata.name !== 'storefront-notify'))
        expect(JSON.stringify(o), `${o.kind}/${o.metadata.name}`).not.toContain(token);
      const env = find(r, 'Job').spec.template.spec.containers[0].env;
      expect(env).toEqual(
        expect.arrayContaining([
          { name: 'HELM_INSTALLER_NOTIFY_URL_FILE', value: '/config/notify/url' },
          { name: 'HELM_INSTALLER_NOTIFY_FORMAT', value: 'slack' },
          { name: 'HELM_INSTALLER_NOTIFY_TIMEOUT', value: '3s' },
        ]),
      );
      const installed = await runAsJob(r, 'install');
      expect(installed.exitCode, installed.stderr).toBe(0);
      expect(installed.stdout + installed.stderr).not.toContain(token);
      // One POST per release of the app's plan; the storefront's in full.
      expect(hook.received.map((p) => p.path)).toEqual([1, 2, 3].map(() => `/hooks/${token}?key=${token}-q`));
      const texts = hook.received.map((p) => JSON.parse(p.body).text as string);
      expect(texts.map((t) => /release `([^`]+)`/.exec(t)?.[1]).sort()).toEqual([
        'promotions-operator',
        'storefront',
        'storefront-cache',
      ]);
      const text = texts.find((t) => t.includes('release `storefront`'))!;
      const seconds = /, ([0-9.]+)s\)$/.exec(text)?.[1];
      expect(text).toBe(
        `:white_check_mark: *Installed*: release \`storefront\` in namespace \`${ns}\`: installed as revision 1 (chart storefront-1.4.0) (chart 1.4.0, revision 1, ${seconds}s)`,
      );
    } finally {
      await hook.close();
    }
    // Unanswered: an empty URL file (no webhook: every other scenario runs with it), the defaults.
    const off = await renderAndDryRun({ namespace: ns, values: required() });
    expect(find(off, 'Secret', 'storefront-notify').stringData).toEqual({ url: '' });
    expect(find(off, 'Job').spec.template.spec.containers[0].env).toEqual(
      expect.arrayContaining([
        { name: 'HELM_INSTALLER_NOTIFY_FORMAT', value: 'json' },
        { name: 'HELM_INSTALLER_NOTIFY_TIMEOUT', value: '5s' },
      ]),
    );
  });

  it("test after each deploy: the box ticked turns on the chart's test and --test; the install runs it and keeps the release", async () => {
    const ns = await namespace('kots-test');
    const r = await renderAndDryRun({ namespace: ns, values: required({ run_tests: { value: '1' } }) });
    expect(find(r, 'Job').spec.template.spec.containers[0].env).toContainEqual({
      name: 'HELM_INSTALLER_TEST',
      value: 'true',
    });
    const installed = await runAsJob(r, 'install');
    expect(installed.exitCode, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('"msg":"tests passed (1)"');
    expect((await userValues('storefront', ns)).tests).toEqual({ enabled: true });
    expect((await getJson(['get', 'pod', 'storefront-test-web'], { namespace: ns, ...opts() })).status.phase).toBe(
      'Succeeded',
    );
  });

  it('persistence off: no PVC, the database on an emptyDir', async () => {
    const ns = await namespace('kots-nopvc');
    const r = await renderAndDryRun({ namespace: ns, values: required({ persistence_enabled: { value: '0' } }) });
    const install = await runAsJob(r, 'install');
    expect(install.exitCode, install.stderr).toBe(0);
    expect(await kinds(ns, 'pvc')).toEqual([]);
    const db = await getJson(['get', 'statefulset', 'storefront-db'], { namespace: ns, ...opts() });
    expect(db.spec.volumeClaimTemplates).toBeUndefined();
    expect(db.spec.template.spec.volumes).toContainEqual({ name: 'data', emptyDir: {} });
  });

  it('a password made of YAML-special characters reaches the release and its Secret exactly', async () => {
    const ns = await namespace('kots-password');
    const r = await renderAndDryRun({
      namespace: ns,
      values: required({ database_password: { valuePlaintext: PASSWORD } }),
    });
    // Not in the ConfigMap, not in the installer's output.
    expect(JSON.stringify(find(r, 'ConfigMap'))).not.toContain('#x: {y}');
    const install = await runAsJob(r, 'install');
    expect(install.exitCode, install.stderr).toBe(0);
    expect(install.stdout + install.stderr).not.toContain('#x: {y}');
    expect((await userValues('storefront', ns)).database.password).toBe(PASSWORD);
    const secret = await getJson(['get', 'secret', 'storefront-db'], { namespace: ns, ...opts() });
    expect(Buffer.from(secret.data.password, 'base64').toString()).toBe(PASSWORD);
  });

  it('newlines: KOTS keeps every document; a password keeps them exactly, a hostname is refused by the chart schema', async () => {
    const ns = await namespace('kots-newline');
    // Newlines, a tab, characters Go's JSON escapes (<>& and U+2028) and one beyond the BMP.
    const password = `${PASSWORD}\nline two: [x]\t<a&b> \u2028 \u{1F600}\n`;
    const r = await renderAndDryRun({
      namespace: ns,
      values: required({ database_password: { valuePlaintext: password } }),
    });
    expect(parse(find(r, 'Secret', 'storefront-customer-secrets').stringData['storefront.yaml'])).toEqual({
      database: { password },
    });
    const values = await runAsJob(r, 'values', { HELM_INSTALLER_LOG_LEVEL: 'error' });
    expect(values.exitCode, values.stderr).toBe(0);
    expect(values.stdout).not.toContain('line two');
    // What helm itself reads from the mounted file, exactly.
    const secretsFile = join(tempDir('helm-read'), 'values.yaml');
    writeFileSync(secretsFile, find(r, 'Secret', 'storefront-customer-secrets').stringData['storefront.yaml']);
    const rendered = execFileSync(helm4, [
      'template',
      'x',
      chartDir,
      '-f',
      secretsFile,
      '--show-only',
      'templates/database/secret.yaml',
    ]).toString();
    expect(Buffer.from(parse(rendered).data.password, 'base64').toString()).toBe(password);

    const bad = await renderAndDryRun({ namespace: ns, values: required({ hostname: { value: 'a\nb: c' } }) });
    expect(parse(find(bad, 'ConfigMap').data['storefront.yaml']).web.hostname).toBe('a\nb: c');
    const refused = await runAsJob(bad, 'install');
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toMatch(/at '\/web\/hostname'/);
  });

  it('advanced: a values override wins over the screen, HTTPS from uploaded certificate files, report recipients as a list', async () => {
    const ns = await namespace('kots-advanced');
    const dir = tempDir('tls');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        '/CN=shop.customer.example',
        '-days',
        '2',
        '-keyout',
        join(dir, 'tls.key'),
        '-out',
        join(dir, 'tls.crt'),
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(join(dir, 'tls.crt'));
    const key = readFileSync(join(dir, 'tls.key'));
    const override = '# from the Advanced group\nweb:\n  replicaCount: 3\n  config:\n    logLevel: "debug"\n';
    const r = await renderAndDryRun({
      namespace: ns,
      values: required({
        hostname: { value: 'shop.customer.example' },
        web_replicas: { value: '2' },
        expose_with_ingress: { value: '1' },
        ingress_tls: { value: '1' },
        tls_certificate: { value: cert.toString('base64'), filename: 'tls.crt' },
        tls_private_key: { value: key.toString('base64'), filename: 'tls.key' },
        report_recipients: { value: 'finance@customer.example, ops@customer.example' },
        values_override: { value: override },
      }),
    });
    const tls = find(r, 'Secret', 'storefront-tls');
    expect(Buffer.from(tls.data['tls.crt'], 'base64').equals(cert)).toBe(true);
    expect(Buffer.from(tls.data['tls.key'], 'base64').equals(key)).toBe(true);
    expect(find(r, 'ConfigMap').data['override.yaml']).toBe(override);

    const install = await runAsJob(r, 'install');
    expect(install.exitCode, install.stderr).toBe(0);
    const deploy = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() });
    expect(deploy.spec.replicas).toBe(3);
    const config = await getJson(['get', 'configmap', 'storefront-web'], { namespace: ns, ...opts() });
    expect(config.data.STOREFRONT_LOG_LEVEL).toBe('debug');
    expect(config.data.STOREFRONT_PUBLIC_URL).toBe('https://shop.customer.example');
    const ingress = await getJson(['get', 'ingress', 'storefront-web'], { namespace: ns, ...opts() });
    expect(ingress.spec.tls).toEqual([{ hosts: ['shop.customer.example'], secretName: 'storefront-tls' }]);
    const cron = await getJson(['get', 'cronjob'], { namespace: ns, ...opts() });
    const recipients = cron.items[0].spec.jobTemplate.spec.template.spec.containers[0].env.find(
      (e: any) => e.name === 'REPORT_RECIPIENTS',
    ).value;
    expect(JSON.parse(recipients)).toEqual(['finance@customer.example', 'ops@customer.example']);
  });

  it('invalid YAML in the override: the installer refuses it naming the file and line, and installs nothing', async () => {
    const ns = await namespace('kots-badoverride');
    const r = await renderAndDryRun({
      namespace: ns,
      values: required({ values_override: { value: 'web:\n  replicaCount: 3\n   bad: [\n' } }),
    });
    const install = await runAsJob(r, 'install');
    expect(install.exitCode).toBe(3);
    expect(install.stderr).toMatch(/override\/storefront\.yaml:\d+: invalid YAML/);
    expect(
      execFileSync(helm4, ['list', '--namespace', ns, '-q'], { env: { ...process.env, KUBECONFIG: kubeconfig() } })
        .toString()
        .trim(),
    ).toBe('');
  });
});
