// The helm call (install or upgrade): the arguments it gives helm, the revision it finds, and each
// way it fails: helm's failure with its causes, a pod that cannot become ready (fail fast), the
// Lease taken by another installer; records annotated whenever helm may have written them.
import { describe, expect, it } from 'vitest';
import type { Problem } from '../../../src/cluster/wait-diagnosis.js';
import { HelmOperationError } from '../../../src/common/errors.js';
import { upgradeRelease, type UpgradePort } from '../../../src/reconcile/actions/upgrade.js';
import type { Action } from '../../../src/reconcile/decide.js';

type Goal = Extract<Action, { kind: 'install' | 'upgrade' }>;
import { narration, recorder, stoppable, type Recorder } from './fake-port.js';

const crashing: Problem = { object: 'Pod/web-1', reason: 'CrashLoopBackOff', detail: 'container web exited 1' };

function port(
  r: Recorder,
  o: {
    takeOwnership?: UpgradePort['takeOwnership'];
    helm?: (signal: AbortSignal) => Promise<{ revision?: number }>;
    hopeless?: boolean;
  } = {},
) {
  const stop = stoppable();
  const p: UpgradePort & typeof stop = {
    ...narration(r),
    ...stop,
    takeOwnership: o.takeOwnership ?? 'first-install',
    failFastAfter: 120_000,
    labels: async () => ({ 'helm-installer/chart-digest': 'abc' }),
    upgradeInstall: async (args, signal) => {
      r.call('helm upgrade --install', undefined, args);
      return o.helm ? o.helm(signal) : { revision: 4 };
    },
    watch: (w) => {
      r.call('watch', undefined, w.failFastMs);
      if (o.hopeless) w.onHopeless();
      return {
        failedFast: o.hopeless ? [crashing] : undefined,
        lastSeen: [crashing],
        stop: () => r.call('stop watching', undefined),
      };
    },
    withCauses: async (error, lastSeen) =>
      new HelmOperationError(`${error.message}\nnot ready: ${lastSeen.map((x) => x.object).join(', ')}`),
    annotateRecords: async () => r.call('annotate records', undefined),
  };
  return p;
}

describe('install / upgrade (helm upgrade --install)', () => {
  const rows: [string, 'install' | 'upgrade', UpgradePort['takeOwnership'], boolean][] = [
    ['install, --take-ownership first-install: takes ownership', 'install', 'first-install', true],
    ['upgrade, --take-ownership first-install: does not', 'upgrade', 'first-install', false],
    ['upgrade, --take-ownership always: takes ownership', 'upgrade', 'always', true],
    ['install, --take-ownership never: does not', 'install', 'never', false],
  ];
  for (const [name, kind, takeOwnership, takes] of rows) {
    it(name, async () => {
      const r = recorder();
      const step: Goal =
        kind === 'install'
          ? { kind, reason: 'no release yet' }
          : { kind, status: 'out-of-date', reason: 'chart changed', drift: [] };
      expect(await upgradeRelease(port(r, { takeOwnership }), step)).toEqual({ upgraded: { revision: 4 } });
      expect(r.calls).toEqual([
        `stage ${kind}`,
        'info running helm upgrade --install',
        'watch 120000',
        `helm upgrade --install {"takeOwnership":${takes},"labels":{"helm-installer/chart-digest":"abc"}}`,
        'stop watching',
        'annotate records',
      ]);
    });
  }

  const upgrade: Goal = { kind: 'upgrade', status: 'out-of-date', reason: 'chart changed', drift: [] };

  it("helm's failure carries what was not ready; the records helm wrote are annotated", async () => {
    const r = recorder();
    const failing = port(r, {
      helm: async () =>
        Promise.reject(new HelmOperationError('upgrade of release shop failed: context deadline exceeded')),
    });
    await expect(upgradeRelease(failing, upgrade)).rejects.toThrow(
      'upgrade of release shop failed: context deadline exceeded\nnot ready: Pod/web-1',
    );
    expect(r.calls.slice(-2)).toEqual(['stop watching', 'annotate records']);
  });

  it('a pod that cannot become ready stops helm: failed fast, named', async () => {
    const r = recorder();
    const seen: AbortSignal[] = [];
    const p = port(r, {
      hopeless: true,
      helm: async (signal) => {
        seen.push(signal);
        throw new Error('helm was stopped');
      },
    });
    const error = (await upgradeRelease(p, upgrade).catch((e: unknown) => e)) as Error;
    expect(seen[0]!.aborted).toBe(true);
    expect(error.message.split('\n')[0]).toBe(
      'upgrade of release shop failed fast: Pod/web-1 stayed CrashLoopBackOff for 120s, which waiting does not fix',
    );
  });

  it("the Lease taken by another installer: the Lease's error, and no more writes", async () => {
    const r = recorder();
    const lost = new Error('the release lease was taken over by pod-b');
    const p = port(r, {
      helm: async (signal) => {
        p.loseLease.abort(lost);
        expect(signal.aborted).toBe(true);
        throw new Error('helm was stopped');
      },
    });
    await expect(upgradeRelease(p, upgrade)).rejects.toBe(lost);
    expect(r.calls).not.toContain('annotate records');
  });
});
