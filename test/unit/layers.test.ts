// The house shows the pipeline (issue 30): src/ holds only the bin entry and folders, each folder
// imports only folders in the layers below its own, and no file imports itself around a circle.
// A newcomer's import that climbs back up fails here, naming the files.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers.js';

/** Top to bottom; a folder may import the folders of any layer below its own, none of its own layer or above. */
const LAYERS: string[][] = [
  ['cli'], // main, program, the commands: options wired, the app's input resolved once
  ['preview', 'export', 'tell', 'troubleshoot'], // read what install would do or did (troubleshoot: the KOTS Preflight and SupportBundle), never imported back
  ['releases'], // the scheduler: a release plan's releases, the app revision, prune
  ['reconcile'], // one release: read, decide, act (install's run)
  ['crds'], // the CRD step of an upgrade
  ['run', 'drift', 'rbac'], // the run context and render setup; drift; the RBAC preflight
  ['post-render'], // rewriting helm's output: the airgap stage, the post-renderer's host and run, edits, pins
  ['images'], // finding and naming images: the finders, the catalog, hints, KOTS lists
  ['inputs'], // chart, values, the release plan file
  ['options'], // option tables and parsers
  ['cluster', 'registry'], // the Kubernetes API adapter; the registry client and its preflight
  ['helm'], // the one helm adapter
  ['rendered'], // helm's rendered output read as text: the stream, its YAML lexer, text edits
  ['common'], // errors, logger, secrets, bounded reads, image references
];

const src = join(repoRoot, 'src');
const layerOf = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from |import\()'(\.[^']+)'/g)].map((m) =>
    resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts'),
  );
}

const folderOf = (file: string) => relative(src, file).split(sep)[0]!;

describe('src/ layout', () => {
  const files = sourceFiles(src);

  it('has only the bin entry at the top, and every folder in a layer', () => {
    expect(
      readdirSync(src, { withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name),
    ).toEqual(['cli.ts']);
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => !layerOf.has(f))).toEqual([]);
  });

  it('imports downward only', () => {
    const upward: string[] = [];
    for (const file of files.filter((f) => folderOf(f) !== 'cli.ts')) {
      const from = layerOf.get(folderOf(file))!;
      for (const target of imports(file)) {
        const folder = folderOf(target);
        if (folder === folderOf(file)) continue;
        if (!(layerOf.get(folder)! > from)) upward.push(`${relative(src, file)} -> ${relative(src, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('has no import circles between files', () => {
    const graph = new Map(files.map((f) => [f, imports(f).filter((t) => t !== f)]));
    const done = new Set<string>();
    const circles: string[] = [];
    const walk = (f: string, path: string[]) => {
      if (path.includes(f))
        return circles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(src, p)).join(' -> '));
      if (done.has(f)) return;
      for (const t of graph.get(f) ?? []) walk(t, [...path, f]);
      done.add(f);
    };
    for (const f of files) walk(f, []);
    expect(circles).toEqual([]);
  });

  it('re-exports nothing: an importer names the file that owns the thing', () => {
    // The one exception bundles a subset of a package into one file (see its comment).
    const entry = join(src, 'cluster', 'kubernetes-client-entry.ts');
    const reExports = files
      .filter((f) => f !== entry)
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .flatMap((line, i) =>
            /^export (type )?(\*|\{[^}]*\})( from |;)/.test(line) ? [`${relative(src, f)}:${i + 1}: ${line}`] : [],
          ),
      );
    expect(reExports).toEqual([]);
  });
});
