// The values digest's reading of the layers as written: equal only where helm's own merge is
// equal (checked against the real helm 4 and helm 3 merging the same files), formatting that helm
// never sees ignored, and undefined where the reading does not follow helm exactly.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/reconcile/release-digest.js';
import { valuesAsWritten } from '../../src/inputs/values-as-written.js';
import { helm3, helm4, tempDir } from '../helpers.js';

const dir = tempDir('values-as-written');
const probe = join(dir, 'probe');
mkdirSync(join(probe, 'templates'), { recursive: true });
writeFileSync(join(probe, 'Chart.yaml'), 'apiVersion: v2\nname: probe\nversion: 0.0.0\n');
writeFileSync(join(probe, 'templates', 'values.yaml'), '{{ toJson .Values }}\n');

let n = 0;
/** Helm's merge of these layers (as the installer's values probe asks it), as canonical JSON. */
async function helmMerge(helm: string, layers: string[]): Promise<string> {
  const files = layers.map((text) => {
    const file = join(dir, `layer-${n++}.yaml`);
    writeFileSync(file, text);
    return file;
  });
  const r = await execa(helm, ['template', 'probe', probe, ...files.flatMap((f) => ['-f', f])]);
  return canonicalJson(JSON.parse(r.stdout.replace(/^---.*\n(#.*\n)?/, '')));
}

const same = (a: string[], b: string[]) => canonicalJson(valuesAsWritten(a)) === canonicalJson(valuesAsWritten(b));

// Pairs written differently that helm merges to the same values: equal here too.
const equalPairs: [string, string[], string[]][] = [
  [
    'key order, comments, indentation',
    ['a: 1\nb:\n  c: x\n  d: [1, 2]\n'],
    ['# vendor\nb:\n    d:\n      - 1\n      - 2\n    c: x   # note\na: 1\n'],
  ],
  [
    'flow and block style',
    ['web: {replicas: 2, tags: [a, b]}\n'],
    ['web:\n  replicas: 2\n  tags:\n    - a\n    - b\n'],
  ],
  ["a string's quoting", [`name: "web"\nmsg: 'it''s'\n`], [`name: 'web'\nmsg: "it's"\n`]],
  ['anchors and aliases', ['base: &b {x: 1}\nother: *b\n'], ['base: {x: 1}\nother: {x: 1}\n']],
  ['the same merge of two layers', ['a: {x: 1, y: 2}\n', 'a: {y: 3}\n'], ['a: {x: 1, y: 2}\n', 'a:\n  y: 3\n']],
  ['an empty layer, or one that is only null', ['a: 1\n', ''], ['a: 1\n', '~\n']],
];

// Pairs helm reads differently: never equal here (the safe direction).
const differentPairs: [string, string[], string[]][] = [
  ['yes is a boolean to go-yaml, "yes" a string', ['flag: yes\n'], ['flag: "yes"\n']],
  ['an octal number and its string', ['mode: 0777\n'], ['mode: "0777"\n']],
  ['null and the empty string', ['x: ~\n'], ['x: ""\n']],
  ['a later layer replaces a list', ['l: [1, 2]\n', 'l: [3]\n'], ['l: [1, 2, 3]\n']],
];

describe('valuesAsWritten', () => {
  it.each(equalPairs)('equal as helm merges them: %s', async (_, a, b) => {
    expect(same(a, b)).toBe(true);
    for (const helm of [helm4, helm3]) expect(await helmMerge(helm, a)).toBe(await helmMerge(helm, b));
  });

  it.each(differentPairs)('different as helm reads them: %s', async (_, a, b) => {
    expect(same(a, b)).toBe(false);
    expect(await helmMerge(helm4, a)).not.toBe(await helmMerge(helm4, b));
  });

  it('a value written two ways that helm reads as one (1e3, 1000) counts as different: an upgrade, never a wrong no-op', async () => {
    expect(same(['size: 1e3\n'], ['size: 1000\n'])).toBe(false);
    expect(await helmMerge(helm4, ['size: 1e3\n'])).toBe(await helmMerge(helm4, ['size: 1000\n']));
  });

  it('keeps each scalar as written (plain: its text; quoted or block: its string) and merges maps as helm does', () => {
    expect(valuesAsWritten(['a: {x: 1, l: [yes, "s"]}\nb: |\n  text\n', 'a: {z: ~}\n'])).toEqual({
      a: { x: 'p:1', l: ['p:yes', 's:s'], z: 'p:~' },
      b: 's:text\n',
    });
    expect(valuesAsWritten(['__proto__: {x: 1}\n'])).toEqual(JSON.parse('{"__proto__": {"x": "p:1"}}'));
  });

  it.each([
    ['an explicit tag', 'a: !!str 1\n'],
    ['a merge key', 'base: &b {x: 1}\nother:\n  <<: *b\n'],
    ['several documents', 'a: 1\n---\nb: 2\n'],
    ['a top level that is not a map', '- a\n'],
    ['a key YAML 1.1 reads as a boolean', 'on: 1\n'],
    ['a one-letter key YAML 1.1 reads as a boolean', 'y: 1\n'],
    ['a key that is a number', '1: a\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
  ])('undefined (helm merges instead) for %s', (_, text) => {
    expect(valuesAsWritten([text])).toBeUndefined();
  });
});
