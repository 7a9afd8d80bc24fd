// Where an export goes (issue 36: an export never destroys): `placeExport`'s table, and the
// manifest that says what an earlier export wrote, read back from folders written here.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  earlierExportFiles,
  listFiles,
  MANIFEST,
  manifestText,
  parseManifest,
  placeExport,
  type Placement,
} from '../../src/export/export-manifest.js';
import { tempDir } from '../helpers.js';

const NEW = ['README.md', 'flux/source.yaml', 'web/base/a.yaml', 'web/secrets/s.yaml'];
const EARLIER = ['README.md', 'flux/source.yaml', 'web/base/a.yaml', 'old/base/b.yaml', 'web/secrets/s.yaml'];

describe('placeExport', () => {
  const cases: [string, Parameters<typeof placeExport>[0], Placement][] = [
    [
      'a new or empty folder: whole',
      { files: NEW, present: [], earlier: undefined, inTree: false, encrypted: [] },
      { mode: 'folder', remove: [], write: NEW, conflicts: [] },
    ],
    [
      'an earlier export alone (--force): whole, its leftovers go with it',
      { files: NEW, present: [...EARLIER, MANIFEST], earlier: EARLIER, inTree: false, encrypted: [] },
      { mode: 'folder', remove: ['old/base/b.yaml'], write: NEW, conflicts: [] },
    ],
    [
      "an earlier export and a file of the user's: in place, the user's file kept",
      { files: NEW, present: [...EARLIER, MANIFEST, 'NOTES.txt'], earlier: EARLIER, inTree: false, encrypted: [] },
      { mode: 'in-place', remove: ['old/base/b.yaml'], write: NEW, conflicts: [] },
    ],
    [
      'a git work tree: always in place, even when empty',
      { files: NEW, present: [], earlier: undefined, inTree: true, encrypted: [] },
      { mode: 'in-place', remove: [], write: NEW, conflicts: [] },
    ],
    [
      "the user's README where the export writes one: a conflict",
      { files: NEW, present: ['README.md', 'docs/x.md'], earlier: undefined, inTree: true, encrypted: [] },
      { mode: 'in-place', remove: [], write: NEW, conflicts: ['README.md'] },
    ],
    [
      "a file of the user's where the export needs a folder, and a folder of the user's where it writes a file: conflicts",
      { files: NEW, present: ['web', 'flux/source.yaml/mine'], earlier: undefined, inTree: true, encrypted: [] },
      {
        mode: 'in-place',
        remove: [],
        write: NEW,
        conflicts: ['flux/source.yaml', 'web/base/a.yaml', 'web/secrets/s.yaml'],
      },
    ],
    [
      'a secret the user encrypted: kept, not written',
      {
        files: NEW,
        present: [...EARLIER, MANIFEST],
        earlier: EARLIER,
        inTree: true,
        encrypted: ['web/secrets/s.yaml'],
      },
      {
        mode: 'in-place',
        remove: ['old/base/b.yaml'],
        write: ['README.md', 'flux/source.yaml', 'web/base/a.yaml'],
        conflicts: [],
      },
    ],
    [
      'a file the earlier export wrote and the user deleted since: nothing to remove',
      {
        files: ['README.md'],
        present: ['README.md', MANIFEST],
        earlier: ['README.md', 'gone.yaml'],
        inTree: false,
        encrypted: [],
      },
      { mode: 'folder', remove: [], write: ['README.md'], conflicts: [] },
    ],
  ];
  it.each(cases)('%s', (_label, input, expected) => {
    expect(placeExport(input)).toEqual(expected);
  });
});

describe('the manifest', () => {
  it('lists the files sorted under a comment, and reads them back (never a path that climbs out)', () => {
    const text = manifestText(['b/x.yaml', 'README.md', 'a.yaml']);
    expect(text).toBe(
      '# Written by helm-installer export: the files it wrote in this folder, one a line. The next\n# export replaces or removes these only; every other file here is kept.\nREADME.md\na.yaml\nb/x.yaml\n',
    );
    expect(parseManifest(text)).toEqual(['README.md', 'a.yaml', 'b/x.yaml']);
    expect(parseManifest('../etc/passwd\na/../../x\nok.yaml\n')).toEqual(['ok.yaml']);
  });

  it("an earlier export: the manifest's list; the rendered form's from before it: README.md, flux/ and its release folders; else none", () => {
    const dir = tempDir('export-manifest');
    const write = (path: string, text = 'x\n') => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    expect(earlierExportFiles(dir)).toBeUndefined();
    write('README.md');
    write('.git/HEAD');
    write('mine/notes.txt');
    expect(earlierExportFiles(dir)).toBeUndefined();
    expect(listFiles(dir).sort()).toEqual(['README.md', 'mine/notes.txt']);
    write(
      'flux/kustomizations.yaml',
      'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: web}\n---\nkind: Kustomization\nmetadata: {name: ../x}\n',
    );
    write('web/base/a.yaml');
    expect(earlierExportFiles(dir)!.sort()).toEqual(['README.md', 'flux/kustomizations.yaml', 'web/base/a.yaml']);
    write(MANIFEST, manifestText(['web/base/a.yaml']));
    expect(earlierExportFiles(dir)).toEqual(['web/base/a.yaml']);
  });
});
