// The Events the installer writes (src/tell/): the body built from an outcome (pure), where it
// goes (the Job, else the release's namespace), why one could not be written in words, the
// shipped Jobs' env and RBAC for them; and the teller against a local HTTP server standing in for
// an API server that refuses or never answers: bounded, logged, never thrown.
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { kubeModule } from '../../src/cluster/kube-client.js';
import { eventPermission } from '../../src/rbac/required-permissions.js';
import { SecretRegistry } from '../../src/common/secrets.js';
import {
  cutBytes,
  eventAction,
  eventBody,
  eventFailureCause,
  eventName,
  microTime,
  NOTE_LIMIT_BYTES,
  REPORTING_CONTROLLER,
} from '../../src/tell/event-body.js';
import { jobOf, placeOf } from '../../src/run/event-place.js';
import { writeEvents } from '../../src/tell/events.js';
import { outcomeType, type Outcome, type OutcomeReason } from '../../src/run/outcome.js';
import { tell } from '../../src/tell/tell.js';
import { repoRoot, tempDir } from '../helpers.js';

const outcome = (reason: OutcomeReason, o: Partial<Outcome> = {}): Outcome => ({
  reason,
  type: outcomeType(reason),
  release: 'shop',
  namespace: 'shop-ns',
  note: 'installed as revision 1 (chart plan-0.1.0)',
  durationSeconds: 1.5,
  exitCode: 0,
  ...o,
});
const now = new Date('2026-11-25T09:40:39.123Z');
const job = { name: 'storefront-installer-7', namespace: 'apps', uid: '3f0f6c4e-5f1a-4b61-9a57-0c1e0e9f2b8d' };

describe('the Event body of an outcome', () => {
  it('on the Job: regarding the Job with its uid (kubectl describe job matches it), in the Job namespace, the release named in the note and labels', () => {
    const body = eventBody(outcome('Installed'), placeOf(outcome('Installed'), job), {
      now,
      instance: 'storefront-installer-7-x9z',
      suffix: 'abcd1234',
    });
    expect(body).toEqual({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name: `storefront-installer-7.${now.getTime().toString(16)}abcd1234`,
        namespace: 'apps',
        labels: { 'helm-installer.io/release': 'shop', 'helm-installer.io/release-namespace': 'shop-ns' },
      },
      eventTime: '2026-11-25T09:40:39.123000Z',
      reportingController: 'helm-installer.io/installer',
      reportingInstance: 'storefront-installer-7-x9z',
      action: 'Install',
      reason: 'Installed',
      type: 'Normal',
      note: 'release shop-ns/shop: installed as revision 1 (chart plan-0.1.0)',
      regarding: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: 'storefront-installer-7',
        namespace: 'apps',
        uid: job.uid,
      },
    });
  });

  it('outside a Job: in the release namespace, regarding that Namespace (named as its own namespace: the API keeps it there)', () => {
    expect(placeOf(outcome('Upgraded'), undefined)).toEqual({
      namespace: 'shop-ns',
      regarding: { apiVersion: 'v1', kind: 'Namespace', name: 'shop-ns', namespace: 'shop-ns' },
    });
    // A Job known by name only: no uid field at all (an empty one would match nothing).
    expect(placeOf(outcome('Upgraded'), { name: 'j', namespace: 'apps' }).regarding).toEqual({
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: 'j',
      namespace: 'apps',
    });
  });

  it.each<[OutcomeReason, 'Normal' | 'Warning', string]>([
    ['Installed', 'Normal', 'Install'],
    ['Upgraded', 'Normal', 'Upgrade'],
    ['Unchanged', 'Normal', 'Check'],
    ['DriftCorrected', 'Warning', 'CorrectDrift'],
    ['DriftFound', 'Warning', 'CheckDrift'],
    ['Recovered', 'Normal', 'Recover'],
    ['Failed', 'Warning', 'Install'],
    ['TestFailed', 'Warning', 'Test'],
    ['Suspended', 'Normal', 'Suspend'],
    ['RolledBack', 'Warning', 'Rollback'],
  ])('%s: type %s, action %s', (reason, type, action) => {
    const body = eventBody(outcome(reason), placeOf(outcome(reason), job), { now, instance: 'pod', suffix: '00' });
    expect([body.reason, body.type, body.action]).toEqual([reason, type, action]);
    expect(eventAction(reason)).toBe(action);
    expect(body.reportingController).toBe(REPORTING_CONTROLLER);
  });

  it('the note: one line, masked once more, cut to the API limit of 1024 bytes on a character', () => {
    const secrets = new SecretRegistry();
    secrets.add('hunter2-secret');
    const failed = outcome('Failed', {
      note: 'failed (exit 4) while helm upgrade:\nimage "hunter2-secret " is invalid',
      exitCode: 4,
    });
    const body = eventBody(failed, placeOf(failed, job), {
      now,
      instance: 'pod',
      suffix: '00',
      mask: (t) => secrets.maskText(t),
    });
    expect(body.note).toBe('release shop-ns/shop: failed (exit 4) while helm upgrade: image "[REDACTED] " is invalid');
    const long = outcome('DriftFound', { note: `drift in ${'é'.repeat(2000)}` });
    const cut = eventBody(long, placeOf(long, job), { now, instance: 'pod', suffix: '00' }).note;
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(NOTE_LIMIT_BYTES);
    expect(Buffer.byteLength(cut)).toBeGreaterThan(NOTE_LIMIT_BYTES - 4);
    expect(cut.endsWith('é…')).toBe(true);
    expect(cutBytes('short', 10)).toBe('short');
    expect(cutBytes('abcdefghijkl', 10)).toBe('abcdefg…');
  });

  it('the name: a DNS subdomain of at most 253 characters, unique by time and suffix; the time in microseconds', () => {
    const name = eventName(`${'a'.repeat(250)}-`, now, 'ff00ff00');
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
    expect(microTime(new Date('2026-01-02T03:04:05.006Z'))).toBe('2026-01-02T03:04:05.006000Z');
    // A run's outcomes keep their order within one millisecond.
    const times = [0, 1, 2].map(
      (sequence) =>
        eventBody(outcome('Installed'), placeOf(outcome('Installed'), job), {
          now,
          sequence,
          instance: 'pod',
          suffix: '0',
        }).eventTime,
    );
    expect(times).toEqual([
      '2026-11-25T09:40:39.123000Z',
      '2026-11-25T09:40:39.123001Z',
      '2026-11-25T09:40:39.123002Z',
    ]);
  });

  it('the reporting instance is cut to 128 characters', () => {
    expect(
      eventBody(outcome('Installed'), placeOf(outcome('Installed'), job), {
        now,
        instance: 'h'.repeat(300),
        suffix: '0',
      }).reportingInstance.length,
    ).toBeLessThanOrEqual(128);
  });
});

describe('the Job from the options', () => {
  const none = () => undefined;
  it("none without a name; its namespace given, else the pod's (POD_NAMESPACE, the service account's), else the context's, else default", () => {
    expect(jobOf({ jobUid: 'x' }, {}, none, 'ctx')).toBeUndefined();
    expect(
      jobOf({ jobName: 'j', jobUid: 'u', jobNamespace: 'given' }, { POD_NAMESPACE: 'pod' }, () => 'sa', 'ctx'),
    ).toEqual({ name: 'j', namespace: 'given', uid: 'u' });
    expect(jobOf({ jobName: 'j' }, { POD_NAMESPACE: 'pod' }, () => 'sa', 'ctx')).toEqual({
      name: 'j',
      namespace: 'pod',
    });
    expect(jobOf({ jobName: 'j' }, {}, () => 'sa', 'ctx')).toEqual({ name: 'j', namespace: 'sa' });
    expect(jobOf({ jobName: 'j' }, {}, none, 'ctx')).toEqual({ name: 'j', namespace: 'ctx' });
    expect(jobOf({ jobName: 'j' }, {}, none, undefined)).toEqual({ name: 'j', namespace: 'default' });
  });
});

describe('why an Event could not be written, in words', () => {
  it('forbidden names the verb and resource to grant; network failures and missing namespaces are named', () => {
    const forbidden = {
      code: 403,
      body: JSON.stringify({
        message:
          'events.events.k8s.io is forbidden: User "system:serviceaccount:shop:installer" cannot create resource "events" in API group "events.k8s.io" in the namespace "shop"',
      }),
    };
    expect(eventFailureCause(forbidden, 'shop')).toBe(
      'forbidden: needs create on events.events.k8s.io in namespace shop (events.events.k8s.io is forbidden: User "system:serviceaccount:shop:installer" cannot create resource "events" in API group "events.k8s.io" in the namespace "shop")',
    );
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
    expect(eventFailureCause(refused, 'shop')).toBe('API server not reachable: connection refused (ECONNREFUSED)');
    expect(eventFailureCause({ code: 404, body: { message: 'namespaces "gone" not found' } }, 'gone')).toBe(
      'not found: namespaces "gone" not found',
    );
    expect(eventFailureCause({ code: 500, body: { message: 'etcd leader changed' } }, 'shop')).toBe(
      'HTTP 500: etcd leader changed',
    );
  });
});

describe.each(['manifests/installer.yaml', 'kots/installer-job.yaml'])('%s: the Job tells on itself', (file) => {
  const docs = parseAllDocuments(readText(file))
    .map((d) => d.toJS())
    .filter(Boolean);
  const pod = docs.find((d) => d.kind === 'Job').spec.template.spec;
  const env = pod.containers[0].env as { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  const fieldOf = (name: string) => env.find((e) => e.name === name)?.valueFrom?.fieldRef?.fieldPath;

  it("the Job's name and uid from the labels Kubernetes puts on its pods (downward API)", () => {
    expect(fieldOf('HELM_INSTALLER_JOB_NAME')).toBe("metadata.labels['batch.kubernetes.io/job-name']");
    expect(fieldOf('HELM_INSTALLER_JOB_UID')).toBe("metadata.labels['batch.kubernetes.io/controller-uid']");
    // Its namespace is the pod's own (the option's default), which the Job already gives.
    expect(fieldOf('POD_NAMESPACE')).toBe('metadata.namespace');
  });

  it("its Role grants create on events.events.k8s.io (where the Events go: the Job's namespace)", () => {
    const p = eventPermission('any');
    const rules = docs.filter((d) => d.kind === 'Role').flatMap((d) => d.rules);
    expect(
      rules.some(
        (r: any) => r.apiGroups.includes(p.group) && r.resources.includes(p.resource) && r.verbs.includes(p.verb),
      ),
    ).toBe(true);
  });
});

function readText(file: string): string {
  return readFileSync(join(repoRoot, file), 'utf8');
}

describe('writeEvents against an API server that refuses or does not answer', () => {
  let server: Server | undefined;
  // The client's sources load unbundled here (seconds): not counted in the bounds below.
  beforeAll(() => kubeModule(), 60_000);
  afterEach(async () => {
    vi.unstubAllEnvs();
    server?.closeAllConnections();
    server?.close();
    server = undefined;
  });

  /** A plain-HTTP "API server" and a kubeconfig pointing at it. */
  async function fakeApi(handle: RequestListener): Promise<{ requests: string[] }> {
    const requests: string[] = [];
    server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      handle(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const kubeconfig = join(tempDir('events-kubeconfig'), 'config');
    writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { token: 'not-a-real-token' } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u', namespace: 'ctx' } }],
        'current-context': 'c',
      }),
    );
    vi.stubEnv('KUBECONFIG', kubeconfig);
    vi.stubEnv('POD_NAMESPACE', '');
    vi.stubEnv('POD_NAME', 'installer-pod');
    return { requests };
  }

  function context(o: Record<string, string> = {}) {
    const lines: { level: string; fields: any; msg: string }[] = [];
    const log = (level: string) => (fields: any, msg: string) => lines.push({ level, fields, msg });
    const logger = { info: log('info'), warn: log('warn'), debug: log('debug'), error: log('error') } as any;
    const state = {
      signal: new AbortController().signal,
      secrets: new SecretRegistry(),
      progress: { action: 'done' },
      logger,
    };
    return { c: { o: o as any, state: state as any }, lines };
  }

  it('forbidden: one warning naming every Event not written and the permission; nothing thrown', async () => {
    const { requests } = await fakeApi((req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message:
            'events.events.k8s.io is forbidden: User "u" cannot create resource "events" in API group "events.k8s.io" in the namespace "apps"',
        }),
      );
    });
    const { c, lines } = context({ jobName: 'installer', jobUid: 'uid-1', jobNamespace: 'apps' });
    await writeEvents(
      [outcome('Installed'), outcome('Failed', { release: 'cache', note: 'failed (exit 4)', exitCode: 4 })],
      c,
    );
    // Forbidden is final: one request per Event, no retry.
    expect(requests.sort()).toEqual([
      'POST /apis/events.k8s.io/v1/namespaces/apps/events',
      'POST /apis/events.k8s.io/v1/namespaces/apps/events',
    ]);
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toContain('could not write 2 Event(s): ');
    expect(warnings[0]!.msg).toContain('Installed (Normal) for release shop-ns/shop on Job apps/installer');
    expect(warnings[0]!.msg).toContain('Failed (Warning) for release shop-ns/cache on Job apps/installer');
    expect(warnings[0]!.msg).toContain(
      ': forbidden: needs create on events.events.k8s.io in namespace apps (events.events.k8s.io is forbidden: User "u" cannot create',
    );
    expect(warnings[0]!.msg).toMatch(/; the run's result stands$/);
  });

  it('an API server that accepts and never answers: given up within the bound, the cause named', async () => {
    await fakeApi(() => undefined);
    const { c, lines } = context();
    const started = Date.now();
    await writeEvents([outcome('Unchanged')], c, { perEventMs: 800, overallMs: 1500 });
    const took = Date.now() - started;
    expect(took).toBeLessThan(3000);
    const warning = lines.find((l) => l.level === 'warn');
    expect(warning?.msg).toMatch(
      /^could not write 1 Event\(s\): Unchanged \(Normal\) for release shop-ns\/shop on Namespace shop-ns\/shop-ns: API server not reachable: no answer within \d\.\d s; the run's result stands$/,
    );
  });

  it('a transient failure is tried again within the bound, then written', async () => {
    let calls = 0;
    const { requests } = await fakeApi((req, res) => {
      calls += 1;
      if (calls === 1) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 503, message: 'the server is shutting down' }));
        return;
      }
      let body = '';
      req.on('data', (d: Buffer) => (body += d));
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    const { c, lines } = context({ jobName: 'installer', jobUid: 'uid-1', jobNamespace: 'apps' });
    await writeEvents(
      [outcome('Recovered', { note: 'release left pending-upgrade by a killed operation: rolled back to revision 1' })],
      c,
    );
    expect(requests).toHaveLength(2);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(lines.find((l) => l.level === 'info')?.msg).toBe('1 Event(s) written on Job apps/installer');
  });

  it('the Job known by name only: its uid is read from the Job, and the Event carries it', async () => {
    const posted: any[] = [];
    await fakeApi((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: { name: 'installer', namespace: 'apps', uid: 'read-uid' },
          }),
        );
        return;
      }
      let body = '';
      req.on('data', (d: Buffer) => (body += d));
      req.on('end', () => {
        posted.push(JSON.parse(body));
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    vi.stubEnv('POD_NAMESPACE', 'apps');
    const { c } = context({ jobName: 'installer' });
    await writeEvents([outcome('Suspended', { note: 'suspended: left alone' })], c);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({
      reason: 'Suspended',
      type: 'Normal',
      action: 'Suspend',
      reportingInstance: 'installer-pod',
      regarding: { kind: 'Job', name: 'installer', namespace: 'apps', uid: 'read-uid' },
    });
    expect(posted[0].eventTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('tell: a teller that throws (no cluster configuration) is a warning, never a failure', async () => {
    vi.stubEnv('KUBECONFIG', join(tempDir('events-none'), 'missing'));
    const { c, lines } = context();
    await expect(tell([outcome('Installed')], c)).resolves.toBeUndefined();
    expect(lines.find((l) => l.level === 'warn')).toMatchObject({
      fields: { teller: 'events' },
      msg: "could not tell the admin (events); the run's result stands",
    });
  });
});
