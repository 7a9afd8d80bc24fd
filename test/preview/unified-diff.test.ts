// The plan's unified diff (src/preview/unified-diff.ts): YAML of both sides, three lines of
// context, jsdiff's hunk headers. Every expected diff is written out by hand.
import { describe, expect, it } from 'vitest';
import { alignKeys, toYaml, unifiedDiff } from '../../src/preview/unified-diff.js';

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'web', namespace: 'shop' },
  data,
});

describe('unifiedDiff', () => {
  it('is empty when both sides print the same', () => {
    expect(unifiedDiff('ConfigMap web (shop)', configMap({ a: '1' }), configMap({ a: '1' }))).toBe('');
  });

  it('shows a changed value with three lines of context and the object in the header', () => {
    const live = configMap({ a: '1', b: '2', c: '3', d: '4', e: '5', f: '6' });
    const desired = configMap({ a: '1', b: '2', c: '3', d: 'four', e: '5', f: '6' });
    expect(unifiedDiff('ConfigMap web (shop)', live, desired)).toBe(
      [
        '--- live ConfigMap web (shop)',
        '+++ desired',
        '@@ -7,6 +7,6 @@',
        '   a: "1"',
        '   b: "2"',
        '   c: "3"',
        '-  d: "4"',
        '+  d: four',
        '   e: "5"',
        '   f: "6"',
        '',
      ].join('\n'),
    );
  });

  it('shows a create as all added and a delete as all removed', () => {
    const object = configMap({ a: 'x' });
    const lines = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: web',
      '  namespace: shop',
      'data:',
      '  a: x',
    ];
    expect(unifiedDiff('ConfigMap web (shop)', undefined, object)).toBe(
      ['--- live ConfigMap web (shop)', '+++ desired', '@@ -0,0 +1,7 @@', ...lines.map((l) => `+${l}`), ''].join('\n'),
    );
    expect(unifiedDiff('ConfigMap web (shop)', object, undefined)).toBe(
      ['--- live ConfigMap web (shop)', '+++ desired', '@@ -1,7 +0,0 @@', ...lines.map((l) => `-${l}`), ''].join('\n'),
    );
  });

  it('prints multi-line strings as blocks and escapes control characters', () => {
    expect(toYaml({ script: 'set -e\nrun\n', banner: 'a\u001b[31mred' })).toBe(
      'script: |\n  set -e\n  run\nbanner: "a\\e[31mred"\n',
    );
  });

  it('shows a diff past its edit limit as everything removed, then everything added', () => {
    const live = { data: { a: '1', b: '2', c: '3' } };
    const desired = { data: { a: 'x', b: 'y', c: 'z' } };
    expect(unifiedDiff('ConfigMap web', live, desired, { maxEditLength: 2 })).toBe(
      [
        '--- live ConfigMap web',
        '+++ desired',
        '@@ -1,4 +1,4 @@',
        '-data:',
        '-  a: "1"',
        '-  b: "2"',
        '-  c: "3"',
        '+data:',
        '+  a: x',
        '+  b: y',
        '+  c: z',
        '',
      ].join('\n'),
    );
  });

  it("prints desired in live's key order, so a reordered custom resource shows only what changed", () => {
    const live = {
      apiVersion: 'example.com/v1',
      kind: 'Promotion',
      spec: { image: 'a:1', replicas: 2, paused: false },
    };
    const desired = {
      kind: 'Promotion',
      apiVersion: 'example.com/v1',
      spec: { paused: false, replicas: 3, image: 'a:1' },
    };
    expect(unifiedDiff('Promotion p (shop)', live, desired)).toBe(
      [
        '--- live Promotion p (shop)',
        '+++ desired',
        '@@ -2,5 +2,5 @@',
        ' kind: Promotion',
        ' spec:',
        '   image: a:1',
        '-  replicas: 2',
        '+  replicas: 3',
        '   paused: false',
        '',
      ].join('\n'),
    );
  });
});

describe('alignKeys', () => {
  it('keeps keys only desired has after the key they follow there, and aligns list items', () => {
    const live = { a: 1, c: 3, list: [{ x: 1, y: 2 }] };
    const desired = { new0: 0, c: 3, new1: 1, a: 1, list: [{ y: 2, x: 1 }, { z: 1 }] };
    const aligned = alignKeys(desired, live) as Record<string, unknown>;
    expect(Object.keys(aligned)).toEqual(['new0', 'a', 'c', 'new1', 'list']);
    expect(JSON.stringify(aligned.list)).toBe('[{"x":1,"y":2},{"z":1}]');
  });
});
