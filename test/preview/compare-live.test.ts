// The fields a new chart stops setting are taken out of the plan's desired object, as helm takes
// them out of the live one (src/preview/compare-live.ts withoutDroppedFields).
import { describe, expect, it } from 'vitest';
import { withoutDroppedFields } from '../../src/preview/compare-live.js';

describe('withoutDroppedFields', () => {
  const result = {
    kind: 'ConfigMap',
    metadata: { name: 'settings', labels: { team: 'a' } },
    data: { keep: '1', extra: 'x', byHand: 'y' },
    status: { n: 1 },
  };

  it('removes the map fields the last revision set and this one does not, and nothing else', () => {
    const last = { kind: 'ConfigMap', metadata: { name: 'settings' }, data: { keep: '1', extra: 'x' } };
    const next = { kind: 'ConfigMap', metadata: { name: 'settings' }, data: { keep: '1' } };
    expect(withoutDroppedFields(result, last, next, [])).toEqual({
      kind: 'ConfigMap',
      metadata: { name: 'settings', labels: { team: 'a' } },
      data: { keep: '1', byHand: 'y' },
      status: { n: 1 },
    });
    expect(result.data.extra).toBe('x'); // a copy: the dry run's result is not changed
  });

  it('keeps a field under an ignore rule, and leaves lists and a first install alone', () => {
    const last = { data: { keep: '1', extra: 'x' }, spec: { ports: [{ port: 80 }, { port: 81 }] } };
    const next = { data: { keep: '1' }, spec: { ports: [{ port: 80 }] } };
    const withList = { ...result, spec: { ports: [{ port: 80 }, { port: 81 }] } };
    expect(withoutDroppedFields(withList, last, next, ['/data/extra'])).toEqual(withList);
    expect(withoutDroppedFields(result, undefined, next, [])).toBe(result);
  });
});
