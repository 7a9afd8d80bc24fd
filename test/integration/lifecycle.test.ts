// The install lifecycle against the real control plane: each case spawns the built CLI and then
// checks the cluster (helm's release records and the API objects).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNamespace, getJson, kubectl } from '../cluster/kube.js';
import { appDir, helm3, tempDir } from '../helpers.js';
import {
  copyChart,
  helmCalls,
  history,
  install,
  kinds,
  kubeconfig,
  releaseRecord,
  removeFile,
} from './cluster-helpers.js';

const customer = join(appDir, 'examples', 'customer-values.yaml');
const opts = () => ({ kubeconfig: kubeconfig() });

async function podsReady(namespace: string): Promise<{ name: string; ready: boolean }[]> {
  const pods = await kinds(namespace, 'pods');
  return pods
    .filter((p) => !p.metadata.ownerReferences?.some((o: { kind: string }) => o.kind === 'Job'))
    .map((p) => ({
      name: p.metadata.name,
      ready:
        p.status?.conditions?.some(
          (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
        ) ?? false,
    }));
}

describe('install lifecycle (helm 4)', () => {
  it('fresh install: revision 1 deployed, every workload pod Ready, the migration hook Job succeeded', async () => {
    const ns = await createNamespace('fresh', opts());
    const r = await install('storefront', ns, ['--values', customer]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/installed release storefront/);

    const h = await history('storefront', ns);
    expect(h.map((x) => [x.revision, x.status])).toEqual([[1, 'deployed']]);
    const pods = await podsReady(ns);
    expect(pods.map((p) => p.name).sort()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^storefront-web-/),
        'storefront-db-0',
        expect.stringMatching(/^storefront-cache-/),
      ]),
    );
    expect(pods.filter((p) => !p.ready)).toEqual([]);
    const claims = await kinds(ns, 'pvc');
    expect(claims.map((c) => c.status.phase)).toEqual(['Bound']);
    const rel = await releaseRecord('storefront', ns);
    const migrate = rel.hooks?.find((hk) => hk.kind === 'Job');
    expect(migrate?.name).toBe('storefront-migrate');
    expect(migrate?.last_run?.phase).toBe('Succeeded');
  });

  it('bad values in an existing namespace: exit 3 naming the value before helm upgrade runs, with --skip-preflight too; nothing installed, no Lease left', async () => {
    const ns = await createNamespace('badvalues', opts());
    const calls = (stdout: string) => helmCalls(stdout).map((c) => `${c.argv[0]} ${c.argv[1]}`);
    // The render the RBAC preflight needs (the bundled chart ships crds/: rendered before helm
    // upgrade applies them); no values probe: the digests read the values files as written.
    const checked = await install('storefront', ns, ['--set', 'web.replicaCount=many', '--log-level', 'debug']);
    expect(checked.exitCode, checked.stderr).toBe(3);
    expect(checked.stderr).toMatch(/replicaCount/);
    expect(calls(checked.stdout)).toEqual(['template storefront']);
    // No preflight: the same render check (one check path), no RBAC or registry check after it.
    const skipped = await install('storefront', ns, [
      '--set',
      'web.replicaCount=many',
      '--log-level',
      'debug',
      '--skip-preflight',
    ]);
    expect(skipped.exitCode, skipped.stderr).toBe(3);
    expect(skipped.stderr).toMatch(/replicaCount/);
    expect(calls(skipped.stdout)).toEqual(['template storefront']);
    expect(await history('storefront', ns)).toEqual([]);
    expect(
      (await kubectl(['get', 'lease', 'helm-installer-storefront'], { ...opts(), namespace: ns, reject: false }))
        .exitCode,
    ).not.toBe(0);
  });

  it('a chart whose values.yaml does not parse: exit 3 naming the file (read while helm renders), with and without preflight, in an existing namespace and in one it would create; nothing changed', async () => {
    const chart = copyChart((dir) =>
      writeFileSync(
        join(dir, 'values.yaml'),
        `${readFileSync(join(dir, 'values.yaml'), 'utf8')}\nweb: {replicaCount: 2\n`,
      ),
    );
    const valuesFile = join(chart, 'values.yaml');
    const ns = await createNamespace('badchartvalues', opts());
    const absent = `${ns}-new`;
    for (const [namespace, extra] of [
      [ns, []],
      [ns, ['--skip-preflight']],
      [absent, []],
    ] as const) {
      const r = await install('storefront', namespace, ['--chart', chart, '--values', customer, ...extra]);
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toContain(`${valuesFile}: `);
      expect(await history('storefront', namespace)).toEqual([]);
    }
    expect(
      (await kubectl(['get', 'lease', 'helm-installer-storefront'], { ...opts(), namespace: ns, reject: false }))
        .exitCode,
    ).not.toBe(0);
    expect((await kubectl(['get', 'namespace', absent], { ...opts(), reject: false })).exitCode).not.toBe(0);
  });

  it('upgrade with changed customer values: revision 2, the change live in the object', async () => {
    const ns = await createNamespace('upgrade', opts());
    expect((await install('storefront', ns, ['--values', customer])).exitCode).toBe(0);
    // The admin changes two answers on the config screen; KOTS re-renders the ConfigMap.
    const changed = join(tempDir('vals'), 'customer.yaml');
    writeFileSync(
      changed,
      readFileSync(customer, 'utf8')
        .replace('hostname: shop.customer.example', 'hostname: store.customer.example')
        .replace('replicaCount: 3', 'replicaCount: 5'),
    );
    const r = await install('storefront', ns, ['--values', changed]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/upgraded release storefront/);
    const h = await history('storefront', ns);
    expect(h.map((x) => [x.revision, x.status])).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    const deploy = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() });
    expect(deploy.spec.replicas).toBe(5);
    const ingress = await getJson(['get', 'ingress', 'storefront-web'], { namespace: ns, ...opts() });
    expect(ingress.spec.rules[0].host).toBe('store.customer.example');
  });

  it('a newer chart version that drops a resource: the resource is gone after the upgrade', async () => {
    const ns = await createNamespace('prune', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    expect((await kinds(ns, 'cronjobs')).map((c) => c.metadata.name)).toEqual(['storefront-report']);
    const v2 = copyChart((dir) => {
      removeFile(dir, 'templates/report/cronjob.yaml');
      const chartYaml = join(dir, 'Chart.yaml');
      writeFileSync(chartYaml, readFileSync(chartYaml, 'utf8').replace(/^version: .*$/m, 'version: 1.5.0'));
    });
    // The same vendor values as the first install: a chart outside the app directory has none by
    // default, and every upgrade gets exactly the values given (--reset-values).
    const r = await install('storefront', ns, ['--chart', v2, '--base-values', join(appDir, 'values')]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await kinds(ns, 'cronjobs')).toEqual([]);
    expect((await history('storefront', ns)).at(-1)).toMatchObject({
      revision: 2,
      status: 'deployed',
      chart: 'storefront-1.5.0',
    });
  });

  it('adoption: objects made earlier by kubectl apply are taken over by the first install', async () => {
    const ns = await createNamespace('adopt', opts());
    // Plain (client-side) `kubectl apply`, as the vendor's old install one-liner did.
    await kubectl(['apply', '-f', '-'], {
      ...opts(),
      input: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: storefront-web\n  namespace: ${ns}\ndata:\n  legacy: "true"\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: storefront-web\n  namespace: ${ns}\nspec:\n  selector: {app: legacy}\n  ports: [{port: 80}]\n`,
    });
    const r = await install('storefront', ns);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const kind of ['configmap', 'service']) {
      const obj = await getJson(['get', kind, 'storefront-web'], { namespace: ns, ...opts() });
      expect(obj.metadata.annotations['meta.helm.sh/release-name']).toBe('storefront');
      expect(obj.metadata.labels['app.kubernetes.io/managed-by']).toBe('Helm');
    }
    const svc = await getJson(['get', 'service', 'storefront-web'], { namespace: ns, ...opts() });
    expect(svc.spec.selector).not.toEqual({ app: 'legacy' });
  });

  it('a Deployment that never becomes Ready: exit 4, rolled back, the summary names it and why', async () => {
    const ns = await createNamespace('unready', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const termination = join(tempDir('term'), 'termination-log');
    writeFileSync(termination, '');
    const r = await install('storefront', ns, ['--set', 'web.nodeSelector.zone=nowhere', '--timeout', '25s'], {
      HELM_INSTALLER_TERMINATION_LOG: termination,
    });
    expect(r.exitCode, r.stderr).toBe(4);
    const h = await history('storefront', ns);
    expect(h.map((x) => x.status)).toEqual(['superseded', 'failed', 'deployed']);
    expect(h.at(-1)!.description).toMatch(/Rollback to 1/);
    const deploy = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() });
    expect(deploy.spec.template.spec.nodeSelector ?? {}).not.toHaveProperty('zone');
    const message = readFileSync(termination, 'utf8');
    for (const text of [message, r.stderr]) {
      expect(text).toMatch(/Deployment\/(.*\/)?storefront-web/);
      expect(text).toMatch(/rolled back/);
      expect(text).toMatch(/not ready|InProgress|timed out|deadline/i);
    }
  });

  it('a failing hook Job: exit 4, back at the previous revision, the summary names the Job and the reason', async () => {
    const ns = await createNamespace('hookfail', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const termination = join(tempDir('term'), 'termination-log');
    writeFileSync(termination, '');
    const r = await install(
      'storefront',
      ns,
      [
        '--set-string',
        'migrations.podAnnotations.helm-installer\\.test/kwok-phase=Failed',
        '--set',
        'migrations.backoffLimit=0',
      ],
      {
        HELM_INSTALLER_TERMINATION_LOG: termination,
      },
    );
    expect(r.exitCode, r.stderr).toBe(4);
    const h = await history('storefront', ns);
    expect(h.map((x) => x.status)).toEqual(['superseded', 'failed', 'deployed']);
    const rel = await releaseRecord('storefront', ns);
    expect(rel.version).toBe(3);
    expect(rel.info.status).toBe('deployed');
    expect((rel.config.migrations as Record<string, unknown>) ?? {}).not.toHaveProperty('podAnnotations');
    const message = readFileSync(termination, 'utf8');
    for (const text of [message, r.stderr]) {
      expect(text).toMatch(/storefront-migrate/);
      expect(text).toMatch(/BackoffLimitExceeded|failed/);
      expect(text).toMatch(/rolled back/);
    }
  });

  it('--dry-run changes nothing in the cluster', async () => {
    const ns = await createNamespace('dryrun', opts());
    const r1 = await install('storefront', ns, ['--dry-run']);
    expect(r1.exitCode, r1.stderr).toBe(0);
    expect(await history('storefront', ns)).toEqual([]);
    expect(await kinds(ns, 'deployments')).toEqual([]);
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const before = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() });
    const r2 = await install('storefront', ns, ['--dry-run', '--set', 'web.replicaCount=5']);
    expect(r2.exitCode, r2.stderr).toBe(0);
    const after = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() });
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect((await history('storefront', ns)).length).toBe(1);
  });
});

describe('install lifecycle (helm 3.17)', () => {
  it('install, upgrade, and a failing upgrade rolled back (--atomic)', async () => {
    const ns = await createNamespace('helm3', opts());
    const env = { HELM_BIN: helm3 };
    expect((await install('storefront', ns, ['--values', customer], env)).exitCode).toBe(0);
    // 4, not the customer file's 3: an unchanged redeploy would add no revision.
    const up = await install('storefront', ns, ['--values', customer, '--set', 'web.replicaCount=4'], env);
    expect(up.exitCode, up.stderr).toBe(0);
    const bad = await install('storefront', ns, ['--set', 'web.nodeSelector.zone=nowhere', '--timeout', '20s'], env);
    expect(bad.exitCode, bad.stderr).toBe(4);
    expect(bad.stderr).toMatch(/rolled back/);
    const h = await history('storefront', ns, helm3);
    expect(h.map((x) => x.status)).toEqual(['superseded', 'superseded', 'failed', 'deployed']);
    const deploy = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() });
    expect(deploy.spec.replicas).toBe(4);
    await kubectl(['get', 'ns', ns], opts());
  });
});
