// Every relative link in the READMEs resolves. The README is an overview and the deep sections
// live beside what they describe (kots/, manifests/, src/*/, test/bench/, docs/), so a moved
// file or a renamed heading breaks a link no reader would report: this test does.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers.js';

const SKIP_DIRS = new Set(['node_modules', 'fixtures', 'dist', '.git']);

/** README.md at the root, every README.md under these folders, and every markdown file under docs/. */
function markdownFiles(): string[] {
  const found = [join(repoRoot, 'README.md')];
  const walk = (dir: string, all: boolean): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(path, all);
      } else if (entry.name === 'README.md' || (all && entry.name.endsWith('.md'))) {
        found.push(path);
      }
    }
  };
  for (const dir of ['kots', 'manifests', 'src', 'test']) walk(join(repoRoot, dir), false);
  walk(join(repoRoot, 'docs'), true);
  return found;
}

/** The text outside fenced code blocks and inline code spans, where links and headings are. */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/`[^`]*`/g, (code) => code.replace(/[[\]()#]/g, ' '));
}

/** GitHub's anchor for a heading: its text lowercased, punctuation dropped, spaces as hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/`([^`]*)`/g, '$1') // code spans keep their text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links keep their text
    .replace(/(\*\*|__|\*|_)(\S(?:.*?\S)?)\1/g, '$2'); // emphasis markers go
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a markdown file has, duplicates numbered as GitHub does (`x`, `x-1`, ...). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = githubSlug(match[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  // An explicit anchor (`<a id="x"></a>`) marks a place that is no heading, such as a list item.
  for (const match of withoutFences.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(match[1]!.toLowerCase());
  return out;
}

export interface BrokenLink {
  file: string;
  link: string;
  why: string;
}

/** The relative links of one markdown file that point nowhere. */
export function brokenLinks(file: string, markdown: string, read: (path: string) => string | undefined): BrokenLink[] {
  const broken: BrokenLink[] = [];
  for (const match of prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const link = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:, ...: not ours to check
    const hash = link.indexOf('#');
    const path = decodeURIComponent(hash === -1 ? link : link.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(link.slice(hash + 1));
    const target = path === '' ? file : resolve(dirname(file), path);
    const text = read(target);
    if (text === undefined) {
      broken.push({ file, link, why: `${relative(repoRoot, target) || target} does not exist` });
      continue;
    }
    if (anchor !== undefined && target.endsWith('.md') && !anchors(text).has(anchor.toLowerCase())) {
      broken.push({ file, link, why: `no heading with the anchor #${anchor} in ${relative(repoRoot, target)}` });
    }
  }
  return broken;
}

/** A file's text, '' for a directory (a link to a folder resolves), undefined when nothing is there. */
function readTarget(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  return statSync(path).isDirectory() ? '' : readFileSync(path, 'utf8');
}

describe('the link check itself', () => {
  it('slugs headings as GitHub does', () => {
    expect(githubSlug('Tests after an install or upgrade (`--test`)')).toBe('tests-after-an-install-or-upgrade---test');
    expect(githubSlug("RBAC: what the installer's ServiceAccount needs")).toBe(
      'rbac-what-the-installers-serviceaccount-needs',
    );
    expect(githubSlug("`export --format helmrelease`: for clusters that run Flux's helm-controller")).toBe(
      'export---format-helmrelease-for-clusters-that-run-fluxs-helm-controller',
    );
    expect([...anchors('# A\n\n## A\n\n```\n# not a heading\n```\n')]).toEqual(['a', 'a-1']);
    expect([...anchors('# A\n\n- <a id="in-a-list"></a>**In a list**\n')]).toEqual(['a', 'in-a-list']);
  });

  it('finds a missing file, a missing anchor and a missing anchor in the same file', () => {
    const file = join(repoRoot, 'README.md');
    const markdown = [
      '# Top',
      '[ok](README.md#top) [ok](#top) [ok](https://example.invalid/x) `[code](nowhere.md)`',
      '[gone](docs/no-such-file.md) [bad anchor](README.md#nowhere) [bad](#also-nowhere)',
      '```',
      '[in a fence](fenced.md)',
      '```',
    ].join('\n');
    const read = (path: string): string | undefined => (path === file ? markdown : undefined);
    expect(brokenLinks(file, markdown, read).map((b) => b.link)).toEqual([
      'docs/no-such-file.md',
      'README.md#nowhere',
      '#also-nowhere',
    ]);
  });
});

describe('README links', () => {
  const files = markdownFiles();

  it('reads the README and the READMEs beside the code', () => {
    const names = files.map((f) => relative(repoRoot, f));
    for (const expected of [
      'README.md',
      'kots/README.md',
      'manifests/README.md',
      'src/export/README.md',
      'src/images/README.md',
      'test/bench/README.md',
    ]) {
      expect(names).toContain(expected);
    }
    expect(names.some((n) => n.includes('node_modules') || n.includes('fixtures'))).toBe(false);
  });

  it.each(files.map((f) => [relative(repoRoot, f), f]))('every relative link in %s resolves', (_name, file) => {
    expect(brokenLinks(file, readFileSync(file, 'utf8'), readTarget)).toEqual([]);
  });
});
