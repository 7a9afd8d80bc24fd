// An installer identity as the Job has one: a ServiceAccount bound to a Role (the shipped one in
// manifests/, narrowed or widened per case) and to the shipped ClusterRole, and a kubeconfig with
// its token. Shared by the RBAC preflight tests and the release plan's.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { getJson, kubectl } from '../cluster/kube.js';
import { repoRoot, tempDir } from '../helpers.js';
import { kubeconfig } from './cluster-helpers.js';

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const shipped = parseAllDocuments(readFileSync(join(repoRoot, 'manifests', 'installer.yaml'), 'utf8')).map((d) =>
  d.toJS(),
);
export const shippedRole: { rules: Rule[] } = shipped.find((d) => d?.kind === 'Role');
const shippedClusterRole: { rules: Rule[] } = shipped.find((d) => d?.kind === 'ClusterRole');

/**
 * A maker of identities whose cluster-scoped bindings are deleted when the file's tests end:
 * `identity(ns, rules, extra)` binds `rules` in `ns` (and the shipped ClusterRole, for the
 * charts' CRDs) and returns the path of a kubeconfig with the ServiceAccount's token.
 */
export function serviceAccountsDeletedAfterAll(): (ns: string, rules: Rule[], extra?: object[]) => Promise<string> {
  const opts = () => ({ kubeconfig: kubeconfig() });
  const clusterScoped: string[][] = [];
  afterAll(async () => {
    for (const [kind, name] of clusterScoped) await kubectl(['delete', kind!, name!, '--ignore-not-found'], opts());
  });
  return async (ns, rules, extra = []) => {
    const clusterRole = `rbac-preflight-crds-${ns}`;
    const subject = { kind: 'ServiceAccount', name: 'installer', namespace: ns };
    const docs = [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'installer', namespace: ns } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'installer', namespace: ns },
        rules,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'installer', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'installer' },
        subjects: [subject],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: clusterRole },
        rules: shippedClusterRole.rules,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: clusterRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
        subjects: [subject],
      },
      ...extra,
    ];
    clusterScoped.push(['clusterrolebinding', clusterRole], ['clusterrole', clusterRole]);
    await kubectl(['apply', '-f', '-'], { ...opts(), input: docs.map((d) => stringify(d)).join('---\n') });
    const token = (
      await kubectl(['create', 'token', 'installer', '--namespace', ns, '--duration', '1h'], opts())
    ).stdout.trim();
    const admin = await getJson(['config', 'view', '--raw', '--minify'], opts());
    const cluster = admin.clusters[0].cluster;
    const file = join(tempDir('rbac-kubeconfig'), 'kubeconfig');
    writeFileSync(
      file,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster }],
        users: [{ name: 'installer', user: { token } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'installer', namespace: ns } }],
        'current-context': 'c',
      }),
    );
    return file;
  };
}
