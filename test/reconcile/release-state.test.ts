// Pure logic of the release-state stages: the Lease's expiry, the recovery plan for a pending
// release, editing helm's release record, the no-op decision and the workload readiness rule.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { leaseState } from '../../src/cluster/lease-decision.js';
import { decodeReleasePayload, encodeReleasePayload, setReleaseStatus } from '../../src/cluster/release-secrets.js';
import { isTransientApiError, networkCode } from '../../src/cluster/kube-errors.js';
import { workloadUnready } from '../../src/cluster/workload-health.js';
import { durationMs, parseDurationMs } from '../../src/options/config.js';
import { labelsArgs, rollbackArgs, uninstallArgs } from '../../src/helm/helm-args.js';
import type { HistoryEntry } from '../../src/helm/helm-results.js';
import { canonicalJson, chartDigest, decideNoOp, inputDigest, sameInputs } from '../../src/reconcile/release-digest.js';
import { tempDir } from '../helpers.js';
import { planRecovery } from '../../src/reconcile/actions/recover.js';
import { helmTraits } from '../../src/helm/helm-traits.js';

const rev = (revision: number, status: string): HistoryEntry =>
  ({ revision, status, chart: 'shop-1.0.0', appVersion: '1', description: '', updated: '' }) as HistoryEntry;

describe('leaseState', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  const spec = (holder: string | undefined, renewedAgoS: number) => ({
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    renewTime: new Date(now - renewedAgoS * 1000),
  });
  it('free without a holder, ours with our identity', () => {
    expect(leaseState(spec(undefined, 0), 'me', now).kind).toBe('free');
    expect(leaseState(spec('me', 100), 'me', now).kind).toBe('ours');
  });
  it('held while renewed within its duration, expired after', () => {
    expect(leaseState(spec('pod-a/1/x', 14), 'me', now)).toEqual({
      kind: 'held',
      holder: 'pod-a/1/x',
      renewedSecondsAgo: 14,
      expiresInSeconds: 1,
    });
    expect(leaseState(spec('pod-a/1/x', 16), 'me', now)).toEqual({
      kind: 'expired',
      holder: 'pod-a/1/x',
      renewedSecondsAgo: 16,
    });
  });
  it('expired when watched unchanged for its duration, even if the holder clock runs ahead', () => {
    // renewTime 100 s in the future (skewed clock), unchanged for 16 s of our watching.
    expect(leaseState(spec('pod-a/1/x', -100), 'me', now, now - 16_000).kind).toBe('expired');
    expect(leaseState(spec('pod-a/1/x', -100), 'me', now, now - 5_000).kind).toBe('held');
  });
});

describe('planRecovery', () => {
  it('nothing to do unless the last revision is pending', () => {
    expect(planRecovery([])).toBeUndefined();
    expect(planRecovery([rev(1, 'superseded'), rev(2, 'deployed')])).toBeUndefined();
    expect(planRecovery([rev(1, 'deployed'), rev(2, 'failed')])).toBeUndefined();
  });
  it('pending-upgrade and pending-rollback roll back to the revision still deployed', () => {
    expect(planRecovery([rev(1, 'superseded'), rev(2, 'deployed'), rev(3, 'pending-upgrade')])).toEqual({
      pending: rev(3, 'pending-upgrade'),
      remedy: { how: 'rollback', to: 2 },
    });
    expect(planRecovery([rev(1, 'deployed'), rev(2, 'failed'), rev(3, 'pending-rollback')])).toEqual({
      pending: rev(3, 'pending-rollback'),
      remedy: { how: 'rollback', to: 1 },
    });
  });
  it('falls back to the newest superseded revision when none is marked deployed', () => {
    expect(
      planRecovery([rev(1, 'superseded'), rev(2, 'superseded'), rev(3, 'failed'), rev(4, 'pending-upgrade')]),
    ).toMatchObject({ remedy: { how: 'rollback', to: 2 } });
  });
  it('a first install that never deployed is uninstalled', () => {
    expect(planRecovery([rev(1, 'pending-install')])).toEqual({
      pending: rev(1, 'pending-install'),
      remedy: { how: 'uninstall' },
    });
    expect(planRecovery([rev(1, 'failed'), rev(2, 'pending-install')])).toMatchObject({ remedy: { how: 'uninstall' } });
  });
});

describe('release record', () => {
  // Written the way helm's Go structs serialise: name, info, chart, config, manifest, version.
  const record =
    '{"name":"shop","info":{"first_deployed":"2026-11-22T09:00:00Z","last_deployed":"2026-11-22T09:10:00Z","deleted":"",' +
    '"description":"Preparing upgrade: \\"status\\":\\"pending-upgrade\\"","status":"pending-upgrade"},' +
    '"chart":{"metadata":{"name":"shop","description":"A shop"}},' +
    '"config":{"orderId":12345678901234567890,"status":"pending-upgrade","ratio":1.50},"manifest":"---\\nkind: ConfigMap\\n","version":3,"namespace":"shop"}';

  it('sets info.status and info.description only, leaving every other byte as helm wrote it', () => {
    const out = setReleaseStatus(record, 'pending-upgrade', 'failed', 'Marked failed by helm-installer');
    const expected = record
      .replace(
        '"description":"Preparing upgrade: \\"status\\":\\"pending-upgrade\\""',
        '"description":"Marked failed by helm-installer"',
      )
      .replace('"status":"pending-upgrade"},', '"status":"failed"},');
    expect(out).toBe(expected);
    // The number beyond 2^53 and the value "pending-upgrade" in config are untouched.
    expect(out).toContain('"orderId":12345678901234567890');
    expect(out).toContain('"config":{"orderId":12345678901234567890,"status":"pending-upgrade","ratio":1.50}');
  });

  it('refuses a record whose status is not the one expected', () => {
    expect(() => setReleaseStatus(record, 'pending-install', 'failed', 'x')).toThrow(/status is pending-upgrade/);
  });

  it("decodes helm's base64(gzip(json)) payload and encodes it back the same way", () => {
    const helmPayload = Buffer.from(gzipSync(Buffer.from(record)).toString('base64'));
    expect(decodeReleasePayload(helmPayload)).toBe(record);
    expect(decodeReleasePayload(encodeReleasePayload(record))).toBe(record);
    // Plain (ungzipped) base64 JSON from very old records reads too.
    expect(decodeReleasePayload(Buffer.from(Buffer.from(record).toString('base64')))).toBe(record);
  });
});

describe('decideNoOp', () => {
  const want = { chart: 'c1', values: 'v1' };
  const labels = (chart?: string, values?: string) => ({
    ...(chart ? { 'helm-installer/chart-digest': chart } : {}),
    ...(values ? { 'helm-installer/values-digest': values } : {}),
  });
  it('unchanged only when the newest revision is deployed with equal digests', () => {
    expect(decideNoOp([{ revision: 4, status: 'deployed', labels: labels('c1', 'v1') }], want)).toEqual({
      unchanged: true,
      revision: 4,
    });
    expect(decideNoOp([], want)).toEqual({ unchanged: false, reason: 'no release yet' });
    expect(
      decideNoOp(
        [
          { revision: 4, status: 'deployed', labels: labels('c1', 'v1') },
          { revision: 5, status: 'failed', labels: labels('c1', 'v1') },
        ],
        want,
      ),
    ).toEqual({
      unchanged: false,
      reason: 'last revision 5 is failed',
    });
    expect(decideNoOp([{ revision: 4, status: 'deployed', labels: labels('c2', 'v1') }], want)).toEqual({
      unchanged: false,
      reason: 'chart changed',
    });
    expect(decideNoOp([{ revision: 4, status: 'deployed', labels: labels('c1', 'v2') }], want)).toEqual({
      unchanged: false,
      reason: 'values or settings changed',
    });
    expect(decideNoOp([{ revision: 4, status: 'deployed', labels: {} }], want)).toMatchObject({
      unchanged: false,
      reason: expect.stringMatching(/carries no digests/),
    });
  });
  it('canonical JSON does not depend on key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });
});

describe('sameInputs (the no-op check without a helm run)', () => {
  const labels = (chart: string, input?: string) => ({
    'helm-installer/chart-digest': chart,
    ...(input ? { 'helm-installer/input-digest': input } : {}),
  });
  const want = { chart: 'c1', input: 'i1' };
  it('the newest revision deployed with the same chart and inputs; anything else is left to the merged values', () => {
    expect(
      sameInputs(
        [
          { revision: 3, status: 'superseded', labels: labels('c1', 'i0') },
          { revision: 4, status: 'deployed', labels: labels('c1', 'i1') },
        ],
        want,
      ),
    ).toEqual({ revision: 4 });
    expect(sameInputs([], want)).toBeUndefined();
    expect(
      sameInputs(
        [
          { revision: 4, status: 'deployed', labels: labels('c1', 'i1') },
          { revision: 5, status: 'failed', labels: labels('c1', 'i1') },
        ],
        want,
      ),
    ).toBeUndefined();
    expect(sameInputs([{ revision: 4, status: 'deployed', labels: labels('c2', 'i1') }], want)).toBeUndefined();
    expect(sameInputs([{ revision: 4, status: 'deployed', labels: labels('c1', 'i2') }], want)).toBeUndefined();
    // A revision by an installer that kept no input digest.
    expect(sameInputs([{ revision: 4, status: 'deployed', labels: labels('c1') }], want)).toBeUndefined();
  });

  it('the input digest is sha256 of each file (source, length, bytes) then the sets and settings, 40 hex digits', () => {
    const settings = { imagePaths: [], helmArgs: [], installerVersion: '1.0.0' };
    const files = [
      { source: 'vendor', content: Buffer.from('a: 1\n') },
      { source: 'customer', content: Buffer.from('b: 2\n') },
    ];
    const sets = [{ kind: 'set', expression: 'c=3' }];
    const expected = createHash('sha256')
      .update('vendor\u00005\u0000a: 1\ncustomer\u00005\u0000b: 2\n')
      .update(
        '{"sets":[{"expression":"c=3","kind":"set"}],"settings":{"helmArgs":[],"imagePaths":[],"installerVersion":"1.0.0"}}',
      )
      .digest('hex')
      .slice(0, 40);
    expect(inputDigest(files, sets, settings)).toBe(expected);
    // Each part counts: a byte of a file, the order of the files, a --set, a setting.
    expect(inputDigest([files[0]!, { source: 'customer', content: Buffer.from('b: 3\n') }], sets, settings)).not.toBe(
      expected,
    );
    expect(inputDigest([files[1]!, files[0]!], sets, settings)).not.toBe(expected);
    expect(inputDigest(files, [], settings)).not.toBe(expected);
    expect(inputDigest(files, sets, { ...settings, registry: 'r.local/acme' })).not.toBe(expected);
  });
});

describe('workloadUnready', () => {
  it('ready only when the rollout is observed and every replica updated and ready', () => {
    const d = (
      generation: number,
      observed: number,
      replicas: number,
      updated: number,
      ready: number,
      total = replicas,
    ) =>
      ({
        metadata: { generation },
        spec: { replicas },
        status: { observedGeneration: observed, updatedReplicas: updated, readyReplicas: ready, replicas: total },
      }) as never;
    expect(workloadUnready('Deployment', d(2, 2, 2, 2, 2))).toBeUndefined();
    expect(workloadUnready('Deployment', d(3, 2, 2, 2, 2))).toBe('rollout not observed yet');
    expect(workloadUnready('Deployment', d(2, 2, 2, 2, 1))).toBe('1/2 ready');
    expect(workloadUnready('Deployment', d(2, 2, 2, 2, 2, 3))).toBe('old replicas still running');
    expect(workloadUnready('StatefulSet', d(1, 1, 1, 0, 1))).toBe('1/1 ready');
    expect(
      workloadUnready('DaemonSet', {
        metadata: { generation: 1 },
        status: { observedGeneration: 1, desiredNumberScheduled: 2, updatedNumberScheduled: 2, numberReady: 2 },
      } as never),
    ).toBeUndefined();
    expect(
      workloadUnready('DaemonSet', {
        metadata: { generation: 1 },
        status: { observedGeneration: 1, desiredNumberScheduled: 2, updatedNumberScheduled: 2, numberReady: 0 },
      } as never),
    ).toBe('0/2 ready');
  });
});

describe('API errors', () => {
  it('finds the network code under undici\'s "fetch failed" and counts 429/5xx as transient', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    });
    expect(networkCode(refused)).toBe('ECONNREFUSED');
    expect(isTransientApiError(refused)).toBe(true);
    expect(isTransientApiError({ code: 503 })).toBe(true);
    expect(isTransientApiError({ code: 429 })).toBe(true);
    expect(isTransientApiError({ code: 403 })).toBe(false);
    expect(isTransientApiError(new Error('boom'))).toBe(false);
  });
});

describe('durations and helm argv', () => {
  it('reads Go durations (or 0) as milliseconds; anything else is refused', () => {
    expect(durationMs('1m30s')).toBe(90_000);
    expect(durationMs('250ms')).toBe(250);
    expect(durationMs('1.5h')).toBe(5_400_000);
    expect(parseDurationMs('2m')).toBe(120_000);
    expect(parseDurationMs('0')).toBe(0);
    for (const bad of ['soon', '5', '-1m', '']) expect(() => parseDurationMs(bad)).toThrow(/expected a duration/);
  });
  it('rollback and uninstall wait the helm 4 or helm 3 way; a helm 4 rollback takes conflicting fields back; labels are one --labels flag', () => {
    expect(
      rollbackArgs({ release: 'shop', namespace: 'ns', revision: 2, timeout: '5m', historyMax: 5 }, helmTraits(4)),
    ).toEqual([
      'rollback',
      'shop',
      '2',
      '--namespace',
      'ns',
      '--wait=watcher',
      '--server-side=true',
      '--force-conflicts',
      '--timeout',
      '5m',
      '--history-max',
      '5',
    ]);
    expect(
      rollbackArgs({ release: 'shop', namespace: 'ns', revision: 2, timeout: '5m', historyMax: 5 }, helmTraits(3)),
    ).toEqual(['rollback', 'shop', '2', '--namespace', 'ns', '--wait', '--timeout', '5m', '--history-max', '5']);
    expect(uninstallArgs({ release: 'shop', namespace: 'ns', timeout: '5m' }, helmTraits(3))).toEqual([
      'uninstall',
      'shop',
      '--namespace',
      'ns',
      '--wait',
      '--timeout',
      '5m',
    ]);
    expect(labelsArgs({ 'helm-installer/chart-digest': 'abc', 'helm-installer/values-digest': 'def' })).toEqual([
      '--labels',
      'helm-installer/chart-digest=abc,helm-installer/values-digest=def',
    ]);
    expect(labelsArgs({})).toEqual([]);
  });
});

describe('chartDigest', () => {
  it('an archive: the sha256 of its bytes (40 hex digits); a directory: changes with any file', () => {
    const dir = tempDir('digest');
    const file = join(dir, 'c.tgz');
    writeFileSync(file, Buffer.from('archive bytes'));
    expect(chartDigest(file)).toBe(createHash('sha256').update('archive bytes').digest('hex').slice(0, 40));
    const chart = join(dir, 'chart');
    mkdirSync(join(chart, 'templates'), { recursive: true });
    writeFileSync(join(chart, 'Chart.yaml'), 'name: c\n');
    writeFileSync(join(chart, 'templates', 'a.yaml'), 'kind: A\n');
    const before = chartDigest(chart);
    expect(chartDigest(chart)).toBe(before);
    writeFileSync(join(chart, 'templates', 'a.yaml'), 'kind: B\n');
    expect(chartDigest(chart)).not.toBe(before);
  });
});
