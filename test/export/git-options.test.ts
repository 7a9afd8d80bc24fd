// The parsers of `export --source git`'s options. The branch rule is checked against git itself
// (`git check-ref-format --branch`) on names that probe each of its rules, so ours cannot accept a
// name git refuses; the few git accepts but Flux cannot follow (`@`, HEAD) are refused on purpose.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { inRepository, maskGitUrl, parseGitBranch, parseGitPath, parseGitUrl } from '../../src/export/git-options.js';

const gitAccepts = (name: string) => {
  try {
    execFileSync('git', ['check-ref-format', '--branch', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const ours = (name: string) => {
  try {
    parseGitBranch(name);
    return true;
  } catch {
    return false;
  }
};

describe('parseGitBranch', () => {
  const names = [
    'main',
    'release/1.2',
    'feature/x-y_z',
    'é',
    'a@b',
    'v1.0',
    'refs/heads/x',
    'a..b',
    '.x',
    'x/.y',
    'x.lock',
    'x.lock/y',
    'x/',
    '/x',
    'a//b',
    'a b',
    'a~b',
    'a^b',
    'a:b',
    'a?b',
    'a*b',
    'a[b',
    'a\\b',
    'a@{b',
    'x.',
    '-x',
    'a\tb',
    'a\x7fb',
  ];
  it.each(names)('%j: as git check-ref-format --branch', (name) => {
    expect(ours(name)).toBe(gitAccepts(name));
  });
  it('refuses what names the checkout rather than a branch, and the empty name', () => {
    expect(['@', 'HEAD', '', '  '].map(ours)).toEqual([false, false, false, false]);
  });
});

describe('parseGitUrl', () => {
  it('accepts what Flux clones', () => {
    for (const u of [
      'https://git.example.com/acme/fleet.git',
      'http://127.0.0.1:8080/fleet.git',
      'ssh://git@git.example.com/acme/fleet.git',
      'https://bot@git.example.com/acme/fleet',
    ])
      expect(parseGitUrl(` ${u} `)).toBe(u);
  });
  it.each([
    ['git@git.example.com:acme/fleet.git', 'ssh://git@git.example.com/acme/fleet.git'],
    ['file:///srv/fleet.git', 'http://, https:// or ssh://'],
    ['https://git.example.com', "the repository's path"],
    ['https://bot:tok@git.example.com/fleet.git', 'spec.secretRef'],
    ['https://git.example.com/fleet.git#main', 'without a query'],
    ['https://git.example.com/a b.git', 'without spaces'],
    ['', 'expected a repository URL'],
  ])('%j is refused, saying %j', (url, says) => {
    expect(() => parseGitUrl(url)).toThrow(says);
  });
  it('masks a password when echoed', () => {
    expect(maskGitUrl('https://bot:tok@git.example.com/fleet.git')).toBe('https://bot:***@git.example.com/fleet.git');
    expect(maskGitUrl('https://bot@git.example.com/fleet.git')).toBe('https://bot@git.example.com/fleet.git');
  });
});

describe('parseGitPath and inRepository', () => {
  it('normalises a relative path; . is the root', () => {
    expect(['.', './', '', 'clusters/prod', './clusters//prod/', 'a/./b'].map(parseGitPath)).toEqual([
      '.',
      '.',
      '.',
      'clusters/prod',
      'clusters/prod',
      'a/b',
    ]);
    expect([inRepository('.', 'flux'), inRepository('clusters/prod', 'web/overlay')]).toEqual([
      './flux',
      './clusters/prod/web/overlay',
    ]);
  });
  it.each(['/abs', '../up', 'a/../../b', 'a/..', '.git/x', 'a\\b'])('%j is refused', (p) => {
    expect(() => parseGitPath(p)).toThrow(/expected a path inside the repository/);
  });
});
