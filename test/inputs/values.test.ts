import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/common/exit-codes.js';
import { explainLeaves } from '../../src/inputs/values-explain.js';
import { expandValuesPath, parseValuesText } from '../../src/inputs/values.js';
import { archiveEntryProblem } from '../../src/inputs/chart-archive.js';

describe('values files', () => {
  it('names the file and line of a YAML error', () => {
    expect(() => parseValuesText('a: 1\nb:\n  c: [1, 2\nd: 3\n', 'cm/values.yaml')).toThrow(
      expect.objectContaining({ exitCode: ExitCode.invalidInput, file: 'cm/values.yaml', line: expect.any(Number) }),
    );
  });
  it('refuses a top level that is not a map, and accepts an empty file', () => {
    expect(() => parseValuesText('- a\n- b\n', 'list.yaml')).toThrow(/top level of a values file must be a map/);
    expect(() => parseValuesText('just a string\n', 's.yaml')).toThrow(/not a string/);
    expect(parseValuesText('', 'empty.yaml')).toEqual({});
    expect(parseValuesText('# only a comment\n', 'c.yaml')).toEqual({});
  });
  it('expands a directory to its yaml files in lexical order, skipping dotfiles (ConfigMap mounts)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vals-'));
    for (const f of ['b.yaml', 'a.yml', '10.yaml', '.hidden.yaml', 'notes.txt']) writeFileSync(join(dir, f), 'x: 1\n');
    mkdirSync(join(dir, '..data'));
    expect(expandValuesPath(dir).map((f) => f.slice(dir.length + 1))).toEqual(['10.yaml', 'a.yml', 'b.yaml']);
    const empty = mkdtempSync(join(tmpdir(), 'vals-'));
    expect(expandValuesPath(empty)).toEqual([]);
    expect(() => expandValuesPath(join(dir, 'missing.yaml'))).toThrow(/values path not found/);
  });
});

describe('explainLeaves', () => {
  it('attributes each leaf to the highest layer that sets it', () => {
    const merged = { a: { b: 2, c: 1 }, list: [3], gone: null };
    const rows = explainLeaves(merged, [
      { label: 'vendor', config: { a: { b: 1, c: 1 }, list: [1, 2] } },
      { label: 'customer', config: { a: { b: 2 }, gone: null } },
      { label: '--set', config: { list: [3] } },
    ]);
    expect(rows).toEqual([
      { path: 'a.b', value: 2, layer: 'customer' },
      { path: 'a.c', value: 1, layer: 'vendor' },
      { path: 'list', value: [3], layer: '--set' },
      { path: 'gone', value: null, layer: 'customer' },
    ]);
  });
});

describe('archiveEntryProblem', () => {
  it('flags unsafe entries and passes ordinary ones', () => {
    expect(archiveEntryProblem('shop/templates/a.yaml', 'File', undefined, 10)).toBeUndefined();
    expect(archiveEntryProblem('/etc/passwd', 'File', undefined, 10)).toMatch(/absolute/);
    expect(archiveEntryProblem('shop/../../x', 'File', undefined, 10)).toMatch(/\.\./);
    expect(archiveEntryProblem('shop/dev', 'CharacterDevice', undefined, 0)).toMatch(/device/);
    expect(archiveEntryProblem('shop/l', 'SymbolicLink', '../../etc/passwd', 0)).toMatch(/escapes/);
    expect(archiveEntryProblem('shop/l', 'SymbolicLink', '/etc/passwd', 0)).toMatch(/absolute/);
    expect(archiveEntryProblem('shop/templates/l', 'SymbolicLink', '../values.yaml', 0)).toBeUndefined();
    expect(archiveEntryProblem('shop/big', 'File', undefined, 50 * 1024 * 1024)).toMatch(/limit/);
  });
});
