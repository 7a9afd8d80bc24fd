// The release plan file and its graph (issue 21, items 1 and 2, "Bad input"): what a vendor
// writes, what is refused (file and line, exit 3) and the order the releases get.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/common/errors.js';
import { listedAfterFailure, pruneOrder } from '../../src/releases/inventory.js';
import { parsePlan, readPlanFile } from '../../src/inputs/plan-file.js';
import { planGraph } from '../../src/inputs/plan-graph.js';
import { planExitCode, planSummary } from '../../src/releases/plan-summary.js';
import { shareValues } from '../../src/inputs/app-input.js';
import { HelmOperationError, PreflightError, TransientError } from '../../src/common/errors.js';
import { SecretRegistry } from '../../src/common/secrets.js';
import { repoRoot, tempDir } from '../helpers.js';

const fixtureApp = join(repoRoot, 'test', 'fixtures', 'release-plan');

/** An app directory with two chart directories and a plan file of the given text. */
function app(plan: string): { dir: string; file: string } {
  const dir = tempDir('plan-unit');
  for (const c of ['a', 'b']) mkdirSync(join(dir, 'charts', c), { recursive: true });
  const file = join(dir, 'releases.yaml');
  writeFileSync(file, plan);
  return { dir, file };
}

const head = 'apiVersion: helm-installer/v1\nkind: ReleasePlan\napp: shop\nreleases:\n';

function refusal(plan: string, env: NodeJS.ProcessEnv = {}): { message: string; line?: number; exitCode: number } {
  const { dir, file } = app(plan);
  try {
    planGraph(parsePlan(plan, file, dir), 'shop', env);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    const e = error as InvalidInputError;
    return { message: e.message.replace(file, 'FILE').replace(dir, 'APP'), line: e.line, exitCode: e.exitCode };
  }
  throw new Error('the plan was accepted');
}

describe('the release plan file', () => {
  it('reads the test fixture: every field resolved against the app directory', () => {
    const plan = readPlanFile(join(fixtureApp, 'releases.yaml'), fixtureApp);
    expect(plan.app).toBe('plan-test');
    expect(plan.releases.map((r) => [r.name, r.chart, r.values, r.dependsOn, r.enabled])).toEqual([
      ['operator', join(fixtureApp, 'charts/operator'), [], [], true],
      ['web', join(fixtureApp, 'charts/part'), [join(fixtureApp, 'values/web.yaml')], ['operator'], true],
      ['report', join(fixtureApp, 'charts/part'), [], ['web'], true],
      ['cache', join(fixtureApp, 'charts/part'), [], [], { env: 'PLAN_TEST_CACHE', default: true }],
    ]);
  });

  it('refuses malformed files with the file and the line, exit 3', () => {
    expect(refusal(`${head}  - name: a\n    chart: charts/a\n    dependson: [b]\n`)).toEqual({
      message:
        'release plan FILE line 7: unknown key "dependson" (known: name, namespace, chart, values, dependsOn, enabled, timeout)',
      line: 7,
      exitCode: 3,
    });
    expect(refusal(`${head}  - name: a\n    chart: ../elsewhere\n`).message).toBe(
      'release plan FILE line 6: "../elsewhere" is outside the app directory APP',
    );
    expect(refusal(`${head}  - name: a\n    chart: charts/missing\n`).message).toBe(
      'release plan FILE line 6: "charts/missing" does not exist under the app directory APP',
    );
    expect(refusal(`${head}  - name: A_b\n    chart: charts/a\n`).message).toMatch(
      /^release plan FILE line 5: release name "A_b": expected a release name/,
    );
    expect(refusal(`${head}  - name: a\n    chart: charts/a\n    timeout: soon\n`).message).toMatch(
      /^release plan FILE line 7: timeout "soon": expected a duration/,
    );
    expect(refusal('apiVersion: helm-installer/v2\nkind: ReleasePlan\napp: shop\nreleases: []\n').message).toBe(
      'release plan FILE line 1: apiVersion must be helm-installer/v1',
    );
    expect(refusal(`${head}  - name: a\n    chart: [x\n`).message).toMatch(
      /^release plan FILE line \d+: not valid YAML: /,
    );
    expect(refusal(`${head}  - name: a\n    chart: charts/a\n    enabled: sometimes\n`).message).toBe(
      'release plan FILE line 7: "enabled" is true, false or {env: VARIABLE, default: true|false}',
    );
  });

  it('refuses bad graphs: a cycle with its path, an unknown dependency, a duplicate, an ambiguous name', () => {
    const cycle = `${head}  - {name: a, chart: charts/a, dependsOn: [c]}\n  - {name: b, chart: charts/b, dependsOn: [a]}\n  - {name: c, chart: charts/b, dependsOn: [b]}\n`;
    expect(refusal(cycle)).toEqual({
      message: 'release plan FILE line 5: dependency cycle: a -> c -> b -> a',
      line: 5,
      exitCode: 3,
    });
    expect(refusal(`${head}  - {name: a, chart: charts/a, dependsOn: [db]}\n`).message).toBe(
      'release plan FILE line 5: release a depends on db, which is not in the plan',
    );
    expect(refusal(`${head}  - {name: a, chart: charts/a, dependsOn: [a]}\n`).message).toBe(
      'release plan FILE line 5: release a depends on itself',
    );
    expect(
      refusal(`${head}  - {name: a, chart: charts/a}\n  - {name: a, chart: charts/b, namespace: shop}\n`).message,
    ).toBe('release plan FILE line 6: two releases named a in namespace shop (lines 5 and 6)');
    const twoNamespaces = `${head}  - {name: a, chart: charts/a, namespace: x}\n  - {name: a, chart: charts/a, namespace: y}\n  - {name: b, chart: charts/b, dependsOn: [a]}\n`;
    expect(refusal(twoNamespaces).message).toBe(
      'release plan FILE line 7: release b depends on a, which names releases in 2 namespaces: write namespace/name',
    );
    expect(
      refusal(`${head}  - name: a\n    chart: charts/a\n    enabled: {env: ON}\n`, { ON: 'perhaps' }).message,
    ).toMatch(/^release plan FILE line 5: release a is enabled by ON="perhaps": expected true or false/);
  });

  it('orders each release after its dependencies, the plan order otherwise; a disabled one is set aside', () => {
    const text = `${head}  - {name: web, chart: charts/a, dependsOn: [db, cache]}\n  - {name: cache, chart: charts/b, enabled: {env: CACHE, default: true}}\n  - {name: db, chart: charts/b, namespace: data}\n  - {name: jobs, chart: charts/a, dependsOn: [data/db]}\n`;
    const { dir, file } = app(text);
    const on = planGraph(parsePlan(text, file, dir), 'shop', {});
    expect(on.enabled.map((r) => [r.key, r.deps])).toEqual([
      ['shop/cache', []],
      ['data/db', []],
      ['shop/web', ['data/db', 'shop/cache']],
      ['shop/jobs', ['data/db']],
    ]);
    const off = planGraph(parsePlan(text, file, dir), 'shop', { CACHE: '0' });
    expect(off.enabled.map((r) => [r.key, r.deps])).toEqual([
      ['data/db', []],
      ['shop/web', ['data/db']],
      ['shop/jobs', ['data/db']],
    ]);
    expect(off.disabled.map((r) => r.key)).toEqual(['shop/cache']);
    expect(off.ignoredDeps).toEqual([{ release: 'shop/web', dependsOn: 'shop/cache' }]);
  });

  it('the JSON schema accepts the fixture and refuses what the reader refuses', () => {
    const schema = JSON.parse(readFileSync(join(repoRoot, 'src', 'releases', 'release-plan.schema.json'), 'utf8'));
    const validate = new Ajv2020({ allErrors: true }).compile(schema);
    expect(
      validate(parse(readFileSync(join(fixtureApp, 'releases.yaml'), 'utf8'))),
      JSON.stringify(validate.errors),
    ).toBe(true);
    for (const bad of [
      {
        apiVersion: 'helm-installer/v1',
        kind: 'ReleasePlan',
        app: 'shop',
        releases: [{ name: 'a', chart: 'c', dependson: [] }],
      },
      {
        apiVersion: 'helm-installer/v1',
        kind: 'ReleasePlan',
        app: 'shop',
        releases: [{ name: 'a', chart: 'c', enabled: 'sometimes' }],
      },
      { apiVersion: 'helm-installer/v1', kind: 'ReleasePlan', app: 'shop', releases: [] },
      { apiVersion: 'helm-installer/v1', kind: 'ReleasePlan', releases: [{ name: 'a', chart: 'c' }] },
    ]) {
      expect(validate(bad)).toBe(false);
    }
  });
});

describe('customer values shared out by release name', () => {
  it('gives <release>.yaml and --set <release>:... to that release only', () => {
    const dir = tempDir('plan-values');
    for (const f of ['web.yaml', 'cache.yml']) writeFileSync(join(dir, f), 'a: 1\n');
    const shared = shareValues(
      {
        values: [dir],
        sets: [
          { kind: 'set', expression: 'web:replicas=3' },
          { kind: 'set-string', expression: 'cache:tag=1.0' },
        ],
      },
      ['web', 'cache', 'db'],
    );
    expect(Object.fromEntries(shared.files)).toEqual({
      web: [join(dir, 'web.yaml')],
      cache: [join(dir, 'cache.yml')],
      db: [],
    });
    expect(Object.fromEntries(shared.sets)).toEqual({
      web: [{ kind: 'set', expression: 'replicas=3' }],
      cache: [{ kind: 'set-string', expression: 'tag=1.0' }],
      db: [],
    });
  });

  it('refuses a values file or a --set that names no release (exit 3)', () => {
    const dir = tempDir('plan-values');
    writeFileSync(join(dir, 'values.yaml'), 'a: 1\n');
    expect(() => shareValues({ values: [dir], sets: [] }, ['web'])).toThrow(
      `customer values file ${join(dir, 'values.yaml')} names no release of the plan (releases: web)`,
    );
    expect(() => shareValues({ values: [], sets: [{ kind: 'set', expression: 'replicas=3' }] }, ['web'])).toThrow(
      '--set replicas=... names no release of the plan (releases: web)',
    );
  });
});

describe('pruning and the summary', () => {
  it('uninstalls dependents before what they depend on', () => {
    const inventory = [
      { namespace: 's', name: 'db', deps: [] },
      { namespace: 's', name: 'web', deps: ['s/db'] },
      { namespace: 's', name: 'jobs', deps: ['s/web', 's/db'] },
      { namespace: 's', name: 'kept', deps: [] },
    ];
    expect(pruneOrder(inventory, new Set(['s/kept'])).map((e) => e.name)).toEqual(['jobs', 'web', 'db']);
  });

  it('after a failed run the inventory lists the plan and what it dropped, not a release someone else made that the plan now names', () => {
    const entry = (name: string, deps: string[] = []) => ({ namespace: 's', name, deps });
    const previous = [entry('web'), entry('old'), entry('taken')];
    // theirs: named by the edited plan, never the app's; taken: the app's once, someone else's now (kept: prune asks whose it is).
    const installed = [entry('web'), entry('new', ['s/web']), entry('theirs', ['s/web']), entry('taken')];
    expect(listedAfterFailure(installed, previous, new Set(['s/theirs', 's/taken'])).map((e) => e.name)).toEqual([
      'web',
      'new',
      'taken',
      'old',
    ]);
  });

  it('exits with the most severe code: preflight over helm over transient', () => {
    const failed = (error: Error & { exitCode: number }) => ({
      key: 'x',
      status: 'failed' as const,
      error: error as never,
      seconds: 1,
    });
    expect(planExitCode([failed(new TransientError('t')), failed(new HelmOperationError('h'))])).toBe(4);
    expect(planExitCode([failed(new HelmOperationError('h')), failed(new PreflightError('p'))])).toBe(6);
    expect(planExitCode([{ key: 'x', status: 'not attempted', because: 'y' }])).toBe(0);
  });

  it('names every release; a long one stays within the termination limits', () => {
    const { text, exitCode } = planSummary(
      [
        { key: 's/db', status: 'done', action: 'installed', revision: 1, seconds: 2 },
        {
          key: 's/web',
          status: 'failed',
          error: new HelmOperationError('install/upgrade of release web failed: timed out\nmore', { hint: 'Look.' }),
          seconds: 30,
        },
        { key: 's/jobs', status: 'not attempted', because: 'its dependency s/web was not deployed' },
        { key: 's/old', status: 'pruned', result: 'uninstalled' },
      ],
      31,
      new SecretRegistry(),
    );
    expect(exitCode).toBe(4);
    expect(text).toBe(
      [
        'helm-installer FAILED (exit 4: helm operation failed): 1 of 3 releases done, 1 failed, 1 not attempted, 1 removed from the plan',
        '  s/db: installed, revision 1, 2.0s',
        '  s/web: FAILED (exit 4) after 30.0s: install/upgrade of release web failed: timed out',
        '    next: Look.',
        '  s/jobs: not attempted (its dependency s/web was not deployed)',
        '  s/old: uninstalled (no longer in the plan)',
      ].join('\n'),
    );
    const many = Array.from({ length: 50 }, (_, i) => ({
      key: `namespace-${i}/release-with-a-long-name-${i}`,
      status: 'done' as const,
      action: 'upgraded',
      revision: 12,
      seconds: 100,
    }));
    const long = planSummary(many, 1, new SecretRegistry()).text;
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(2000);
    expect(long.split('\n').length).toBeLessThanOrEqual(40);
    expect(long).toMatch(/\.\.\. \(more in the log above\)$/m);
  });
});
