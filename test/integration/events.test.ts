// The installer's Kubernetes Events on the real control plane, through the built CLI, read back
// with kubectl (never from the installer's own words): one per outcome with its reason and type,
// on the release's namespace outside a Job and on the Job (its uid too, so `kubectl describe job`
// lists them) when HELM_INSTALLER_JOB_* name one; an identity that may not write them still
// installs (exit 0), the preflight and the log naming what is missing; no secret in any Event.
import { hostname } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { repoRoot, runCli, tempDir } from '../helpers.js';
import { REPORTING_CONTROLLER } from '../../src/tell/event-body.js';
import {
  install,
  installerEvents,
  kubeconfig,
  markPending,
  namespacesDeletedAfterAll,
  type EventJson,
} from './cluster-helpers.js';
import { serviceAccountsDeletedAfterAll, shippedRole } from './service-account.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'plan');
const source = ['--chart', chart, '--base-values', join(chart, 'values.yaml')];
const opts = (namespace: string) => ({ kubeconfig: kubeconfig(), namespace });
const fresh = namespacesDeletedAfterAll();
const identity = serviceAccountsDeletedAfterAll();

const brief = (e: EventJson) => ({ reason: e.reason, type: e.type, regarding: e.regarding, note: e.note });
const namespaceRef = (ns: string) => ({ apiVersion: 'v1', kind: 'Namespace', name: ns, namespace: ns });

/** A Job that never runs a pod (suspended): the object the installer's Events go on, as in a real Job. */
async function suspendedJob(namespace: string, name = 'installer'): Promise<{ name: string; uid: string }> {
  const job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      suspend: true,
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'installer', image: 'example.invalid/installer:1' }] },
      },
    },
  };
  await kubectl(['apply', '-f', '-'], { ...opts(namespace), input: JSON.stringify(job) });
  return { name, uid: (await getJson(['get', 'job', name], opts(namespace))).metadata.uid };
}

function logLines(stdout: string): { level: number; msg: string; [k: string]: unknown }[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

describe('Kubernetes Events, one per outcome', () => {
  it('outside a Job: Installed, Unchanged, Upgraded (Normal) on the release namespace, found by reason and by release', async () => {
    const ns = await fresh('events-life');
    for (const args of [source, source, [...source, '--set', 'color=green']]) {
      const r = await install('shop', ns, args);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const events = await installerEvents(ns);
    expect(events.map(brief)).toEqual([
      {
        reason: 'Installed',
        type: 'Normal',
        regarding: namespaceRef(ns),
        note: `release ${ns}/shop: installed as revision 1 (chart plan-0.1.0)`,
      },
      {
        reason: 'Unchanged',
        type: 'Normal',
        regarding: namespaceRef(ns),
        note: `release ${ns}/shop: revision 1 is deployed and healthy, chart and values unchanged: nothing to do`,
      },
      {
        reason: 'Upgraded',
        type: 'Normal',
        regarding: namespaceRef(ns),
        note: `release ${ns}/shop: upgraded to revision 2 (chart plan-0.1.0)`,
      },
    ]);
    expect(events.map((e) => e.action)).toEqual(['Install', 'Check', 'Upgrade']);
    for (const e of events) {
      expect(e.metadata.namespace).toBe(ns);
      expect(e.reportingInstance).toBe(hostname());
      expect(e.metadata.labels).toEqual({
        'helm-installer.io/release': 'shop',
        'helm-installer.io/release-namespace': ns,
      });
    }
    // As the README tells an admin to look for them.
    const byReason = await kubectl(
      ['get', 'events', '--field-selector', 'reason=Upgraded', '-o', 'jsonpath={.items[*].message}'],
      opts(ns),
    );
    expect(byReason.stdout).toBe(`release ${ns}/shop: upgraded to revision 2 (chart plan-0.1.0)`);
    const byRelease = await getJson<{ items: unknown[] }>(
      ['get', 'events', '-l', 'helm-installer.io/release=shop'],
      opts(ns),
    );
    expect(byRelease.items).toHaveLength(3);
  });

  it('in a Job (HELM_INSTALLER_JOB_*): on the Job, with its uid, in its namespace; kubectl describe job lists them; a uid not given is read from the Job', async () => {
    const jobNs = await fresh('events-job');
    const ns = await fresh('events-job-release');
    const job = await suspendedJob(jobNs);
    const env = {
      HELM_INSTALLER_JOB_NAME: job.name,
      HELM_INSTALLER_JOB_UID: job.uid,
      HELM_INSTALLER_JOB_NAMESPACE: jobNs,
    };
    const first = await install('shop', ns, source, env);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(logLines(first.stdout).some((l) => l.msg === `1 Event(s) written on Job ${jobNs}/${job.name}`)).toBe(true);
    // Only the name, the namespace the pod's (POD_NAMESPACE): the installer reads the Job's uid.
    const second = await install('shop', ns, source, { HELM_INSTALLER_JOB_NAME: job.name, POD_NAMESPACE: jobNs });
    expect(second.exitCode, second.stderr).toBe(0);

    const jobRef = { apiVersion: 'batch/v1', kind: 'Job', name: job.name, namespace: jobNs, uid: job.uid };
    expect((await installerEvents(jobNs)).map(brief)).toEqual([
      {
        reason: 'Installed',
        type: 'Normal',
        regarding: jobRef,
        note: `release ${ns}/shop: installed as revision 1 (chart plan-0.1.0)`,
      },
      {
        reason: 'Unchanged',
        type: 'Normal',
        regarding: jobRef,
        note: `release ${ns}/shop: revision 1 is deployed and healthy, chart and values unchanged: nothing to do`,
      },
    ]);
    // None in the release's namespace: a Job's Events are all on the Job.
    expect(await installerEvents(ns)).toEqual([]);
    const described = (await kubectl(['describe', 'job', job.name], opts(jobNs))).stdout;
    const events = described.slice(described.indexOf('\nEvents:'));
    expect(events).toMatch(
      new RegExp(
        `Normal +Installed +\\S+ +${REPORTING_CONTROLLER} +release ${ns}/shop: installed as revision 1 \\(chart plan-0\\.1\\.0\\)`,
      ),
    );
    expect(events).toMatch(
      new RegExp(
        `Normal +Unchanged +\\S+ +${REPORTING_CONTROLLER} +release ${ns}/shop: revision 1 is deployed and healthy`,
      ),
    );
  });

  it('a release plan in a Job: one Event per release, every one on the Job', async () => {
    const ns = await fresh('events-plan');
    const job = await suspendedJob(ns);
    const r = await runCli(
      [
        'install',
        '--app-dir',
        join(repoRoot, 'test', 'fixtures', 'release-plan'),
        '--namespace',
        ns,
        '--timeout',
        '60s',
      ],
      {
        env: {
          KUBECONFIG: kubeconfig(),
          HELM_INSTALLER_JOB_NAME: job.name,
          HELM_INSTALLER_JOB_UID: job.uid,
          HELM_INSTALLER_JOB_NAMESPACE: ns,
        },
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const told = (await installerEvents(ns)).map((e) => [
      e.metadata.labels?.['helm-installer.io/release'],
      e.reason,
      e.type,
      e.regarding.kind,
      e.regarding.uid,
    ]);
    expect(told.sort()).toEqual(
      ['cache', 'operator', 'report', 'web'].map((release) => [release, 'Installed', 'Normal', 'Job', job.uid]),
    );
  });

  it("a failure: Failed (Warning) with the summary's cause, and no secret value in any Event", async () => {
    const ns = await fresh('events-failed');
    // A chart whose ConfigMap is named by a value: a name the API refuses puts the value in helm's
    // error, hence in the cause; the same value is given as a secret-looking key's.
    const named = join(tempDir('events-chart'), 'named');
    mkdirSync(join(named, 'templates'), { recursive: true });
    writeFileSync(join(named, 'Chart.yaml'), 'apiVersion: v2\nname: named\nversion: 0.2.0\n');
    writeFileSync(join(named, 'values.yaml'), 'name: settings\napiToken: ""\n');
    writeFileSync(
      join(named, 'templates', 'configmap.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\ndata:\n  token: {{ .Values.apiToken | quote }}\n',
    );
    const secret = 'Events-Secret-Token-4711';
    const r = await install('named', ns, [
      '--chart',
      named,
      '--base-values',
      join(named, 'values.yaml'),
      '--set-string',
      `apiToken=${secret}`,
      '--set-string',
      `name=${secret}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(4);
    const cause = /^cause: (.*)$/m.exec(r.stderr)![1]!.replace(/\.\.\.$/, '');
    const events = await installerEvents(ns);
    expect(events.map((e) => [e.reason, e.type, e.action])).toEqual([['Failed', 'Warning', 'Install']]);
    expect(events[0]!.regarding).toEqual(namespaceRef(ns));
    expect(events[0]!.note.startsWith(`release ${ns}/named: failed (exit 4) while install: ${cause}`)).toBe(true);
    expect(events[0]!.note).toContain('ConfigMap "[REDACTED]" is invalid');
    // Not in the note nor anywhere else in the Events as the API keeps them.
    const raw = (await kubectl(['get', 'events.events.k8s.io', '-o', 'json'], opts(ns))).stdout;
    expect(raw).not.toContain(secret);
    const warnings = await kubectl(
      [
        'get',
        'events',
        '--field-selector',
        `type=Warning,reportingComponent=${REPORTING_CONTROLLER}`,
        '-o',
        'jsonpath={.items[*].reason}',
      ],
      opts(ns),
    );
    expect(warnings.stdout).toBe('Failed');
  });

  it('a stuck release recovered: Recovered, then what the run did next (Upgraded)', async () => {
    const ns = await fresh('events-recover');
    expect((await install('shop', ns, source)).exitCode).toBe(0);
    expect((await install('shop', ns, [...source, '--set', 'color=green'])).exitCode).toBe(0);
    await markPending(ns, 'shop', 2);
    const r = await install('shop', ns, [...source, '--set', 'color=green']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect((await installerEvents(ns)).map(brief).slice(2)).toEqual([
      {
        reason: 'Recovered',
        type: 'Normal',
        regarding: namespaceRef(ns),
        note: `release ${ns}/shop: release left pending-upgrade by a killed operation: rolled back to revision 1`,
      },
      {
        reason: 'Upgraded',
        type: 'Normal',
        regarding: namespaceRef(ns),
        note: `release ${ns}/shop: upgraded to revision 4 (chart plan-0.1.0)`,
      },
    ]);
  });

  it('drift: DriftFound with --drift warn, then DriftCorrected (both Warning), naming the object', async () => {
    const ns = await fresh('events-drift');
    expect((await install('shop', ns, source)).exitCode).toBe(0);
    await kubectl(['delete', 'configmap', 'cache'], opts(ns));
    const warned = await install('shop', ns, [...source, '--drift', 'warn']);
    expect(warned.exitCode, warned.stderr).toBe(0);
    const corrected = await install('shop', ns, source);
    expect(corrected.exitCode, corrected.stderr).toBe(0);
    expect((await installerEvents(ns)).map(brief).slice(1)).toEqual([
      {
        reason: 'DriftFound',
        type: 'Warning',
        regarding: namespaceRef(ns),
        note: `release ${ns}/shop: 1 object(s) drifted from revision 1, left as they are (--drift warn): ConfigMap/${ns}/cache`,
      },
      {
        reason: 'DriftCorrected',
        type: 'Warning',
        regarding: namespaceRef(ns),
        note: `release ${ns}/shop: 1 object(s) put back as revision 1 applied them: ConfigMap/${ns}/cache`,
      },
    ]);
  });

  it('an identity that may not create Events: the install still succeeds (exit 0); the preflight warns and the log names the Event and the permission', async () => {
    const ns = await fresh('events-forbidden');
    const withoutEvents = shippedRole.rules.filter((r) => !r.apiGroups.includes('events.k8s.io'));
    expect(withoutEvents).toHaveLength(shippedRole.rules.length - 1);
    const kc = await identity(ns, withoutEvents);
    const r = await install('shop', ns, source, { KUBECONFIG: kc });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^helm-installer: installed release shop/m);
    const lines = logLines(r.stdout);
    expect(lines.find((l) => l.level === 40 && l.msg.startsWith('RBAC:'))?.msg).toBe(
      `RBAC: this identity may not create events.events.k8s.io in namespace ${ns}: the install goes on without the installer's Events (grant it to have them; see the README, "RBAC")`,
    );
    const notWritten = lines.find((l) => l.level === 40 && l.msg.startsWith('could not write'));
    expect(notWritten?.msg).toMatch(
      new RegExp(
        `^could not write 1 Event\\(s\\): Installed \\(Normal\\) for release ${ns}/shop on Namespace ${ns}/${ns}: forbidden: needs create on events\\.events\\.k8s\\.io in namespace ${ns} \\(.*cannot create resource "events" in API group "events\\.k8s\\.io".*\\); the run's result stands$`,
      ),
    );
    expect(await installerEvents(ns)).toEqual([]);
  });
});
