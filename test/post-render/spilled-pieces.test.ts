// The post-renderer's spill file: the documents read back exactly as they were cut (multi-byte
// UTF-8 included), by index, in any order, and the file never left behind.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitManifestStream } from '../../src/rendered/manifest-stream.js';
import { SpilledPieces } from '../../src/post-render/spilled-pieces.js';

const STREAM = [
  '# Source: app/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {greeting: "grüße, 你好 🚀"}\n',
  '---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c, image: "nginx:1.27"}]}\n',
  '---\n',
  '---\n# empty but for a comment: ünïcode\n',
].join('');

describe('SpilledPieces', () => {
  it('gives back every piece as cut, by index and in any order, and leaves no file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spill-'));
    const pieces = splitManifestStream(STREAM);
    expect(pieces.length).toBe(4);
    const spilled = new SpilledPieces(join(dir, 'stream.spill'));
    for (const piece of pieces) spilled.push(piece);
    // Unlinked as soon as it is open: nothing to clean up, even after a kill.
    expect(readdirSync(dir)).toEqual([]);
    expect(spilled.length).toBe(4);
    for (const i of [3, 0, 2, 1, 0]) expect(spilled.at(i)).toEqual(pieces[i]);
    expect(spilled.at(0)!.text).toBe(STREAM.slice(0, STREAM.indexOf('---')));
    expect(spilled.at(4)).toBeUndefined();
    expect(spilled.at(-1)).toBeUndefined();
    expect([0, 1, 2, 3].map((i) => spilled.at(i)!.text).join('')).toBe(STREAM);
    spilled.close();
    expect(() => spilled.at(0)).toThrow(/closed/);
  });

  it('tells CRDs apart as they arrive, and gives a piece back in 64 KB chunks that join to its bytes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spill-'));
    const crd = `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b.c}\nspec:\n${'  # ünïcode 🚀 filler\n'.repeat(9000)}`;
    const pieces = splitManifestStream(`${STREAM}---\n${crd}`);
    const spilled = new SpilledPieces(join(dir, 'stream.spill'));
    for (const piece of pieces) spilled.push(piece);
    expect(pieces.map((_, i) => spilled.isCustomResourceDefinition(i))).toEqual([false, false, false, false, true]);
    const chunks = [...spilled.chunksOf(4)];
    expect(chunks.map((c) => c.length)).toEqual([65536, 65536, 65536, Buffer.byteLength(`---\n${crd}`) - 3 * 65536]);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(`---\n${crd}`);
    expect(Buffer.concat([...spilled.chunksOf(0)]).toString('utf8')).toBe(pieces[0]!.text);
    expect(() => [...spilled.chunksOf(5)]).toThrow(/no piece 5/);
    spilled.close();
  });

  it('refuses pieces out of order, which would pair a text with the wrong edits', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spill-'));
    const [first, second] = splitManifestStream(STREAM);
    const spilled = new SpilledPieces(join(dir, 'stream.spill'));
    expect(() => spilled.push(second!)).toThrow(/in order: got 1, expected 0/);
    spilled.push(first!);
    expect(() => spilled.push(first!)).toThrow(/in order: got 0, expected 1/);
    spilled.close();
  });

  it('will not write over a file that exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'spill-'));
    writeFileSync(join(dir, 'x.spill'), "somebody else's");
    expect(() => new SpilledPieces(join(dir, 'x.spill'))).toThrow(/EEXIST/);
    expect(readFileSync(join(dir, 'x.spill'), 'utf8')).toBe("somebody else's");
  });
});
