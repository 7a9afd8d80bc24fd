// The bench's breakdown of an install's time (test/bench/phases.ts), on debug logs written by
// hand: each phase is the gap between two lines' `time`, in seconds.
import { describe, expect, it } from 'vitest';
import { describePhases, phasesOf, type Phases } from '../bench/phases.js';

const line = (time: number, msg: string, fields: Record<string, string> = {}) =>
  JSON.stringify({ level: 20, time, msg, ...fields });
const stage = (time: number, name: string) => line(time, 'stage', { stage: name });
/** Every phase, in seconds: 0 unless the test names it (a phase that did not happen). */
const phases = (given: Partial<Phases>): Phases => ({
  startup: 0,
  readAndDecide: 0,
  renderCheck: 0,
  preflights: 0,
  underLease: 0,
  crdStep: 0,
  beforeHelm: 0,
  helm: 0,
  afterHelm: 0,
  ...given,
});

describe('phasesOf', () => {
  const upgrade = [
    'not json: helm printed this',
    line(1_000_150, 'starting'),
    stage(1_000_160, 'connecting to the cluster'),
    stage(1_000_290, 'render check'),
    line(1_000_300, 'running helm', { helm: 'template' }),
    line(1_000_420, 'helm ended', { helm: 'template' }),
    stage(1_000_430, 'rbac preflight'),
    stage(1_000_480, 'waiting for the release lease'),
    line(1_000_650, 'running helm', { helm: 'upgrade' }),
    line(1_003_250, 'helm ended', { helm: 'upgrade' }),
    line(1_003_260, 'done'),
  ].join('\n');

  it('splits an upgrade at the first line, the stages and helm upgrade', () => {
    // Spawned at 1_000_000 ms, ended 3.3 s later.
    expect(phasesOf(upgrade, 1_000_000, 3.3)).toEqual(
      phases({
        startup: 0.15,
        readAndDecide: 0.14,
        renderCheck: 0.12,
        preflights: 0.05,
        underLease: 0.17,
        beforeHelm: 0.5,
        helm: 2.6,
        afterHelm: 0.05,
      }),
    );
  });

  it('splits a no-op at the decision to skip', () => {
    const noop = [
      line(1_000_100, 'starting'),
      stage(1_000_110, 'reading release state'),
      line(1_000_220, 'unchanged: chart and values equal revision 1, which is deployed and healthy; no upgrade'),
      line(1_000_240, 'event written'),
    ].join('\n');
    expect(phasesOf(noop, 1_000_000, 0.27)).toEqual(phases({ startup: 0.1, readAndDecide: 0.12, afterHelm: 0.05 }));
  });

  it('gives the CRD step from its first line to its last', () => {
    const withCrds = [
      line(1_000_150, 'starting'),
      stage(1_000_500, 'waiting for the release lease'),
      line(1_000_540, 'CRD step: reading the live CRDs', { phase: 'crd step' }),
      line(1_000_600, 'CRD x updated'),
      line(1_000_630, 'CRD step ended', { phase: 'crd step' }),
      line(1_000_650, 'running helm', { helm: 'upgrade' }),
      line(1_003_250, 'helm ended', { helm: 'upgrade' }),
    ].join('\n');
    const p = phasesOf(withCrds, 1_000_000, 3.3);
    expect(p.crdStep).toBe(0.09);
    expect(describePhases([p], 0.9)).toContain(
      'the Lease and the checks under it 0.15 s, of which the CRD step 0.09 s)',
    );
  });

  it('refuses a log with neither helm upgrade nor a skip (no debug level)', () => {
    expect(() => phasesOf(line(1, 'starting'), 0, 1)).toThrow(/neither a helm upgrade nor a skip/);
  });

  it('describes the medians of an upgrade beside plain helm', () => {
    const p = phases({
      startup: 0.1,
      readAndDecide: 0.12,
      renderCheck: 0.1,
      preflights: 0.05,
      underLease: 0.08,
      beforeHelm: 0.4,
      helm: 2.5,
      afterHelm: 0.05,
    });
    expect(describePhases([p, { ...p, helm: 2.7 }, { ...p, helm: 2.6 }], 2.4)).toBe(
      "where ours goes (medians): start-up 0.10 s; before helm 0.40 s (connect, release read and decide 0.12 s; the render check's helm template 0.10 s; RBAC and fit preflights 0.05 s; the Lease and the checks under it 0.08 s); helm upgrade 2.60 s against 2.40 s alone; after helm 0.05 s",
    );
  });

  it('describes a no-op by its start-up, read and decision', () => {
    const p = phases({ startup: 0.1, readAndDecide: 0.12, afterHelm: 0.05 });
    expect(describePhases([p, p, p])).toBe(
      'where ours goes (medians): start-up 0.10 s; connect, release read and decide 0.12 s; after the decision 0.05 s',
    );
  });
});
