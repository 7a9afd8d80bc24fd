// The plan's scheduler on its own (issue 21, item 2): a stand-in for install that records when
// each release passed its checks, when it started to act and when it finished, so the rules can
// be checked exactly: all checks before any act, dependencies first, the bound on parallelism, a
// failed check stopping everything, a failed release stopping only its dependents. The real
// install under the scheduler is test/integration/release-plan.test.ts.
import { describe, expect, it } from 'vitest';
import { HelmOperationError, PreflightError } from '../../src/common/errors.js';
import type { InstallOptions } from '../../src/reconcile/install-options.js';
import type { PlanMember } from '../../src/run/run-context.js';
import type { ScheduledRelease } from '../../src/inputs/app-input.js';
import { runGraph } from '../../src/releases/run-graph.js';
import type { RunState } from '../../src/run/run-state.js';
import { SecretRegistry } from '../../src/common/secrets.js';

const o = { maxParallel: 4, values: [], sets: [], timeout: '1m' } as unknown as InstallOptions;

const release = (name: string, deps: string[] = []): ScheduledRelease<InstallOptions> => ({
  options: { ...o, release: name },
  name,
  namespace: 's',
  key: `s/${name}`,
  deps: deps.map((d) => `s/${d}`),
});

interface Script {
  checkMs?: number;
  actMs?: number;
  failCheck?: boolean;
  failAct?: boolean;
}

async function run(releases: ScheduledRelease<InstallOptions>[], scripts: Record<string, Script>, maxParallel = 4) {
  const events: string[] = [];
  let acting = 0;
  let mostActing = 0;
  const sleep = (ms = 0) => new Promise((r) => setTimeout(r, ms));
  const install = async (o: InstallOptions, _state: RunState, member: PlanMember) => {
    const s = scripts[o.release!] ?? {};
    await sleep(s.checkMs);
    if (s.failCheck) throw new PreflightError(`${o.release}: missing RBAC`);
    events.push(`checked ${o.release}`);
    await member.gate();
    acting += 1;
    mostActing = Math.max(mostActing, acting);
    events.push(`act ${o.release}`);
    await sleep(s.actMs ?? 5);
    acting -= 1;
    if (s.failAct) throw new HelmOperationError(`${o.release}: timed out`);
    events.push(`done ${o.release}`);
    member.outcome = { action: 'installed', revision: 1 };
    return 0;
  };
  const state: RunState = {
    signal: new AbortController().signal,
    secrets: new SecretRegistry(),
    progress: { action: 'x' },
  };
  const outcomes = await runGraph(releases, { maxParallel, state, install, labels: { app: 'shop' } });
  return {
    events,
    mostActing,
    outcomes: outcomes.map((x) => `${x.key} ${x.status}${x.status === 'not attempted' ? `: ${x.because}` : ''}`),
  };
}

describe('runGraph', () => {
  it('checks every release before any acts, and acts on each after its dependencies are done', async () => {
    const r = await run([release('db'), release('web', ['db']), release('jobs', ['web']), release('cache')], {
      db: { checkMs: 20, actMs: 20 },
      cache: { checkMs: 1 },
    });
    const at = (e: string) => r.events.indexOf(e);
    const lastCheck = Math.max(...['db', 'web', 'jobs', 'cache'].map((n) => at(`checked ${n}`)));
    const firstAct = Math.min(...['db', 'web', 'jobs', 'cache'].map((n) => at(`act ${n}`)));
    expect(lastCheck).toBeLessThan(firstAct);
    expect(at('done db')).toBeLessThan(at('act web'));
    expect(at('done web')).toBeLessThan(at('act jobs'));
    // cache waits for no one: it acts beside db.
    expect(at('act cache')).toBeLessThan(at('done db'));
    expect(r.outcomes).toEqual(['s/db done', 's/web done', 's/jobs done', 's/cache done']);
  });

  it('never has more than maxParallel releases acting at once', async () => {
    const five = ['a', 'b', 'c', 'd', 'e'].map((n) => release(n));
    expect((await run(five, {}, 2)).mostActing).toBe(2);
    expect((await run(five, {}, 5)).mostActing).toBe(5);
  });

  it('a failed check anywhere: nothing acts, the others are not attempted', async () => {
    const r = await run([release('db'), release('web', ['db']), release('cache')], {
      cache: { failCheck: true, checkMs: 10 },
    });
    expect(r.events.filter((e) => e.startsWith('act'))).toEqual([]);
    expect(r.outcomes).toEqual([
      's/db not attempted: s/cache failed its checks, so no release was started',
      's/web not attempted: s/cache failed its checks, so no release was started',
      's/cache failed',
    ]);
  });

  it('a failed release stops its dependents, not the unrelated ones', async () => {
    const r = await run([release('db'), release('web', ['db']), release('jobs', ['web']), release('cache')], {
      web: { failAct: true },
    });
    expect(r.outcomes).toEqual([
      's/db done',
      's/web failed',
      's/jobs not attempted: its dependency s/web was not deployed',
      's/cache done',
    ]);
    expect(r.events).not.toContain('act jobs');
  });
});

describe('runGraph with one chart (a release without a key)', () => {
  const state: RunState = {
    signal: new AbortController().signal,
    secrets: new SecretRegistry(),
    progress: { action: 'x' },
  };
  const own: ScheduledRelease<InstallOptions> = { options: { ...o, release: 'mine' }, namespace: 'n', deps: [] };

  it("runs it in the run's own state, without app labels, and returns its exit code", async () => {
    const seen: { state?: RunState; labels?: Record<string, string> } = {};
    const outcomes = await runGraph([own], {
      maxParallel: 1,
      state,
      install: async (_o, s, member) => {
        seen.state = s;
        seen.labels = member.labels;
        await member.gate();
        return 7;
      },
    });
    expect(seen.state).toBe(state);
    expect(seen.labels).toEqual({});
    expect(outcomes).toMatchObject([{ status: 'done', exitCode: 7 }]);
  });

  it('throws its failure as it is: the run reports it as a single chart', async () => {
    const failure = new HelmOperationError('mine: timed out');
    await expect(
      runGraph([own], {
        maxParallel: 1,
        state,
        install: () => Promise.reject(failure),
      }),
    ).rejects.toBe(failure);
  });
});
