// The drift ignore rules as written in the option/env value and in a YAML file: good rules,
// malformed ones (exit 2 naming the option, the env var, and for a file its line), and which
// objects a rule applies to.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/common/errors.js';
import { ignoredPaths, parseIgnoreRules, ruleApplies } from '../../src/drift/ignore-rules.js';

const env = { option: '--drift-ignore', env: 'HELM_INSTALLER_DRIFT_IGNORE' };
const file = { option: '--drift-ignore-file', env: 'HELM_INSTALLER_DRIFT_IGNORE_FILE', file: '/cfg/ignore.yaml' };
const TEXT_HINT =
  'In --drift-ignore (HELM_INSTALLER_DRIFT_IGNORE), write [Kind[/name]:]/json/pointer[,/other/pointer], rules separated by ";", e.g. "Deployment/web:/spec/replicas".';

function failure(text: string, origin: typeof env | typeof file): UsageError {
  try {
    parseIgnoreRules(text, origin);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    return error as UsageError;
  }
  throw new Error(`no error for ${JSON.stringify(text)}`);
}

describe('parseIgnoreRules, the option and env form', () => {
  it('reads paths, targets, several rules and blank ones', () => {
    expect(parseIgnoreRules('/spec/replicas', env)).toEqual([{ paths: ['/spec/replicas'] }]);
    expect(
      parseIgnoreRules(' Deployment/web:/spec/replicas, /metadata/annotations/example.com~1x ;\n/a ; ', env),
    ).toEqual([
      {
        paths: ['/spec/replicas', '/metadata/annotations/example.com~1x'],
        target: { kind: 'Deployment', name: 'web' },
      },
      { paths: ['/a'] },
    ]);
    expect(parseIgnoreRules('ConfigMap:/data; Deployment/shop/web:/spec/replicas; */web:/x', env)).toEqual([
      { paths: ['/data'], target: { kind: 'ConfigMap' } },
      { paths: ['/spec/replicas'], target: { kind: 'Deployment', namespace: 'shop', name: 'web' } },
      { paths: ['/x'], target: { kind: '*', name: 'web' } },
    ]);
    expect(parseIgnoreRules('', env)).toEqual([]);
  });

  it('refuses malformed rules, naming the option and the env var', () => {
    const cases: [string, string][] = [
      ['Deployment/web', 'invalid drift ignore rule "Deployment/web": no path (a path starts with "/")'],
      [
        'Deployment/web:spec/replicas',
        'invalid drift ignore rule "Deployment/web:spec/replicas": path "spec/replicas" is not a JSON pointer (it starts with "/", e.g. /spec/replicas)',
      ],
      [
        'Deploy-ment/web:/a',
        'invalid drift ignore rule "Deploy-ment/web:/a": "Deploy-ment" is not a kind (e.g. Deployment, or * for any)',
      ],
      [
        'Deployment/Web:/a',
        'invalid drift ignore rule "Deployment/Web:/a": "Web" is not a name (lowercase letters, digits, "-" and ".", or * for any)',
      ],
      ['a/b/c/d:/x', 'invalid drift ignore rule "a/b/c/d:/x": target "a/b/c/d" has more than Kind/namespace/name'],
      ['/a~2b', 'invalid drift ignore rule "/a~2b": path "/a~2b" has a "~" that is not ~0 ("~") or ~1 ("/")'],
      ['/', 'invalid drift ignore rule "/": path "/" names no field'],
      ['Deployment:/a,', 'invalid drift ignore rule "Deployment:/a,": an empty path'],
    ];
    for (const [text, why] of cases) {
      const error = failure(text, env);
      expect(error.message).toBe(`--drift-ignore (HELM_INSTALLER_DRIFT_IGNORE): ${why}`);
      expect(error.hint).toBe(TEXT_HINT);
    }
  });
});

describe('parseIgnoreRules, the YAML file form', () => {
  it('reads a list of rules; an empty file is none', () => {
    const text = [
      '- paths: [/spec/replicas]',
      '  target: {kind: Deployment, name: web}',
      '- paths:',
      '    - /metadata/annotations/example.com~1note',
      '',
    ].join('\n');
    expect(parseIgnoreRules(text, file)).toEqual([
      { paths: ['/spec/replicas'], target: { kind: 'Deployment', name: 'web' } },
      { paths: ['/metadata/annotations/example.com~1note'] },
    ]);
    expect(parseIgnoreRules('', file)).toEqual([]);
    expect(parseIgnoreRules('# nothing yet\n', file)).toEqual([]);
  });

  it('refuses malformed files, naming the file and line', () => {
    const cases: [string, number, string][] = [
      ['- paths: [/a]\n- path: [/b]\n', 2, 'unknown key "path" in a rule (it has "paths" and "target")'],
      ['- paths: [spec]\n', 1, 'path "spec" is not a JSON pointer (it starts with "/", e.g. /spec/replicas)'],
      [
        '- paths: [/a]\n  target: {kind: Deployment, nam: x}\n',
        2,
        'unknown key "nam" in "target" (it has kind, name and namespace)',
      ],
      ['a: b\n', 1, 'the file is not a list of rules'],
      ['- paths: []\n', 1, 'a rule needs "paths", a list of JSON pointers'],
      ['- target: {kind: X}\n  paths:\n    - /ok\n    - 3\n', 4, 'each path is a string JSON pointer'],
      ['- paths: [/a]\n  target: {kind: Deploy-ment}\n', 2, 'target kind "Deploy-ment" is not a kind'],
    ];
    for (const [text, line, why] of cases) {
      const error = failure(text, file);
      expect(error.message).toBe(
        `--drift-ignore-file (HELM_INSTALLER_DRIFT_IGNORE_FILE): /cfg/ignore.yaml line ${line}: ${why}`,
      );
      expect(error.file).toBe('/cfg/ignore.yaml');
      expect(error.line).toBe(line);
    }
    expect(failure('- paths: [/a\n', file).message).toMatch(
      /^--drift-ignore-file \(HELM_INSTALLER_DRIFT_IGNORE_FILE\): \/cfg\/ignore.yaml line 2: not valid YAML: /,
    );
  });
});

describe('which objects a rule applies to', () => {
  const web = { kind: 'Deployment', name: 'web', namespace: 'shop' };
  it('without a target: every object; with one: its kind (any case), name and namespace', () => {
    expect(ruleApplies({ paths: ['/a'] }, web)).toBe(true);
    expect(ruleApplies({ paths: ['/a'], target: { kind: 'deployment' } }, web)).toBe(true);
    expect(ruleApplies({ paths: ['/a'], target: { kind: 'Deployment', name: 'api' } }, web)).toBe(false);
    expect(ruleApplies({ paths: ['/a'], target: { kind: '*', name: 'web', namespace: 'shop' } }, web)).toBe(true);
    expect(ruleApplies({ paths: ['/a'], target: { namespace: 'other' } }, web)).toBe(false);
    expect(ruleApplies({ paths: ['/a'], target: { kind: 'StatefulSet' } }, web)).toBe(false);
  });
  it('collects the paths of every rule that applies', () => {
    const rules = parseIgnoreRules('/metadata/annotations/a; Deployment/web:/spec/replicas; Service:/spec/ports', env);
    expect(ignoredPaths(rules, web)).toEqual(['/metadata/annotations/a', '/spec/replicas']);
  });
});
