// Which claims an upgrade leaves behind (drift/orphaned-claims.ts), as a table: the deployed
// revision's StatefulSets, the new render, the live PVCs; expected claims written out by hand.
import { describe, expect, it } from 'vitest';
import {
  claimNames,
  describeOrphans,
  isClaimOf,
  orphanedClaims,
  type LiveClaim,
} from '../../src/drift/orphaned-claims.js';

type Placed = { kind: string; name: string; namespace?: string; body: Record<string, unknown> };
const sts = (name: string, templates: string[], namespace = 'shop'): Placed => ({
  kind: 'StatefulSet',
  name,
  namespace,
  body: { spec: { volumeClaimTemplates: templates.map((t) => ({ metadata: { name: t } })), template: { spec: {} } } },
});
const deployment = (name: string, claim: string, namespace = 'shop'): Placed => ({
  kind: 'Deployment',
  name,
  namespace,
  body: { spec: { template: { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] } } } },
});
const stsMounting = (name: string, claim: string): Placed => ({
  kind: 'StatefulSet',
  name,
  namespace: 'shop',
  body: { spec: { template: { spec: { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: claim } }] } } } },
});
const bound = (name: string, namespace = 'shop'): LiveClaim => ({ name, namespace, phase: 'Bound' });
const live = [
  bound('data-db-0'),
  bound('data-db-1'),
  bound('logs-db-0'),
  bound('data-other-0'),
  { name: 'data-db-2', namespace: 'shop', phase: 'Pending' },
  bound('data-db-0', 'elsewhere'),
];

describe('orphanedClaims', () => {
  const rows: [string, Placed[], Placed[], { sts: string; kept: boolean; claims: string[] }[]][] = [
    ['the same StatefulSet and claim template: nothing left behind', [sts('db', ['data'])], [sts('db', ['data'])], []],
    [
      'recreated with its claim template kept (another field changed): nothing left behind',
      [sts('db', ['data', 'logs'])],
      [sts('db', ['data', 'logs'])],
      [],
    ],
    [
      'renamed: its Bound claims left behind (a Pending one holds nothing; another namespace is not its)',
      [sts('db', ['data'])],
      [sts('db-main', ['data'])],
      [{ sts: 'db', kept: false, claims: ['data-db-0', 'data-db-1'] }],
    ],
    [
      'deleted: the same',
      [sts('db', ['data']), sts('other', ['data'])],
      [sts('other', ['data'])],
      [{ sts: 'db', kept: false, claims: ['data-db-0', 'data-db-1'] }],
    ],
    [
      "its claim template renamed: the old template's claims left, the kept one's not",
      [sts('db', ['data', 'logs'])],
      [sts('db', ['storage', 'logs'])],
      [{ sts: 'db', kept: true, claims: ['data-db-0', 'data-db-1'] }],
    ],
    [
      'renamed, but the new version mounts the old claims by name (existingClaim)',
      [sts('db', ['data'])],
      [stsMounting('db-main', 'data-db-0'), deployment('reader', 'data-db-1')],
      [],
    ],
    [
      'renamed, one claim mounted by name: the other is left',
      [sts('db', ['data'])],
      [stsMounting('db-main', 'data-db-0')],
      [{ sts: 'db', kept: false, claims: ['data-db-1'] }],
    ],
    [
      'a workload in another namespace mounting the name does not count',
      [sts('db', ['data'])],
      [deployment('reader', 'data-db-0', 'elsewhere'), deployment('r2', 'data-db-1', 'elsewhere')],
      [{ sts: 'db', kept: false, claims: ['data-db-0', 'data-db-1'] }],
    ],
    ['a StatefulSet without claim templates: nothing', [sts('web', [])], [], []],
  ];
  for (const [name, previous, next, expected] of rows) {
    it(name, () => {
      expect(
        orphanedClaims(previous, next, live).map((o) => ({ sts: o.statefulSet.name, kept: o.kept, claims: o.claims })),
      ).toEqual(expected);
    });
  }

  it('a claim is the template, the StatefulSet and an ordinal, nothing more', () => {
    expect(isClaimOf('data-db-0', 'data', 'db')).toBe(true);
    expect(isClaimOf('data-db-12', 'data', 'db')).toBe(true);
    expect(isClaimOf('data-db-main-0', 'data', 'db')).toBe(false);
    expect(isClaimOf('data-db-', 'data', 'db')).toBe(false);
    expect(isClaimOf('data-dbx-0', 'data', 'db')).toBe(false);
  });

  it('reads the claims a Pod, a controller and a CronJob mount', () => {
    const vol = { volumes: [{ persistentVolumeClaim: { claimName: 'c' } }, { emptyDir: {} }] };
    expect(claimNames({ kind: 'Pod', body: { spec: vol } })).toEqual(['c']);
    expect(claimNames({ kind: 'DaemonSet', body: { spec: { template: { spec: vol } } } })).toEqual(['c']);
    expect(
      claimNames({ kind: 'CronJob', body: { spec: { jobTemplate: { spec: { template: { spec: vol } } } } } }),
    ).toEqual(['c']);
    expect(claimNames({ kind: 'ConfigMap', body: { data: {} } })).toEqual([]);
  });

  it('describes one StatefulSet in a line', () => {
    expect(
      describeOrphans({ statefulSet: { name: 'db', namespace: 'shop' }, kept: false, claims: ['data-db-0'] }),
    ).toBe(
      'StatefulSet db in namespace shop is deleted or renamed by the new chart version; no workload of the new version mounts its claims, which hold data: data-db-0',
    );
  });
});
