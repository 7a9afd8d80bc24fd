// The plan's outputs (src/preview/format-*.ts, summary.ts) on a report built by hand: text with
// and without colour, the JSON schema, Markdown with its escaping, the count line.
import { describe, expect, it } from 'vitest';
import { formatJson } from '../../src/preview/format-json.js';
import { formatMarkdown } from '../../src/preview/format-markdown.js';
import { formatText, useColor } from '../../src/preview/format-text.js';
import type { PlanEntry, PlanReport } from '../../src/preview/plan-types.js';
import { countLine } from '../../src/preview/summary.js';

const diff = (title: string, ...lines: string[]) => [`--- live ${title}`, '+++ desired', ...lines, ''].join('\n');

const report: PlanReport = {
  release: 'shop',
  namespace: 'shop',
  chart: 'shop-1.2.0',
  decision: { action: 'upgrade', reason: 'the values differ from revision 3' },
  entries: [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'settings',
      namespace: 'shop',
      action: 'create',
      fields: [],
      changedBy: [],
      diff: diff('ConfigMap settings (shop)', '@@ -0,0 +1,2 @@', '+kind: ConfigMap', '+data: {}'),
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'web',
      namespace: 'shop',
      action: 'change',
      fields: ['/spec/replicas'],
      changedBy: ['kubectl-scale'],
      diff: diff('Deployment web (shop)', '@@ -1,2 +1,2 @@', ' spec:', '-  replicas: 3', '+  replicas: 2'),
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'legacy',
      namespace: 'shop',
      action: 'delete',
      fields: [],
      changedBy: [],
      diff: diff('ConfigMap legacy (shop)', '@@ -1,1 +0,0 @@', '-kind: ConfigMap'),
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      name: 'web',
      namespace: 'shop',
      action: 'unchanged',
      fields: [],
      changedBy: [],
      diff: '',
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      name: 'shop-reader',
      action: 'create',
      fields: [],
      changedBy: [],
      diff: diff('ClusterRole shop-reader', '@@ -0,0 +1,1 @@', '+kind: ClusterRole'),
    },
  ],
  hooks: [
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: 'migrate',
      namespace: 'shop',
      action: 'create',
      hook: 'pre-upgrade',
      fields: [],
      changedBy: [],
      diff: diff('Job migrate (shop)', '@@ -0,0 +1,1 @@', '+kind: Job'),
    },
  ],
};

const plainText = `Plan for release shop in namespace shop, chart shop-1.2.0
Would upgrade: the values differ from revision 3

+ create ConfigMap shop/settings
    --- live ConfigMap settings (shop)
    +++ desired
    @@ -0,0 +1,2 @@
    +kind: ConfigMap
    +data: {}

~ change Deployment shop/web
    fields: /spec/replicas
    changed by kubectl-scale: the install reverts that edit
    --- live Deployment web (shop)
    +++ desired
    @@ -1,2 +1,2 @@
     spec:
    -  replicas: 3
    +  replicas: 2

- delete ConfigMap shop/legacy
    --- live ConfigMap legacy (shop)
    +++ desired
    @@ -1,1 +0,0 @@
    -kind: ConfigMap

+ create ClusterRole shop-reader
    --- live ClusterRole shop-reader
    +++ desired
    @@ -0,0 +1,1 @@
    +kind: ClusterRole

Hooks (helm deletes and re-creates them on every install):

+ create Job shop/migrate (hook: pre-upgrade)
    --- live Job migrate (shop)
    +++ desired
    @@ -0,0 +1,1 @@
    +kind: Job

1 unchanged
2 to create, 1 to change, 1 to delete
`;

/** A change to StatefulSet shop/db that the API server refused in the dry run, with `why`. */
const refusedChange = (why: string): PlanEntry => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  name: 'db',
  namespace: 'shop',
  action: 'change',
  fields: [],
  changedBy: [],
  diff: '',
  refused: why,
});

describe('formatText', () => {
  it('gives the decision, each object that changes with its fields, hand editors and diff, hooks apart, then the count', () => {
    expect(formatText(report, { color: false })).toBe(plainText);
  });

  it('colours creates green, changes yellow, deletes red, and the diff lines alike, only when asked', () => {
    const text = formatText(report, { color: true });
    const lines = text.split('\n');
    expect(lines).toContain('\u001b[32m+ create ConfigMap shop/settings\u001b[0m');
    expect(lines).toContain('\u001b[33m~ change Deployment shop/web\u001b[0m');
    expect(lines).toContain('\u001b[31m- delete ConfigMap shop/legacy\u001b[0m');
    expect(lines).toContain('\u001b[31m    -  replicas: 3\u001b[0m');
    expect(lines).toContain('\u001b[32m    +  replicas: 2\u001b[0m');
    expect(lines).toContain('    --- live Deployment web (shop)');
    expect(lines).toContain('    +++ desired');
    // Without the escape codes it is the plain text, line for line.
    expect(text.replace(/\u001b\[[0-9]+m/g, '')).toBe(plainText);
    expect(formatText(report, { color: false })).not.toContain('\u001b');
  });

  it('writes a refusal on one line, its control characters escaped, and says nothing would change when nothing would', () => {
    const refused = refusedChange('spec: Forbidden:\n  field is immutable \u001b[2J');
    const nothing: PlanReport = {
      ...report,
      decision: { action: 'nothing', reason: 'chart and values equal revision 3' },
      entries: [refused],
      hooks: [],
    };
    expect(formatText(nothing, { color: false })).toBe(
      [
        'Plan for release shop in namespace shop, chart shop-1.2.0',
        'Would do nothing: chart and values equal revision 3',
        '',
        '~ change StatefulSet shop/db',
        '    refused by the API server: spec: Forbidden: field is immutable \\x1b[2J',
        '',
        '0 to create, 1 to change, 0 to delete',
        '',
      ].join('\n'),
    );
  });
});

describe('data at risk', () => {
  const risky: PlanReport = {
    ...report,
    entries: [],
    hooks: [],
    dataAtRisk: [
      { statefulSet: 'db', namespace: 'shop', kept: false, claims: ['data-db-0', 'data-db-1'], policy: 'refuse' },
    ],
  };
  const line =
    'StatefulSet db in namespace shop is deleted or renamed by the new chart version; no workload of the new version mounts its claims, which hold data: data-db-0, data-db-1';

  it('text: a section naming the StatefulSet, its claims and what install does', () => {
    expect(formatText(risky, { color: false })).toContain(
      'Data at risk (claims that hold data and that no workload of the new version mounts):\n' +
        `    ${line}\n` +
        "    install refuses this upgrade before any change (exit 3; --orphaned-claims refuse): reuse the claims with the chart's existing-claim value, or allow it\n\n",
    );
    const allowed = { ...risky, dataAtRisk: [{ ...risky.dataAtRisk![0]!, policy: 'allow' as const }] };
    expect(formatText(allowed, { color: false })).toContain(
      '    install upgrades and leaves these claims as they are, unmounted (--orphaned-claims allow)\n',
    );
  });

  it('markdown and JSON carry it too; absent when nothing is at risk', () => {
    expect(formatMarkdown(risky)).toContain(
      `**Data at risk** (claims that hold data and that no workload of the new version mounts):\n\n- ${line}\n`,
    );
    expect(JSON.parse(formatJson(risky)).dataAtRisk).toEqual(risky.dataAtRisk);
    expect(formatText(report, { color: false })).not.toContain('Data at risk');
    expect(JSON.parse(formatJson(report))).not.toHaveProperty('dataAtRisk');
  });
});

describe('useColor', () => {
  it('is on for a terminal unless NO_COLOR is set and not empty (no-color.org)', () => {
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: 'false' })).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({}, {})).toBe(false);
  });
});

describe('countLine', () => {
  const entry = (action: PlanEntry['action']): PlanEntry => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: 'x',
    action,
    fields: [],
    changedBy: [],
    diff: '',
  });

  it('always names all three counts, zeros included, and leaves unchanged objects out', () => {
    expect(countLine([])).toBe('0 to create, 0 to change, 0 to delete');
    const entries = [
      ...['create', 'create', 'create', 'change', 'change', 'delete', 'unchanged'].map((a) =>
        entry(a as PlanEntry['action']),
      ),
    ];
    expect(countLine(entries)).toBe('3 to create, 2 to change, 1 to delete');
  });
});

describe('formatJson', () => {
  it('writes schema version 1: the decision, the counts, every object (unchanged too) and the hooks, keys in documented order', () => {
    const text = formatJson(report);
    expect(text.endsWith('}\n')).toBe(true);
    const json = JSON.parse(text);
    expect(json).toEqual({
      schemaVersion: 1,
      release: 'shop',
      namespace: 'shop',
      chart: 'shop-1.2.0',
      decision: { action: 'upgrade', reason: 'the values differ from revision 3' },
      summary: { create: 2, change: 1, delete: 1, unchanged: 1 },
      // Each object and hook with the facts the report gives it (written out above), no more and
      // no fewer; the order of its keys is checked below.
      objects: report.entries,
      hooks: report.hooks,
    });
    expect(Object.keys(json)).toEqual([
      'schemaVersion',
      'release',
      'namespace',
      'chart',
      'decision',
      'summary',
      'objects',
      'hooks',
    ]);
    expect(Object.keys(json.objects[1])).toEqual([
      'apiVersion',
      'kind',
      'namespace',
      'name',
      'action',
      'fields',
      'changedBy',
      'diff',
    ]);
    expect(Object.keys(json.hooks[0])).toEqual([
      'apiVersion',
      'kind',
      'namespace',
      'name',
      'action',
      'fields',
      'changedBy',
      'hook',
      'diff',
    ]);
  });

  it('adds refused when the API server refused the dry run', () => {
    const refused = refusedChange('immutable');
    const json = JSON.parse(formatJson({ ...report, entries: [refused], hooks: [] }));
    expect(json.objects).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        namespace: 'shop',
        name: 'db',
        action: 'change',
        fields: [],
        changedBy: [],
        refused: 'immutable',
        diff: '',
      },
    ]);
    expect(json.summary).toEqual({ create: 0, change: 1, delete: 0, unchanged: 0 });
  });
});

describe('formatMarkdown', () => {
  it('writes a table with | and other Markdown escaped, then each diff collapsed in a fence longer than any backtick run in it', () => {
    const changed: PlanEntry = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'settings',
      namespace: 'shop',
      action: 'change',
      fields: ['/data/a|b', '/metadata/annotations/x~1y'],
      changedBy: ['kubectl-edit'],
      diff: diff('ConfigMap settings (shop)', '@@ -1,1 +1,1 @@', '-  a|b: "```"', '+  a|b: x'),
    };
    // The report's unchanged Service web, and its hook Job migrate under two hook events.
    const unchanged = report.entries[3]!;
    const hook: PlanEntry = { ...report.hooks[0]!, hook: 'pre-install,pre-upgrade' };
    const md = formatMarkdown({
      ...report,
      decision: { action: 'upgrade', reason: 'values <changed> by *you*' },
      entries: [changed, unchanged],
      hooks: [hook],
    });
    expect(md).toBe(`### helm-installer plan: release shop, namespace shop, chart shop-1.2.0

**Would upgrade: values \\<changed\\> by \\*you\\***

| action | kind | namespace | name | fields |
| --- | --- | --- | --- | --- |
| change | ConfigMap | shop | settings | /data/a\\|b<br>/metadata/annotations/x\\~1y |

1 unchanged

0 to create, 1 to change, 0 to delete

Hooks (helm deletes and re-creates them on every install):

| hook | kind | namespace | name |
| --- | --- | --- | --- |
| pre-install,pre-upgrade | Job | shop | migrate |

<details>
<summary>~ change ConfigMap shop/settings</summary>

Changed by kubectl-edit: the install reverts that edit.

\`\`\`\`diff
--- live ConfigMap settings (shop)
+++ desired
@@ -1,1 +1,1 @@
-  a|b: "\`\`\`"
+  a|b: x
\`\`\`\`

</details>

<details>
<summary>+ create Job shop/migrate (hook: pre-install,pre-upgrade)</summary>

\`\`\`diff
--- live Job migrate (shop)
+++ desired
@@ -0,0 +1,1 @@
+kind: Job
\`\`\`

</details>
`);
  });

  it('leaves the table out when nothing would change, and escapes HTML in a summary', () => {
    const md = formatMarkdown({
      ...report,
      decision: { action: 'nothing', reason: 'up to date' },
      entries: [],
      hooks: [],
    });
    expect(md).toBe(
      '### helm-installer plan: release shop, namespace shop, chart shop-1.2.0\n\n**Would do nothing: up to date**\n\n0 to create, 0 to change, 0 to delete\n',
    );
    const odd: PlanEntry = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'a',
      action: 'delete',
      fields: [],
      changedBy: [],
      diff: diff('ConfigMap a', '@@ -1,1 +0,0 @@', '-x: 1'),
      hook: '<b>&',
    };
    expect(formatMarkdown({ ...report, entries: [], hooks: [odd] })).toContain(
      '<summary>- delete ConfigMap a (hook: &lt;b&gt;&amp;)</summary>',
    );
  });
});

describe('removed APIs in the stored record', () => {
  const removedApis = [
    {
      revision: 3,
      kind: 'PodDisruptionBudget',
      namespace: 'shop',
      name: 'web',
      from: 'policy/v1beta1',
      to: 'policy/v1',
      removedIn: '1.25',
    },
    { revision: 3, kind: 'PodSecurityPolicy', name: 'shop-psp', from: 'policy/v1beta1', to: null, removedIn: '1.25' },
  ];
  const withRemoved: PlanReport = { ...report, entries: [], hooks: [], removedApis };

  it('text names each mapping under the decision', () => {
    expect(formatText(withRemoved, { color: false }).split('\n').slice(0, 6)).toEqual([
      'Plan for release shop in namespace shop, chart shop-1.2.0',
      'Would upgrade: the values differ from revision 3',
      '',
      'Removed APIs in the stored record (the cluster no longer serves them; install rewrites the record first, keeping the original):',
      '    revision 3: PodDisruptionBudget/shop/web: policy/v1beta1 -> policy/v1 (removed in Kubernetes 1.25)',
      '    revision 3: PodSecurityPolicy/shop-psp: policy/v1beta1 dropped (removed in Kubernetes 1.25 with no successor)',
    ]);
  });

  it('JSON lists them as removedApis, absent when there are none', () => {
    expect(JSON.parse(formatJson(withRemoved)).removedApis).toEqual(removedApis);
    expect(JSON.parse(formatJson(report))).not.toHaveProperty('removedApis');
  });
});

describe('what the cluster says before any change', () => {
  const refusals = [
    {
      object: 'StorageClass/fast',
      kind: 'missing-class',
      blocks: true,
      message:
        'StorageClass fast (named by PersistentVolumeClaim/data) does not exist; the cluster has: standard (default)',
      wayOut: ["Set the chart's values to a class the cluster has."],
    },
    {
      object: 'Deployment/web',
      kind: 'pod-security',
      blocks: false,
      message:
        'would violate PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)',
      wayOut: ['namespace shop warns on Pod Security', '  - runAsNonRoot != true'],
    },
  ];
  const withRefusals: PlanReport = { ...report, entries: [], hooks: [], refusals };
  it('text: each refused or warned about, its way out indented below', () => {
    expect(formatText(withRefusals, { color: false })).toBe(
      [
        'Plan for release shop in namespace shop, chart shop-1.2.0',
        'Would upgrade: the values differ from revision 3',
        '',
        'The cluster, asked before any change (server-side dry run of the pods, the classes named):',
        '    refused: StorageClass/fast: StorageClass fast (named by PersistentVolumeClaim/data) does not exist; the cluster has: standard (default)',
        "        Set the chart's values to a class the cluster has.",
        '    warning: Deployment/web: would violate PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)',
        '        namespace shop warns on Pod Security',
        '          - runAsNonRoot != true',
        '',
        countLine([]),
        '',
      ].join('\n'),
    );
  });
  it('JSON: "refusals" as they are, absent when there are none', () => {
    expect(JSON.parse(formatJson(withRefusals)).refusals).toEqual(refusals);
    expect('refusals' in JSON.parse(formatJson(report))).toBe(false);
  });
  it('Markdown: a list, escaped', () => {
    expect(formatMarkdown(withRefusals)).toContain(
      "- **refused** StorageClass/fast: StorageClass fast (named by PersistentVolumeClaim/data) does not exist; the cluster has: standard (default)\n  - Set the chart's values to a class the cluster has.\n",
    );
  });
});
