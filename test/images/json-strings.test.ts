// The one-line JSON reader (a template's toJson in a ConfigMap or a Secret): every string with the
// key it sits under and its exact range, checked against JSON.parse's own reading of the same
// text; linear, so a value of megabytes (a minified dashboard) is read whole, in bounded time.
import { describe, expect, it } from 'vitest';
import { findEmbeddedReferences } from '../../src/images/embedded-images.js';
import { isOneLineJson, jsonObjects, jsonStrings } from '../../src/images/json-strings.js';
import { findNameTagPairs } from '../../src/images/name-tag-pairs.js';

/** The oracle: (key, string) in document order, read by JSON.parse (a list item under its list's key). */
function expectedStrings(value: unknown, key = ''): [string, string][] {
  if (typeof value === 'string') return [[key, value]];
  if (Array.isArray(value)) return value.flatMap((v) => expectedStrings(v, key));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => expectedStrings(v, k));
  return [];
}

/** A dashboard-like document of `n` panels, an image near its end. */
function dashboard(n: number): string {
  const panels = Array.from({ length: n }, (_, i) => ({
    id: i,
    title: `panel ${i}`,
    ok: true,
    none: null,
    targets: [{ expr: 'rate(http_requests_total[5m])', refs: ['a', 'b'] }],
    pos: { h: 8.5, w: -12 },
  }));
  return JSON.stringify({
    dashboard: { panels },
    sidecar: { image: 'quay.io/acme/dash-sidecar:1.2.3' },
    runner: { image: { registry: 'ghcr.io', repository: 'acme/runner', tag: '2.0.0' } },
  });
}

describe('jsonStrings', () => {
  it('reads every string as JSON.parse does, each range holding exactly its value', () => {
    const text = JSON.stringify({
      a: 'x',
      b: [1, 'y', { c: 'z', d: [['w']] }],
      e: { f: { g: 'v' } },
      h: '',
      'k:y': 'u,v]',
    });
    const found = jsonStrings(text);
    expect(found.map((s) => [s.key, s.value])).toEqual(expectedStrings(JSON.parse(text)));
    for (const s of found) expect(text.slice(s.start, s.end)).toBe(s.value);
  });

  it('leaves out a string with escapes (its range would not be its value) and reads nothing of text that is not JSON', () => {
    expect(jsonStrings('{"a":"q\\"x","b":"plain"}').map((s) => s.value)).toEqual(['plain']);
    expect(jsonStrings('{"a":"x",}')).toEqual([]);
    expect(jsonStrings('{"a":"x"')).toEqual([]);
  });

  it('a one-line value of 4 MiB is read whole in bounded time (was: over 256 KiB, not read at all)', () => {
    const text = dashboard(28_000);
    expect(text.length).toBeGreaterThan(4 * 1024 * 1024);
    expect(isOneLineJson(text)).toBe(true);
    const began = performance.now();
    const found = jsonStrings(text);
    const ms = performance.now() - began;
    process.stdout.write(`figure: jsonStrings of ${(text.length / 1024 / 1024).toFixed(1)} MiB: ${ms.toFixed(0)} ms\n`);
    expect(found.map((s) => [s.key, s.value])).toEqual(expectedStrings(JSON.parse(text)));
    expect(ms).toBeLessThan(5000);
  });
});

describe('one-line JSON of hundreds of KiB in ConfigMap data', () => {
  it('its images are found: a reference under an image key and a registry/repository/tag map', () => {
    const text = dashboard(2_200);
    expect(text.length).toBeGreaterThan(300 * 1024);
    const found = findEmbeddedReferences(text, { where: 'data', key: 'dashboard.json' }).images;
    expect(found.map((r) => `${r.via}=${r.reference}|${text.slice(r.start, r.end)}`)).toEqual([
      'image.registry=ghcr.io/acme/runner:2.0.0|ghcr.io',
      'image.repository=ghcr.io/acme/runner:2.0.0|acme/runner',
      'image=quay.io/acme/dash-sidecar:1.2.3|quay.io/acme/dash-sidecar:1.2.3',
    ]);
  });

  it('name and tag pairs read from one-line JSON equal those read from the same document as YAML', () => {
    const doc = {
      a: { image: { name: 'quay.io/x/y', tag: '1.0' } },
      list: [{ image: { registry: 'ghcr.io', repository: 'o/r', tag: 'v2' } }],
      n: { image: { repository: 'o/num', tag: 3 } },
    };
    const oneLine = findNameTagPairs(JSON.stringify(doc)).map((p) => [p.reference, p.via, p.registry?.via]);
    const pretty = findNameTagPairs(JSON.stringify(doc, null, 2)).map((p) => [p.reference, p.via, p.registry?.via]);
    expect(oneLine).toEqual([
      ['quay.io/x/y:1.0', 'image.name', undefined],
      ['ghcr.io/o/r:v2', 'image.repository', 'image.registry'],
      ['o/num:3', 'image.repository', undefined],
    ]);
    expect(oneLine).toEqual(pretty);
    expect(
      jsonObjects('{"a":{"tag":"1"},"b":[{"tag":"2"}]}', (m) => m.has('tag')).map((o) => [
        o.key,
        o.members.get('tag')!.text,
      ]),
    ).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });
});
