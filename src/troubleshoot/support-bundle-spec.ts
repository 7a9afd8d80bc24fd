// The SupportBundle (troubleshoot.sh/v1beta2) of the app and its Redactor, pure: what the admin
// sends the vendor when an install failed. Collected: the installer Job's logs, the last run's
// outcome (the ConfigMap the installer leaves, see src/releases/last-run.ts), the inventory and
// app revisions, the release records' history without values, the release namespaces' Events and
// objects, the app's pods' logs. Analyzed in the admin's words: the exit code, its meaning, the
// cause and the next step, the app revision, each release's status, the Job's and the workloads'.
// No secret value: no `includeValue`, no `collectValues`, and a Redactor for the keys the
// installer masks.
import { inventoryName } from '../releases/inventory.js';
import { lastRunName } from '../releases/last-run.js';
import type { AppFacts } from './app-facts.js';
import type { Obj } from './pod-spec.js';
import { outcome, regexQuote, TROUBLESHOOT_API_VERSION, type SpecTarget } from './spec-target.js';

// The ConfigMaps the installer writes in its namespace.
const inventoryConfigMap = inventoryName;
const lastRunConfigMap = lastRunName;

export interface BundleRelease {
  release: string;
  namespace: string;
}

export function supportBundleSpec(facts: AppFacts, releases: BundleRelease[], t: SpecTarget): Obj {
  const namespaces = [...new Set([t.installNamespace, ...facts.namespaces.map(t.namespace)])];
  return {
    apiVersion: TROUBLESHOOT_API_VERSION,
    kind: 'SupportBundle',
    metadata: { name: t.app },
    spec: {
      collectors: [
        { clusterInfo: {} },
        { clusterResources: { namespaces } },
        {
          logs: {
            collectorName: 'installer',
            name: 'installer',
            namespace: t.installNamespace,
            selector: [`batch.kubernetes.io/job-name=${t.installerJob}`],
            limits: { maxLines: 10000 },
          },
        },
        {
          configMap: {
            collectorName: 'last-run',
            name: lastRunConfigMap(t.app),
            namespace: t.installNamespace,
            includeAllData: true,
          },
        },
        {
          configMap: {
            collectorName: 'inventory',
            name: inventoryConfigMap(t.app),
            namespace: t.installNamespace,
            includeAllData: true,
          },
        },
        // The release records' history: revision, status, date. Never collectValues: values hold the customer's secrets.
        ...namespaces.map((namespace) => ({ helm: { collectorName: `releases-${namespace}`, namespace } })),
        ...releases.map((r) => ({
          logs: {
            collectorName: `app-${r.release}`,
            name: `app/${r.release}`,
            namespace: t.namespace(r.namespace),
            selector: [`app.kubernetes.io/instance=${r.release}`],
            limits: { maxLines: 5000 },
          },
        })),
      ],
      analyzers: [
        installerOutcome(t),
        appRevision(t),
        ...releases.map((r) => releaseStatus(r, t)),
        installerJob(t),
        ...facts.workloads.map((w) => workload(w, t)),
      ],
    },
  };
}

// A ConfigMap's data as the configMap collector writes it: JSON, keys sorted, newlines as \n.
const lastRunFile = (t: SpecTarget) => `configmaps/${t.installNamespace}/${lastRunConfigMap(t.app)}.json`;
const JSON_TEXT = '(?:[^"\\\\]|\\\\.)*';

function installerOutcome(t: SpecTarget): Obj {
  return {
    textAnalyze: {
      checkName: 'The installer',
      fileName: lastRunFile(t),
      regexGroups: `"cause": "(?P<Cause>${JSON_TEXT})",\\s*"exitCode": "(?P<ExitCode>[0-9]+)",\\s*"meaning": "(?P<Meaning>[^"]*)",\\s*"next": "(?P<Next>${JSON_TEXT})"`,
      outcomes: [
        outcome(
          'fail',
          'The installer failed with exit {{ .ExitCode }} ({{ .Meaning }}): {{ .Cause }} Next: {{ .Next }}',
          'ExitCode > 0',
        ),
        outcome('pass', 'The installer succeeded (exit 0).', 'ExitCode == 0'),
        outcome(
          'warn',
          `The installer left no outcome (the ConfigMap ${lastRunConfigMap(t.app)} in ${t.installNamespace}): it has not finished a run yet, or it was killed; see the installer's logs.`,
        ),
      ],
    },
  };
}

function appRevision(t: SpecTarget): Obj {
  return {
    textAnalyze: {
      checkName: 'App revision',
      fileName: lastRunFile(t),
      regexGroups: `"appRevision": "(?P<Line>app revision (?P<Revision>[0-9]+) (?P<Status>[a-z]+)${JSON_TEXT})"`,
      outcomes: [
        outcome('pass', '{{ .Line }}', 'Status == deployed'),
        outcome('fail', '{{ .Line }}', 'Status == failed'),
        outcome('warn', 'No app revision recorded (one chart, or no run has finished).'),
      ],
    },
  };
}

function releaseStatus(r: BundleRelease, t: SpecTarget): Obj {
  const ns = t.namespace(r.namespace);
  // The helm collector lists each release's history, oldest first: the greedy gap ends on the last revision.
  const name = `release ${ns}/${r.release}`;
  return {
    textAnalyze: {
      checkName: `Release ${r.release}`,
      fileName: `helm/${ns}.json`,
      regexGroups: `"releaseName": "${regexQuote(r.release)}",[^\\]]*"revision": "(?P<Revision>[0-9]+)",\\s*"date": "[^"]*",\\s*"status": "(?P<Status>[a-z-]+)"`,
      outcomes: [
        outcome('pass', `${name}: revision {{ .Revision }} deployed.`, 'Status == deployed'),
        outcome(
          'fail',
          `${name}: revision {{ .Revision }} failed; the installer's outcome above says why.`,
          'Status == failed',
        ),
        ...['pending-install', 'pending-upgrade', 'pending-rollback'].map((s) =>
          outcome(
            'fail',
            `${name}: revision {{ .Revision }} is stuck in ${s} (an installer was stopped mid-run); the next installer run recovers it.`,
            `Status == ${s}`,
          ),
        ),
        outcome('warn', `${name}: no deployed, failed or pending revision found (not installed yet, or switched off).`),
      ],
    },
  };
}

// Troubleshoot's jobStatus analyzer fails a Job it does not find, and KOTS deletes the installer
// Job once it succeeds: read the collected Job instead. Its last condition's type (the greedy gap
// ends on the last one; the conditions hold no array) is Failed or Complete once it has ended; a
// Job without conditions matches with an empty type; no match at all is a Job that is gone.
function installerJob(t: SpecTarget): Obj {
  const conditions = `(?:"conditions": \\[[^\\]]*"type": "(?P<Type>[A-Za-z]+)"[^\\]]*\\])?`;
  return {
    textAnalyze: {
      checkName: 'The installer Job',
      fileName: `cluster-resources/jobs/${t.installNamespace}.json`,
      regexGroups: `"name": "${regexQuote(t.installerJob)}",(?s:.*?)"status": \\{\\s*${conditions}`,
      outcomes: [
        outcome(
          'fail',
          `The installer Job ${t.installerJob} failed: its logs are in installer/, its outcome above.`,
          'Type == Failed',
        ),
        outcome('pass', `The installer Job ${t.installerJob} completed.`, 'Type == Complete'),
        outcome('warn', `The installer Job ${t.installerJob} is still running (or waiting for its pod).`, "Type == ''"),
        ...['FailureTarget', 'SuccessCriteriaMet', 'Suspended'].map((type) =>
          outcome(
            'warn',
            `The installer Job ${t.installerJob} is ending or suspended ({{ .Type }}).`,
            `Type == ${type}`,
          ),
        ),
        outcome(
          'pass',
          `The installer Job ${t.installerJob} is gone: KOTS deletes it once it succeeds (or it was never deployed).`,
        ),
      ],
    },
  };
}

function workload(w: AppFacts['workloads'][number], t: SpecTarget): Obj {
  const key = w.kind === 'Deployment' ? 'deploymentStatus' : 'statefulsetStatus';
  const what = `${w.kind} ${w.name}`;
  return {
    [key]: {
      checkName: what,
      namespace: t.namespace(w.namespace),
      name: w.name,
      outcomes: [
        outcome('warn', `${what} does not exist (not installed yet, or switched off).`, 'absent'),
        outcome('fail', `${what} has no ready replica.`, '< 1'),
        outcome('pass', `${what} is ready.`),
      ],
    },
  };
}

// The keys the installer masks (src/common/secrets.ts SECRET_KEY), as Troubleshoot redactors (they
// read line by line): a quoted value in JSON or YAML, and an unquoted YAML scalar. Never a map or a
// list, a boolean or a number in JSON (`"f:automountServiceAccountToken": {}` in managedFields):
// masking those would leave JSON the analyzers can no longer read.
const SECRET_KEY_WORDS =
  'pass(?:word|wd|phrase)?|secret|token|api[-_]?key|private[-_]?key|credential|auth|dockerconfigjson|license[-_]?key';
const KEY = `[A-Za-z0-9_.-]*(?:${SECRET_KEY_WORDS})[A-Za-z0-9_.-]*`;

export function redactorSpec(t: SpecTarget): Obj {
  return {
    apiVersion: TROUBLESHOOT_API_VERSION,
    kind: 'Redactor',
    metadata: { name: t.app },
    spec: {
      redactors: [
        {
          name: 'quoted values of the keys the installer masks',
          removals: { regex: [{ redactor: `(?i)("?${KEY}"?\\s*:\\s*")(?P<mask>[^"]+)(")` }] },
        },
        {
          name: 'single-quoted YAML values of the keys the installer masks',
          removals: { regex: [{ redactor: `(?i)(${KEY}:\\s*')(?P<mask>[^']+)(')` }] },
        },
        {
          name: 'unquoted YAML values of the keys the installer masks',
          removals: { regex: [{ redactor: `(?i)^(\\s*-?\\s*${KEY}:[ \\t]+)(?P<mask>[^\\s"'{\\[|>&*!#][^#]*?)\\s*$` }] },
        },
      ],
    },
  };
}
