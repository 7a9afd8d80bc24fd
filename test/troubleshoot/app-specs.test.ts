// The Troubleshoot specs made from rendered objects (src/troubleshoot/), pure: each expected
// analyzer written out by hand. Troubleshoot's own CLIs run them in
// test/integration/troubleshoot-preflight.test.ts and job-real-node.test.ts.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { InstallerError } from '../../src/common/errors.js';
import { ExitCode } from '../../src/common/exit-codes.js';
import { SecretRegistry } from '../../src/common/secrets.js';
import { lastRunData } from '../../src/releases/last-run.js';
import { appFacts, type ReleaseRender } from '../../src/troubleshoot/app-facts.js';
import { appSpecs } from '../../src/troubleshoot/app-specs.js';
import { troubleshootRange } from '../../src/troubleshoot/preflight-spec.js';
import { specTarget } from '../../src/troubleshoot/spec-targets.js';
import { firstDifference, specsYaml } from '../../src/troubleshoot/specs-yaml.js';

const restrictedContainer = {
  name: 'web',
  image: 'web:1',
  resources: { requests: { cpu: '250m', memory: '128Mi' } },
  securityContext: {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
  },
};

const shop: ReleaseRender = {
  release: 'shop',
  namespace: 'apps',
  chart: { name: 'shop', version: '1.0.0', kubeVersion: '>=1.27.0-0 <1.40.0' },
  objects: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        template: {
          spec: { priorityClassName: 'shop-high', runtimeClassName: 'gvisor', containers: [restrictedContainer] },
        },
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'data' },
      spec: {
        template: {
          spec: { containers: [{ name: 'db', image: 'db:1', resources: { requests: { cpu: '0.5', memory: '1Gi' } } }] },
        },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { storageClassName: 'fast-ssd' } }],
      },
    },
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'web' },
      spec: { ingressClassName: 'nginx' },
    },
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'uploads' }, spec: { storageClassName: '' } },
    { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'web' } },
    { apiVersion: 'shop.example.com/v1', kind: 'Promotion', metadata: { name: 'spring' } },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate', annotations: { 'helm.sh/hook': 'pre-upgrade' } },
      spec: { template: { spec: { hostNetwork: true, containers: [{ name: 'm', image: 'm:1' }] } } },
    },
  ],
};
const operator: ReleaseRender = {
  release: 'operator',
  namespace: 'apps',
  chart: { name: 'operator', version: '0.1.0' },
  objects: [
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'promotions.shop.example.com' },
    },
  ],
};

describe('appFacts', () => {
  const facts = appFacts([shop, operator]);

  it('names each class and CRD the objects need, with who needs it; a CRD another release ships is not needed', () => {
    expect(facts.classes).toEqual({
      StorageClass: [{ name: 'fast-ssd', by: ['shop: StatefulSet/db'] }],
      IngressClass: [{ name: 'nginx', by: ['shop: Ingress/web'] }],
      PriorityClass: [{ name: 'shop-high', by: ['shop: Deployment/web'] }],
      RuntimeClass: [{ name: 'gvisor', by: ['shop: Deployment/web'] }],
    });
    expect(facts.crds).toEqual([{ name: 'servicemonitors.monitoring.coreos.com', by: ['shop: ServiceMonitor/web'] }]);
  });

  it('sums the requests of Deployments and StatefulSets at their replicas (2 x 250m + 500m; 2 x 128Mi + 1Gi)', () => {
    expect(facts.requests).toEqual({ cpuMillis: 1000, memoryBytes: 1280 * 2 ** 20 });
  });

  it('finds what Pod Security refuses, per namespace and lowest level, naming the fields', () => {
    expect(facts.podSecurity).toEqual([
      { namespace: 'apps', level: 'baseline', violations: ['shop: Job/migrate: spec.template.spec.hostNetwork=true'] },
      {
        namespace: 'apps',
        level: 'restricted',
        violations: [
          'shop: Job/migrate: spec.template.spec.hostNetwork=true, ' +
            'spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation != false, ' +
            'spec.template.spec.containers[0].securityContext.capabilities.drop lacks ALL, ' +
            'spec.template.spec.containers[0].securityContext.runAsNonRoot != true, ' +
            'spec.template.spec.containers[0].securityContext.seccompProfile.type unset (RuntimeDefault or Localhost)',
        ],
      },
      {
        namespace: 'data',
        level: 'restricted',
        violations: [
          'shop: StatefulSet/db: spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation != false, ' +
            'spec.template.spec.containers[0].securityContext.capabilities.drop lacks ALL, ' +
            'spec.template.spec.containers[0].securityContext.runAsNonRoot != true, ' +
            'spec.template.spec.containers[0].securityContext.seccompProfile.type unset (RuntimeDefault or Localhost)',
        ],
      },
    ]);
    expect(facts.workloads).toEqual([
      { kind: 'Deployment', namespace: 'apps', name: 'web' },
      { kind: 'StatefulSet', namespace: 'data', name: 'db' },
    ]);
  });
});

describe('troubleshootRange', () => {
  it.each([
    ['>=1.27.0-0', '>=1.27.0'],
    ['>=1.27.0-0 <1.40.0', '>=1.27.0 <1.40.0'],
    ['>= 1.25, < 1.30', '>=1.25.0 <1.30.0'],
    ['~1.29.0', '>=1.29.0 <1.30.0'],
    ['<1.20.0 || >=1.30.0', '<1.20.0 || >=1.30.0'],
    ['*', '>=0.0.0'],
    ['not a range', undefined],
  ])('%s -> %s', (range, expected) => expect(troubleshootRange(range)).toBe(expected));
});

const plain = specTarget({
  format: 'plain',
  app: 'shop',
  installNamespace: 'apps',
  images: { source: ['web:1'], local: ['registry.local:5000/shop/web:1'] },
  pullSecret: 'shop-registry',
});

describe('the Preflight', () => {
  const [preflight] = appSpecs([shop, operator], plain).map((d) => parse(specsYaml([d])));
  const analyzers = preflight.spec.analyzers as Record<string, any>[];
  const find = (kind: string, name: string) =>
    analyzers.find((a) => a[kind] && a[kind].checkName.includes(name))?.[kind];

  it('fails a cluster outside a chart kubeVersion, naming the chart; strict', () => {
    expect(analyzers.filter((a) => a.clusterVersion)).toEqual([
      {
        clusterVersion: {
          checkName: 'Kubernetes version for shop',
          strict: true,
          outcomes: [
            {
              pass: {
                when: '>=1.27.0 <1.40.0',
                message: 'Kubernetes is within >=1.27.0-0 <1.40.0, which the chart shop 1.0.0 needs.',
              },
            },
            {
              fail: {
                message:
                  "The chart shop 1.0.0 (release shop) installs on Kubernetes >=1.27.0-0 <1.40.0 only (its Chart.yaml kubeVersion): helm refuses it on this cluster's version. Upgrade the cluster, or ask the vendor for a version of the chart that supports it.",
              },
            },
          ],
        },
      },
    ]);
  });

  it('fails a missing StorageClass, IngressClass or PriorityClass naming who needs it and listing those that exist; no RuntimeClass check', () => {
    expect(find('textAnalyze', 'StorageClass fast-ssd')).toEqual({
      checkName: 'StorageClass fast-ssd',
      strict: true,
      fileName: 'cluster-resources/storage-classes.json',
      regexGroups: '(?s)^(?P<All>(?P<Items>.*?"items": )?.*?)(?:"metadata": \\{\\s*"name": "(?P<Wanted>fast-ssd)".*)?$',
      outcomes: [
        { pass: { when: 'Wanted == fast-ssd', message: 'StorageClass fast-ssd exists.' } },
        {
          warn: {
            when: "Items == ''",
            message:
              'Troubleshoot could not list the StorageClasses (cluster-resources/storage-classes-errors.json says why): whether fast-ssd exists is not known here; the installer checks it again before helm.',
          },
        },
        {
          fail: {
            message:
              'StorageClass fast-ssd does not exist, and shop: StatefulSet/db names it: the install fails or its pods never start. The StorageClasses that exist: ' +
              '{{ $names := regexFindAll `"metadata": \\{\\s*"name": "[^"]+"` .All -1 }}{{ range $i, $m := $names }}{{ if $i }}, {{ end }}{{ regexReplaceAll `(?s)^.*"name": "|"$` $m "" }}{{ else }}none{{ end }}' +
              ". Create fast-ssd, or set the chart's value to one of them.",
          },
        },
      ],
    });
    expect(find('textAnalyze', 'IngressClass nginx')).toMatchObject({
      fileName: 'cluster-resources/ingress-classes.json',
      regexGroups: '(?s)^(?P<All>(?P<Items>.*?"items": )?.*?)(?:"metadata": \\{\\s*"name": "(?P<Wanted>nginx)".*)?$',
    });
    expect(find('textAnalyze', 'PriorityClass shop-high')).toMatchObject({
      fileName: 'cluster-resources/priorityclasses.json',
      regexGroups:
        '(?s)^(?P<All>(?P<Items>.*?"items": )?.*?)(?:"metadata": \\{\\s*"name": "(?P<Wanted>shop-high)".*)?$',
    });
    // Troubleshoot collects no RuntimeClasses: the installer's own check before helm covers them.
    expect(JSON.stringify(analyzers)).not.toContain('gvisor');
    expect(find('customResourceDefinition', 'servicemonitors').customResourceDefinitionName).toBe(
      'servicemonitors.monitoring.coreos.com',
    );
  });

  it("reads each namespace's enforce label and fails the levels that refuse the app's pods", () => {
    const data = find('textAnalyze', 'namespace data');
    expect(data.regexGroups).toBe(
      '"kubernetes\\.io/metadata\\.name": "data"(?:,\\s*"[^"]*": "[^"]*")*,\\s*"pod-security\\.kubernetes\\.io/enforce": "(?P<Level>[a-z]+)"',
    );
    expect(data.outcomes.map((o: any) => Object.keys(o)[0] + ' ' + (Object.values(o)[0] as any).when)).toEqual([
      'fail Level == restricted',
      'pass undefined',
    ]);
    const apps = find('textAnalyze', 'namespace apps');
    expect(apps.outcomes.map((o: any) => (Object.values(o)[0] as any).when)).toEqual([
      'Level == baseline',
      'Level == restricted',
      undefined,
    ]);
    expect(apps.outcomes[0].fail.message).toBe(
      'The namespace apps enforces Pod Security "baseline", which refuses pods of the app: shop: Job/migrate: spec.template.spec.hostNetwork=true. Label the namespace with a lower level (pod-security.kubernetes.io/enforce), or ask the vendor.',
    );
  });

  it('warns when the nodes have less than the app requests; checks the local registry for every image, unreachable as a failure', () => {
    expect(find('nodeResources', 'CPU').outcomes[0].warn.when).toBe('sum(cpuAllocatable) < 1000m');
    expect(find('nodeResources', 'Memory').outcomes[0].warn.when).toBe('sum(memoryAllocatable) < 1280Mi');
    expect(preflight.spec.collectors).toEqual([
      {
        registryImages: {
          collectorName: 'local-registry-images',
          namespace: 'apps',
          imagePullSecret: { name: 'shop-registry' },
          images: ['registry.local:5000/shop/web:1'],
        },
      },
    ]);
    expect(
      find('registryImages', 'local registry').outcomes.map((o: any) => [
        Object.keys(o)[0],
        (Object.values(o)[0] as any).when,
      ]),
    ).toEqual([
      ['fail', 'errors > 0'],
      ['fail', 'missing > 0'],
      ['pass', undefined],
    ]);
  });
});

describe('the SupportBundle', () => {
  const docs = appSpecs([shop, operator], plain);
  const text = specsYaml(docs);

  it('collects no secret value', () => {
    expect(text).not.toMatch(/includeValue|collectValues|secret:/);
  });

  it("collects the installer Job's logs, its last outcome, the inventory and the release records of each namespace", () => {
    const collectors = parse(specsYaml([docs[1]!])).spec.collectors;
    expect(collectors.slice(0, 7)).toEqual([
      { clusterInfo: {} },
      { clusterResources: { namespaces: ['apps', 'data'] } },
      {
        logs: {
          collectorName: 'installer',
          name: 'installer',
          namespace: 'apps',
          selector: ['batch.kubernetes.io/job-name=shop-installer'],
          limits: { maxLines: 10000 },
        },
      },
      {
        configMap: {
          collectorName: 'last-run',
          name: 'helm-installer-shop-last-run',
          namespace: 'apps',
          includeAllData: true,
        },
      },
      {
        configMap: {
          collectorName: 'inventory',
          name: 'helm-installer-shop-releases',
          namespace: 'apps',
          includeAllData: true,
        },
      },
      { helm: { collectorName: 'releases-apps', namespace: 'apps' } },
      { helm: { collectorName: 'releases-data', namespace: 'data' } },
    ]);
  });

  it("the installer's outcome: its regex finds the groups in the collected ConfigMap (JSON, keys sorted)", () => {
    const analyzer = parse(specsYaml([docs[1]!])).spec.analyzers[0].textAnalyze;
    expect(analyzer.fileName).toBe('configmaps/apps/helm-installer-shop-last-run.json');
    // What the configMap collector writes for the ConfigMap the installer leaves.
    const collected = JSON.stringify(
      {
        name: 'x',
        data: {
          appRevision: 'app revision 2 failed',
          cause: 'apps/shop: helm said "no"',
          exitCode: '4',
          meaning: 'helm operation failed',
          next: 'fix it',
          summary: 'a\nb',
        },
      },
      null,
      2,
    );
    const groups = new RegExp(analyzer.regexGroups.replace(/\(\?P</g, '(?<')).exec(collected)?.groups;
    expect(groups).toEqual({
      Cause: 'apps/shop: helm said \\"no\\"',
      ExitCode: '4',
      Meaning: 'helm operation failed',
      Next: 'fix it',
    });
  });
});

describe('specsYaml and --check', () => {
  it('single-quotes every KOTS template, so that a rendered namespace stays a string', () => {
    const kots = specTarget({
      format: 'kots',
      app: 'shop',
      installNamespace: 'apps',
      images: { source: ['web:1'], local: [] },
    });
    const text = specsYaml(appSpecs([shop], kots));
    expect(text).toContain("        namespace: 'repl{{ Namespace }}'\n");
    expect(text).toContain('          - \'repl{{ LocalImageName "web:1" }}\'\n');
    expect(text).toContain("        exclude: 'repl{{ not HasLocalRegistry }}'\n");
    expect(text).toContain("          - 'batch.kubernetes.io/job-name=shop-installer-repl{{ Sequence }}'\n");
  });

  it('names the first line that differs', () => {
    expect(firstDifference('a\nb\n', 'a\nb\n')).toBeUndefined();
    expect(firstDifference('a\r\nb\n', 'a\nc\n')).toEqual({ line: 2, committed: 'b', fresh: 'c' });
    expect(firstDifference('a\n', 'a\nb\n')).toEqual({ line: 2, committed: '', fresh: 'b' });
  });
});

describe('lastRunData', () => {
  it("one line each, masked: the first failed release's cause and next step, the app revision", () => {
    const secrets = new SecretRegistry();
    secrets.add('hunter22');
    const error = new InstallerError(ExitCode.helmFailed, 'pre-upgrade hooks failed: password hunter22\nmore', {
      hint: 'see the Job',
    });
    const data = lastRunData(
      [
        { key: 'apps/cache', status: 'done', action: 'upgraded', seconds: 1 },
        { key: 'apps/shop', status: 'failed', error, seconds: 2 },
      ],
      4,
      'the summary',
      secrets,
      { revision: 2, status: 'rolled back', at: '2026-11-28T00:00:00Z', releases: [], rolledBackTo: 1 },
    );
    expect(data).toEqual({
      exitCode: '4',
      meaning: 'helm operation failed',
      cause: 'apps/shop: pre-upgrade hooks failed: password [REDACTED]',
      next: 'see the Job',
      appRevision: 'app revision 2 failed; every release it changed went back: the app is at app revision 1',
      summary: 'the summary',
    });
  });
});

describe('the Redactor', () => {
  const redactors = (
    parse(specsYaml([appSpecs([shop], plain)[2]!])).spec.redactors as { removals: { regex: { redactor: string }[] } }[]
  ).map((r) => new RegExp(r.removals.regex[0]!.redactor.replace(/^\(\?i\)/, '').replace(/\(\?P</g, '(?<'), 'i'));
  // Troubleshoot reads line by line and replaces the `mask` group.
  const redact = (line: string) =>
    redactors.reduce((l, re) => l.replace(re, (...m) => m[0].replace(m.at(-1).mask, '***HIDDEN***')), line);

  it.each([
    ['    "password": "hunter22",', '    "password": "***HIDDEN***",'],
    ['{"level":30,"apiToken":"abc123","msg":"x"}', '{"level":30,"apiToken":"***HIDDEN***","msg":"x"}'],
    ['  databasePassword: hunter22', '  databasePassword: ***HIDDEN***'],
    ["  - authKey: 'abc'", "  - authKey: '***HIDDEN***'"],
    ['    "f:automountServiceAccountToken": {},', '    "f:automountServiceAccountToken": {},'],
    ['        "automountServiceAccountToken": false,', '        "automountServiceAccountToken": false,'],
    ['  tokenSecretRef:', '  tokenSecretRef:'],
  ])('%s', (line, expected) => expect(redact(line)).toBe(expected));
});
