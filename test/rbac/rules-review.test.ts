// Which permissions the rules of a SelfSubjectRulesReview grant, and which the preflight must ask
// with an access review. Rules and expectations are written out here as RBAC defines them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Permission } from '../../src/rbac/required-permissions.js';
import { decideByRules, ruleGrants, type ResourceRule, type RulesReview } from '../../src/rbac/rules-review.js';
import { repoRoot } from '../helpers.js';

const perm = (verb: string, group: string, resource: string, namespace?: string): Permission => ({
  group,
  resource,
  verb,
  ...(namespace ? { namespace } : {}),
  for: [],
});
const key = (p: Permission) => `${p.verb} ${p.group}/${p.resource} ${p.namespace ?? '(cluster)'}`;

describe('ruleGrants', () => {
  const cases: [string, ResourceRule, Permission, boolean][] = [
    [
      'listed verb, group and resource',
      { verbs: ['get', 'create'], apiGroups: ['apps'], resources: ['deployments'] },
      perm('create', 'apps', 'deployments'),
      true,
    ],
    [
      'verb not listed',
      { verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments'] },
      perm('delete', 'apps', 'deployments'),
      false,
    ],
    [
      'resource of another group',
      { verbs: ['get'], apiGroups: [''], resources: ['deployments'] },
      perm('get', 'apps', 'deployments'),
      false,
    ],
    [
      'core group is the empty string',
      { verbs: ['get'], apiGroups: [''], resources: ['secrets'] },
      perm('get', '', 'secrets'),
      true,
    ],
    ['no apiGroups at all', { verbs: ['get'], resources: ['secrets'] }, perm('get', '', 'secrets'), false],
    [
      'verb *',
      { verbs: ['*'], apiGroups: ['batch'], resources: ['cronjobs'] },
      perm('watch', 'batch', 'cronjobs'),
      true,
    ],
    [
      'group *',
      { verbs: ['get'], apiGroups: ['*'], resources: ['leases'] },
      perm('get', 'coordination.k8s.io', 'leases'),
      true,
    ],
    [
      'resource * covers a subresource',
      { verbs: ['get'], apiGroups: [''], resources: ['*'] },
      perm('get', '', 'pods/log'),
      true,
    ],
    [
      'the resource does not cover its subresource',
      { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      perm('get', '', 'pods/log'),
      false,
    ],
    [
      'the subresource written out',
      { verbs: ['get'], apiGroups: [''], resources: ['pods', 'pods/log'] },
      perm('get', '', 'pods/log'),
      true,
    ],
    [
      '*/log covers pods/log',
      { verbs: ['get'], apiGroups: [''], resources: ['*/log'] },
      perm('get', '', 'pods/log'),
      true,
    ],
    [
      '*/log does not cover pods',
      { verbs: ['get'], apiGroups: [''], resources: ['*/log'] },
      perm('get', '', 'pods'),
      false,
    ],
    [
      '*/status does not cover pods/log',
      { verbs: ['get'], apiGroups: [''], resources: ['*/status'] },
      perm('get', '', 'pods/log'),
      false,
    ],
    [
      'limited to resourceNames: not for a request without a name',
      { verbs: ['get', 'patch'], apiGroups: [''], resources: ['namespaces'], resourceNames: ['shop'] },
      perm('get', '', 'namespaces', 'shop'),
      false,
    ],
    [
      'an empty resourceNames list limits nothing',
      { verbs: ['get'], apiGroups: [''], resources: ['namespaces'], resourceNames: [] },
      perm('get', '', 'namespaces', 'shop'),
      true,
    ],
    [
      'a resource name is not a prefix match',
      { verbs: ['get'], apiGroups: ['apps'], resources: ['deployment'] },
      perm('get', 'apps', 'deployments'),
      false,
    ],
  ];
  it.each(cases)('%s', (_name, rule, p, expected) => {
    expect(ruleGrants(rule, p)).toBe(expected);
  });
});

describe('decideByRules', () => {
  const review = (rules: ResourceRule[], incomplete = false): RulesReview => ({ resourceRules: rules, incomplete });
  const shopRules: ResourceRule[] = [
    { verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'], apiGroups: ['apps'], resources: ['deployments'] },
    { verbs: ['get', 'list', 'create', 'update', 'delete'], apiGroups: [''], resources: ['secrets'] },
    // As a ClusterRoleBinding would list it beside the namespace's rules: cluster-scoped permissions are asked anyway.
    { verbs: ['*'], apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'] },
  ];
  const permissions = [
    perm('create', 'apps', 'deployments', 'shop'),
    perm('update', 'apps', 'deployments', 'shop'),
    perm('update', '', 'secrets', 'shop'),
    perm('create', 'apps', 'deployments', 'other'),
    perm('create', 'apiextensions.k8s.io', 'customresourcedefinitions'),
    perm('create', 'batch', 'cronjobs', 'unreviewed'),
  ];

  it('grants what a complete review of its own namespace grants; asks the rest, cluster-scoped resources and unreviewed namespaces', () => {
    const { granted, ask } = decideByRules(
      permissions,
      new Map([
        ['shop', review(shopRules)],
        ['other', review([])],
      ]),
    );
    expect(granted.map(key)).toEqual(['create apps/deployments shop', 'update /secrets shop']);
    expect(ask.map(key)).toEqual([
      'update apps/deployments shop',
      'create apps/deployments other',
      'create apiextensions.k8s.io/customresourcedefinitions (cluster)',
      'create batch/cronjobs unreviewed',
    ]);
  });

  it('an incomplete review decides nothing in its namespace', () => {
    const { granted, ask } = decideByRules(
      permissions,
      new Map([
        ['shop', review(shopRules, true)],
        ['other', review(shopRules)],
      ]),
    );
    expect(granted.map(key)).toEqual(['create apps/deployments other']);
    expect(ask).toHaveLength(5);
  });

  it('the Role shipped in manifests/ grants every namespaced permission it lists, verb by verb', () => {
    const docs = parseAllDocuments(readFileSync(join(repoRoot, 'manifests', 'installer.yaml'), 'utf8')).map((d) =>
      d.toJS(),
    );
    const role = docs.find((d) => d?.kind === 'Role');
    const listed: Permission[] = (
      role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]
    ).flatMap((r) =>
      r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => perm(v, g, res, 'storefront')))),
    );
    expect(listed.length).toBeGreaterThan(60);
    const { granted, ask } = decideByRules(listed, new Map([['storefront', review(role.rules)]]));
    expect(ask).toEqual([]);
    expect(granted).toHaveLength(listed.length);
    // and nothing it does not list: cronjobs dropped, as the narrow-Role Job case does
    const narrow = role.rules.map((r: ResourceRule) => ({
      ...r,
      resources: r.resources!.filter((x) => x !== 'cronjobs'),
    }));
    const without = decideByRules(listed, new Map([['storefront', review(narrow)]]));
    expect(without.ask.map(key).sort()).toEqual(
      ['create', 'delete', 'get', 'list', 'patch', 'watch'].map((v) => `${v} batch/cronjobs storefront`),
    );
  });
});
