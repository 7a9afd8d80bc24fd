// Causes named while helm waits (issue 9, item 5), on the KWOK node: a pod no node can take is
// logged at every --progress-interval with the scheduler's reason and named in the summary when
// helm times out before --fail-fast-after (90 s by default; refused-pods.test.ts fails fast on it);
// a hook Job whose pod KWOK
// fails (helm-installer.test/kwok-phase: Failed) is named with its pod's exit code and message.
import { describe, expect, it } from 'vitest';
import { KWOK_PHASE_ANNOTATION } from '../cluster/kube.js';
import { history, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { observedInstall, seenPods, valuesFile } from './wait-causes.js';

const namespace = namespacesDeletedAfterAll();

describe.concurrent('causes named on the KWOK node', () => {
  it('Unschedulable: progress lines at each interval name the pod and the scheduler reason; the summary after the timeout names them too', async () => {
    const ns = await namespace('wait-unsched');
    const run = await observedInstall('shop', ns, [
      '-f',
      valuesFile({
        image: 'registry.example.com/shop/app:1.0',
        nodeSelector: { 'topology.kubernetes.io/zone': 'nowhere' },
      }),
      '--timeout',
      '30s',
      '--progress-interval',
      '5s',
    ]);
    expect(run.exitCode, run.stderr).toBe(4);
    const pods = seenPods(run, 'shop-app-');
    expect(pods).toHaveLength(1);
    const pod = pods[0].metadata.name as string;
    const scheduled = pods[0].status.conditions.find((c: any) => c.type === 'PodScheduled');
    expect(scheduled).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    const expected = `Pod/${pod}: Unschedulable: ${scheduled.message.replace(/\s+/g, ' ').trim()}`;
    expect(expected).toMatch(/didn't match Pod's node affinity\/selector/);

    // While helm waited: a line per interval (never sooner), each naming the pod and why.
    const progress = run.logs.filter((l) => l.msg === 'waiting: 1 not ready');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const line of progress) expect((line.notReady as string[])[0]).toBe(expected);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]!.time - progress[i - 1]!.time).toBeGreaterThanOrEqual(4_000);

    // helm's timeout, not a fast failure; the summary names the pod and the reason.
    expect(run.stderr).not.toMatch(/failed fast/);
    expect(run.stderr).toMatch(/^cause: install\/upgrade of release shop failed: .*not ready/m);
    expect(run.stderr).toMatch(/context deadline exceeded/);
    expect(run.stderr).toContain(`\n  ${expected}\n`);
    expect(run.termination).toContain(`  ${expected}\n`);
    expect(await history('shop', ns)).toEqual([]);
  });

  it('a hook Job whose pod fails: exit 4, the summary names the Job, its pod, the exit code and the message', async () => {
    const ns = await namespace('wait-kwokhook');
    const run = await observedInstall('shop', ns, [
      '-f',
      valuesFile({
        image: 'registry.example.com/shop/app:1.0',
        hook: {
          enabled: true,
          image: 'registry.example.com/shop/migrate:1.0',
          podAnnotations: { [KWOK_PHASE_ANNOTATION]: 'Failed' },
        },
      }),
      '--timeout',
      '60s',
    ]);
    expect(run.exitCode, run.stderr).toBe(4);
    const pods = seenPods(run, 'shop-migrate-');
    expect(pods).toHaveLength(1);
    const pod = pods[0].metadata.name as string;
    expect(run.stderr).toMatch(/^ {2}Job\/shop-migrate: BackoffLimitExceeded: /m);
    expect(run.stderr).toContain(
      `\n  Pod/${pod}: Error: container migrate exited 1: failed on purpose (${KWOK_PHASE_ANNOTATION}: Failed)\n`,
    );
    expect(run.termination).toContain(`Pod/${pod}: Error: container migrate exited 1`);
  });
});
