// The RBAC preflight on the real control plane, run as a ServiceAccount (a kubeconfig with its
// token), as the Job runs it: the Role shipped in manifests/, narrowed per case. Rules reviews
// grant what their rules list; anything else is asked with an access review, whose denial alone
// makes exit 6, naming the permission, before helm changes anything.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { appDir, repoRoot } from '../helpers.js';
import { helmCalls, history, install, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { serviceAccountsDeletedAfterAll, shippedRole, type Rule } from './service-account.js';

const customer = join(appDir, 'examples', 'customer-values.yaml');
const opts = () => ({ kubeconfig: kubeconfig() });
const namespace = namespacesDeletedAfterAll();
const identity = serviceAccountsDeletedAfterAll();

/** The shipped Role's rules with cronjobs taken out (as the Job case narrows it), plus `add`. */
function withoutCronJobs(add: Rule[] = []): Rule[] {
  return [
    ...shippedRole.rules.map((r: Rule) => ({ ...r, resources: r.resources.filter((x) => x !== 'cronjobs') })),
    ...add,
  ];
}

function preflightLog(stdout: string): { checked: number; byRules: number; asked: number; denied: number } {
  const line = stdout.split('\n').find((l) => l.includes('"msg":"rbac preflight"'));
  if (!line) throw new Error(`no rbac preflight log line in:\n${stdout.slice(-3000)}`);
  const { checked, byRules, asked, denied } = JSON.parse(line);
  return { checked, byRules, asked, denied };
}

async function expectUntouched(ns: string): Promise<void> {
  expect(await history('storefront', ns)).toEqual([]);
  const left = await kubectl(
    ['get', 'deployments,statefulsets,cronjobs,leases', '--namespace', ns, '-o', 'name'],
    opts(),
  );
  expect(left.stdout.trim()).toBe('');
}

const cronJobLine = (ns: string) =>
  `  cronjobs.batch in namespace ${ns}: create, delete, get, list, patch, watch (CronJob/storefront-report)`;
const CRD_VERBS = 5; // get, list, watch, create, patch on the cluster-scoped CRD: always asked one by one

describe('RBAC preflight as a ServiceAccount', () => {
  it('a Role without cronjobs: exit 6 naming exactly that permission, the rest granted by the rules review, nothing changed', async () => {
    const ns = await namespace('rbac-narrow');
    const kc = await identity(ns, withoutCronJobs());
    const r = await install('storefront', ns, ['--values', customer, '--log-level', 'debug'], { KUBECONFIG: kc });
    expect(r.exitCode, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/^cause: RBAC: this identity lacks 6 permission\(s\) the chart needs:$/m);
    expect(r.stderr).toContain(`${cronJobLine(ns)}\n`);
    const log = preflightLog(r.stdout);
    expect(log).toEqual({
      checked: log.checked,
      byRules: log.checked - 6 - CRD_VERBS,
      asked: 6 + CRD_VERBS,
      denied: 6,
    });
    await expectUntouched(ns);
  });

  it('cronjobs granted only for the object name (resourceNames): not enough for create, asked and denied the same way', async () => {
    const ns = await namespace('rbac-names');
    const kc = await identity(
      ns,
      withoutCronJobs([
        {
          apiGroups: ['batch'],
          resources: ['cronjobs'],
          resourceNames: ['storefront-report'],
          verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
        },
      ]),
    );
    const r = await install('storefront', ns, ['--values', customer, '--log-level', 'debug'], { KUBECONFIG: kc });
    expect(r.exitCode, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/^cause: RBAC: this identity lacks 6 permission\(s\) the chart needs:$/m);
    expect(r.stderr).toContain(`${cronJobLine(ns)}\n`);
    expect(preflightLog(r.stdout)).toMatchObject({ asked: 6 + CRD_VERBS, denied: 6 });
    await expectUntouched(ns);
  });

  it('a rules review with an evaluation error (a binding to a Role that does not exist): the same answer', async () => {
    const ns = await namespace('rbac-dangling');
    const dangling = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'installer-missing', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'does-not-exist' },
      subjects: [{ kind: 'ServiceAccount', name: 'installer', namespace: ns }],
    };
    const kc = await identity(ns, withoutCronJobs(), [dangling]);
    const review = JSON.parse(
      (
        await kubectl(['create', '-f', '-', '-o', 'json'], {
          kubeconfig: kc,
          input: JSON.stringify({
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectRulesReview',
            spec: { namespace: ns },
          }),
        })
      ).stdout,
    );
    expect(review.status.evaluationError).toMatch(/does-not-exist/);
    const r = await install('storefront', ns, ['--values', customer, '--log-level', 'debug'], { KUBECONFIG: kc });
    expect(r.exitCode, r.stderr).toBe(6);
    expect(r.stderr).toContain(`${cronJobLine(ns)}\n`);
    expect(preflightLog(r.stdout)).toMatchObject({ asked: 6 + CRD_VERBS, denied: 6 });
    await expectUntouched(ns);
  });

  it('the shipped Role: the install goes through, only the cluster-scoped CRD asked one by one', async () => {
    const ns = await namespace('rbac-full');
    const kc = await identity(ns, shippedRole.rules);
    const r = await install('storefront', ns, ['--values', customer, '--log-level', 'debug'], { KUBECONFIG: kc });
    expect(r.exitCode, r.stderr).toBe(0);
    const log = preflightLog(r.stdout);
    expect(log).toEqual({ checked: log.checked, byRules: log.checked - CRD_VERBS, asked: CRD_VERBS, denied: 0 });
    expect((await history('storefront', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
    // Its database claim goes back to the pool (namespacesDeletedAfterAll deletes the namespace too).
    await kubectl(['delete', 'statefulset,pvc', '--all', '--namespace', ns, '--wait=false'], opts());
  });
});

// One check path for every chart: the installer's render (hooks included) before helm upgrade
// starts, so a preflight failure leaves helm unstarted and the cluster untouched.
describe('RBAC preflight on the render before helm upgrade (hooks included)', () => {
  const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'no-crds');
  const source = ['--chart', chart, '--base-values', join(chart, 'values.yaml'), '--log-level', 'debug'];
  const hookLine = (ns: string) =>
    `  cronjobs.batch in namespace ${ns}: create, delete, get, list, patch, watch (CronJob/gated-hook-report)`;

  it('a Role without cronjobs, which only a hook needs: exit 6 naming the hook, helm upgrade never started, nothing changed', async () => {
    const ns = await namespace('rbac-gate-narrow');
    const kc = await identity(ns, withoutCronJobs());
    const r = await install('gated', ns, source, { KUBECONFIG: kc });
    expect(r.exitCode, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/^cause: RBAC: this identity lacks 6 permission\(s\) the chart needs:$/m);
    expect(r.stderr).toContain(`${hookLine(ns)}\n`);
    // The one render was the check's; helm upgrade never ran.
    const calls = helmCalls(r.stdout);
    expect(calls.map((c) => c.helm)).toEqual(['template']);
    expect(preflightLog(r.stdout)).toMatchObject({ denied: 6 });
    expect(await history('gated', ns)).toEqual([]);
    const left = await kubectl(
      ['get', 'deployments,cronjobs,configmaps,leases', '--namespace', ns, '-o', 'name'],
      opts(),
    );
    expect(
      left.stdout
        .trim()
        .split('\n')
        .filter((n) => n !== 'configmap/kube-root-ca.crt' && n !== ''),
    ).toEqual([]);
  });

  it('the shipped Role: installed, then upgraded, each checked on one render before helm upgrade', async () => {
    const ns = await namespace('rbac-gate-full');
    const kc = await identity(ns, shippedRole.rules);
    const first = await install('gated', ns, source, { KUBECONFIG: kc });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(preflightLog(first.stdout)).toMatchObject({ denied: 0, asked: 0 });
    const second = await install('gated', ns, [...source, '--set', 'greeting=hi'], { KUBECONFIG: kc });
    expect(second.exitCode, second.stderr).toBe(0);
    for (const r of [first, second]) {
      expect(helmCalls(r.stdout).map((c) => c.helm)).toEqual(['template', 'upgrade']);
    }
    expect((await history('gated', ns)).map((h) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    const config = await getJson(['get', 'configmap', 'gated-config', '--namespace', ns, '-o', 'json'], opts());
    expect(config.data).toEqual({ greeting: 'hi' });
  });
});
