// The Preflight (troubleshoot.sh/v1beta2) of the app, pure: what must hold in the cluster for the
// installer Job to succeed, each check naming the chart or object that needs it. Strict where a
// failure means the Job cannot succeed (KOTS then blocks the deploy); the node resources only warn.
import { loadSemver } from '../common/semver-range.js';
import type { AppFacts, ClassKind, Needed } from './app-facts.js';
import type { PodSecurityFinding } from './pod-security.js';
import type { Obj } from './pod-spec.js';
import { outcome, regexQuote, TROUBLESHOOT_API_VERSION, type SpecTarget } from './spec-target.js';

const STRICT = true;

export function preflightSpec(facts: AppFacts, t: SpecTarget): Obj {
  const registry = t.localImages;
  return {
    apiVersion: TROUBLESHOOT_API_VERSION,
    kind: 'Preflight',
    metadata: { name: t.app },
    spec: {
      ...(registry ? { collectors: [{ registryImages: registryCollector(t, registry) }] } : {}),
      analyzers: [
        ...facts.kubeVersions.map(clusterVersion),
        ...classAnalyzers(facts.classes),
        ...facts.crds.map(crdAnalyzer),
        ...podSecurityAnalyzers(facts.podSecurity, t),
        ...nodeResources(facts.requests),
        ...(registry ? [registryAnalyzer(registry)] : []),
      ],
    },
  };
}

function clusterVersion(k: AppFacts['kubeVersions'][number]): Obj {
  const allowed = troubleshootRange(k.range);
  const message = `The chart ${k.chart} (release ${k.release}) installs on Kubernetes ${k.range} only (its Chart.yaml kubeVersion): helm refuses it on this cluster's version. Upgrade the cluster, or ask the vendor for a version of the chart that supports it.`;
  return {
    clusterVersion: {
      checkName: `Kubernetes version for ${k.release}`,
      strict: STRICT,
      outcomes:
        allowed === undefined
          ? [outcome('warn', `${message} (the range ${k.range} could not be read here: check it by hand)`)]
          : [
              outcome('pass', `Kubernetes is within ${k.range}, which the chart ${k.chart} needs.`, allowed),
              outcome('fail', message),
            ],
    },
  };
}

/** A chart's kubeVersion (Masterminds' grammar) as Troubleshoot's range (blang's): `>=1.27.0 <1.35.0 || ...`; undefined when unreadable. */
export function troubleshootRange(range: string): string | undefined {
  const translated = range
    .split('||')
    .map((p) => p.replace(/,/g, ' '))
    .join('||');
  let parsed;
  try {
    parsed = new (loadSemver().Range)(translated, { loose: true });
  } catch {
    return undefined;
  }
  const sets = parsed.set.map((comparators) =>
    comparators
      .map((c) =>
        c.value === '' ? '>=0.0.0' : `${c.operator || '='}${c.semver.major}.${c.semver.minor}.${c.semver.patch}`,
      )
      .join(' '),
  );
  return sets.join(' || ');
}

// Where Troubleshoot's clusterResources collector writes each kind's list (v0.133.0). It collects no
// RuntimeClasses, so those are left to the installer's own check before helm (reconcile/named-classes.ts).
const CLASS_FILES: Partial<Record<ClassKind, string>> = {
  StorageClass: 'cluster-resources/storage-classes.json',
  IngressClass: 'cluster-resources/ingress-classes.json',
  PriorityClass: 'cluster-resources/priorityclasses.json',
};

// An item's name in the collected list: ObjectMeta's first key (the list's own metadata has none).
const ITEM_NAME = '"metadata": \\{\\s*"name": "';

// Go template (sprig) over the whole collected list: the names of the items, comma separated.
const EXISTING = `{{ $names := regexFindAll \`${ITEM_NAME}[^"]+"\` .All -1 }}{{ range $i, $m := $names }}{{ if $i }}, {{ end }}{{ regexReplaceAll \`(?s)^.*"name": "|"$\` $m "" }}{{ else }}none{{ end }}`;

function classAnalyzers(classes: Record<ClassKind, Needed[]>): Obj[] {
  const kinds = Object.keys(CLASS_FILES) as ClassKind[];
  return kinds.flatMap((kind) => classes[kind].map((n) => classAnalyzer(kind, n, CLASS_FILES[kind]!)));
}

// textAnalyze, not the kind's own analyzer, so that the failure can list the classes that exist: `All`
// is the file up to the wanted name, or the whole file when it is missing (then the fail outcome).
// `Items` is empty when the list could not be collected (Troubleshoot then writes an empty file):
// unknown, a warning, not "none exist".
function classAnalyzer(kind: ClassKind, n: Needed, fileName: string): Obj {
  const missing = `${kind} ${n.name} does not exist, and ${n.by.join(', ')} ${n.by.length > 1 ? 'name' : 'names'} it: the install fails or its pods never start. The ${kind}es that exist: ${EXISTING}. Create ${n.name}, or set the chart's value to one of them.`;
  const unlisted = `Troubleshoot could not list the ${kind}es (${fileName.replace(/\.json$/, '-errors.json')} says why): whether ${n.name} exists is not known here; the installer checks it again before helm.`;
  return {
    textAnalyze: {
      checkName: `${kind} ${n.name}`,
      strict: STRICT,
      fileName,
      regexGroups: `(?s)^(?P<All>(?P<Items>.*?"items": )?.*?)(?:${ITEM_NAME}(?P<Wanted>${regexQuote(n.name)})".*)?$`,
      outcomes: [
        outcome('pass', `${kind} ${n.name} exists.`, `Wanted == ${n.name}`),
        outcome('warn', unlisted, "Items == ''"),
        outcome('fail', missing),
      ],
    },
  };
}

function crdAnalyzer(n: Needed): Obj {
  return {
    customResourceDefinition: {
      checkName: `CustomResourceDefinition ${n.name}`,
      strict: STRICT,
      customResourceDefinitionName: n.name,
      outcomes: [
        outcome(
          'fail',
          `The CustomResourceDefinition ${n.name} is not installed, and no chart of the app ships it; ${n.by.join(', ')} ${n.by.length > 1 ? 'need' : 'needs'} it. Install the operator that provides it first.`,
        ),
        outcome('pass', `The CustomResourceDefinition ${n.name} is installed.`),
      ],
    },
  };
}

// The namespace's `enforce` label, read from the collected namespaces (Go's JSON: labels sorted, so
// kubernetes.io/metadata.name comes before pod-security.kubernetes.io/enforce within one map).
function enforceRegex(namespace: string): string {
  return `"kubernetes\\.io/metadata\\.name": "${regexQuote(namespace)}"(?:,\\s*"[^"]*": "[^"]*")*,\\s*"pod-security\\.kubernetes\\.io/enforce": "(?P<Level>[a-z]+)"`;
}

const LISTED = 8;

function podSecurityAnalyzers(findings: PodSecurityFinding[], t: SpecTarget): Obj[] {
  const namespaces = [...new Set(findings.map((f) => f.namespace))];
  return namespaces.map((ns) => {
    const of = (level: string) => findings.find((f) => f.namespace === ns && f.level === level);
    const [baseline, restricted] = [of('baseline'), of('restricted')];
    const refused = (level: string, f: PodSecurityFinding) => {
      const shown = f.violations.slice(0, LISTED).join('; ');
      const more = f.violations.length > LISTED ? `; and ${f.violations.length - LISTED} more` : '';
      return `The namespace ${t.namespace(ns)} enforces Pod Security "${level}", which refuses pods of the app: ${shown}${more}. Label the namespace with a lower level (pod-security.kubernetes.io/enforce), or ask the vendor.`;
    };
    const outcomes = [
      ...(baseline
        ? [
            outcome('fail', refused('baseline', baseline), 'Level == baseline'),
            outcome('fail', refused('restricted', baseline), 'Level == restricted'),
          ]
        : []),
      ...(restricted && !baseline ? [outcome('fail', refused('restricted', restricted), 'Level == restricted')] : []),
      outcome('pass', `The namespace ${t.namespace(ns)} admits the app's pods.`),
    ];
    return {
      textAnalyze: {
        checkName: `Pod Security of namespace ${t.namespace(ns)}`,
        strict: STRICT,
        fileName: 'cluster-resources/namespaces.json',
        regexGroups: enforceRegex(t.namespace(ns)),
        outcomes,
      },
    };
  });
}

function nodeResources(r: AppFacts['requests']): Obj[] {
  const checks: Obj[] = [];
  if (r.cpuMillis > 0) {
    const cpu = `${r.cpuMillis}m`;
    checks.push({
      nodeResources: {
        checkName: 'CPU for the app',
        outcomes: [
          outcome(
            'warn',
            `The app's workloads request ${cpu} CPU in all; the nodes have less allocatable: pods stay Pending (Insufficient cpu).`,
            `sum(cpuAllocatable) < ${cpu}`,
          ),
          outcome('pass', `The nodes have the ${cpu} CPU the app requests.`),
        ],
      },
    });
  }
  if (r.memoryBytes > 0) {
    const mem = `${Math.ceil(r.memoryBytes / 2 ** 20)}Mi`;
    checks.push({
      nodeResources: {
        checkName: 'Memory for the app',
        outcomes: [
          outcome(
            'warn',
            `The app's workloads request ${mem} of memory in all; the nodes have less allocatable: pods stay Pending (Insufficient memory).`,
            `sum(memoryAllocatable) < ${mem}`,
          ),
          outcome('pass', `The nodes have the ${mem} of memory the app requests.`),
        ],
      },
    });
  }
  return checks;
}

const REGISTRY_COLLECTOR = 'local-registry-images';

function registryCollector(t: SpecTarget, r: NonNullable<SpecTarget['localImages']>): Obj {
  return {
    collectorName: REGISTRY_COLLECTOR,
    ...(r.exclude !== undefined ? { exclude: r.exclude } : {}),
    namespace: t.installNamespace,
    ...(r.pullSecret !== undefined ? { imagePullSecret: { name: r.pullSecret } } : {}),
    images: r.images,
  };
}

function registryAnalyzer(r: NonNullable<SpecTarget['localImages']>): Obj {
  return {
    registryImages: {
      checkName: 'Images in the local registry',
      collectorName: REGISTRY_COLLECTOR,
      strict: STRICT,
      ...(r.exclude !== undefined ? { exclude: r.exclude } : {}),
      outcomes: [
        outcome(
          'fail',
          'The local registry could not be asked for every image of the app (unreachable, or it refused the credentials): the installer would stop with exit 6. Check the registry address and its pull secret.',
          'errors > 0',
        ),
        outcome(
          'fail',
          `Images of the app are missing from the local registry: push the airgap bundle's images to it (the installer would stop with exit 6, listing them).`,
          'missing > 0',
        ),
        outcome('pass', `The local registry holds all ${r.images.length} images of the app.`),
      ],
    },
  };
}
