import { describe, expect, it } from 'vitest';
import { awaitInOrder } from '../../src/run/overlap.js';
import type { Progress } from '../../src/run/run-state.js';

const after = <T>(ms: number, value: T, fail = false) =>
  new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(new Error(String(value))) : resolve(value)), ms));

describe('awaitInOrder', () => {
  it('returns every result in the listed order, the steps running at once', async () => {
    const progress: Progress = { action: 'start' };
    const t0 = Date.now();
    expect(
      await awaitInOrder(progress, [
        ['render', after(200, 'manifests')],
        ['history', after(200, 7)],
      ] as const),
    ).toEqual(['manifests', 7]);
    expect(Date.now() - t0).toBeLessThan(390);
    expect(progress.action).toBe('history');
  });

  it('reports the first failure in the listed order, not the first in time, with its action', async () => {
    const progress: Progress = { action: 'start' };
    await expect(
      awaitInOrder(progress, [
        ['render check', after(100, 'bad values', true)],
        ['reading release state', after(10, 'cluster unreachable', true)],
      ] as const),
    ).rejects.toThrow('bad values');
    expect(progress.action).toBe('render check');
  });

  it("reports a later step's failure once the earlier ones succeeded", async () => {
    const progress: Progress = { action: 'start' };
    await expect(
      awaitInOrder(progress, [
        ['render check', after(50, 'ok')],
        ['reading release state', after(10, 'cluster unreachable', true)],
      ] as const),
    ).rejects.toThrow('cluster unreachable');
    expect(progress.action).toBe('reading release state');
  });
});
