// The bench's breakdown of an install's time (test/bench/phases.ts), on a debug log written by
// hand: each phase is the gap between two lines' `time`, in seconds.
import { describe, expect, it } from 'vitest';
import { describePhases, phasesOf } from '../bench/phases.js';

const line = (time: number, msg: string, helm?: string, phase?: string) =>
  JSON.stringify({ level: 20, time, msg, ...(helm ? { helm } : {}), ...(phase ? { phase } : {}) });

describe('phasesOf', () => {
  const log = [
    'not json: helm printed this',
    line(1_000_150, 'starting'),
    line(1_000_300, 'running helm', 'template'),
    line(1_000_520, 'helm ended', 'template'),
    line(1_000_650, 'running helm', 'upgrade'),
    line(1_003_250, 'helm ended', 'upgrade'),
    line(1_003_260, 'done'),
  ].join('\n');

  it('splits the wall time at the first line and at helm upgrade', () => {
    // Spawned at 1_000_000 ms, ended 3.3 s later.
    expect(phasesOf(log, 1_000_000, 3.3)).toEqual({
      startup: 0.15,
      beforeHelm: 0.5,
      renderCheck: 0.22,
      crdStep: 0,
      helm: 2.6,
      afterHelm: 0.05,
    });
  });

  it('gives the CRD step from its first line to its last', () => {
    const withCrds = [
      line(1_000_150, 'starting'),
      line(1_000_540, 'CRD step: reading the live CRDs', undefined, 'crd step'),
      line(1_000_600, 'CRD x updated'),
      line(1_000_630, 'CRD step ended', undefined, 'crd step'),
      line(1_000_650, 'running helm', 'upgrade'),
      line(1_003_250, 'helm ended', 'upgrade'),
    ].join('\n');
    expect(phasesOf(withCrds, 1_000_000, 3.3).crdStep).toBe(0.09);
  });

  it('refuses a log without helm upgrade (no debug level)', () => {
    expect(() => phasesOf(line(1, 'starting'), 0, 1)).toThrow(/no helm upgrade start and end/);
  });

  it('describes the medians beside plain helm', () => {
    const p = { startup: 0.1, beforeHelm: 0.4, renderCheck: 0.2, crdStep: 0, helm: 2.5, afterHelm: 0.05 };
    expect(describePhases([p, { ...p, helm: 2.7 }, { ...p, helm: 2.6 }], 2.4)).toBe(
      "where ours goes (medians): start-up 0.10 s; before helm 0.40 s (the render check's helm template 0.20 s); helm upgrade 2.60 s against 2.40 s alone; after helm 0.05 s",
    );
    expect(describePhases([{ ...p, crdStep: 0.3 }], 2.4)).toContain(
      "(the render check's helm template 0.20 s, the CRD step 0.30 s)",
    );
  });
});
