// The vendored-dependency check (issue 21, item 5) on chart trees built here in memory: a
// dependency missing from charts/, present at another version than Chart.lock pins or outside
// the Chart.yaml range, under an alias, in a nested subchart; the messages written by hand.
import { describe, expect, it } from 'vitest';
import {
  checkDependencies,
  offPinWarning,
  refuseOffPin,
  requireVendoredDependencies,
} from '../../src/inputs/chart-dependencies.js';
import type { DependencyFiles, LoadedChart } from '../../src/inputs/chart-subcharts.js';
import { InvalidInputError } from '../../src/common/errors.js';
import { ExitCode } from '../../src/common/exit-codes.js';

const chart = (
  dir: string,
  meta: Record<string, unknown>,
  subcharts: LoadedChart[] = [],
  dependencyFiles: DependencyFiles = {},
): LoadedChart => ({
  chartFile: `${dir}/Chart.yaml`,
  meta,
  values: {},
  subcharts,
  dependencyFiles,
});
const lock = (dir: string, ...pins: [string, string][]): DependencyFiles => ({
  'Chart.lock': {
    file: `${dir}/Chart.lock`,
    data: {
      dependencies: pins.map(([name, version]) => ({ name, version, repository: 'https://charts.example.invalid' })),
    },
  },
});
const cache = (version: string) => chart(`/app/shop/charts/cache`, { name: 'cache', version });
const shop = (dependencies: unknown[], subcharts: LoadedChart[], files: DependencyFiles = {}) =>
  chart('/app/shop', { name: 'shop', version: '1.0.0', dependencies }, subcharts, files);

function refusal(tree: LoadedChart): InvalidInputError {
  try {
    requireVendoredDependencies(tree);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).exitCode).toBe(ExitCode.invalidInput);
    return err as InvalidInputError;
  }
  throw new Error('the chart was not refused');
}

describe('vendored dependencies', () => {
  it('a dependency charts/ lacks is refused, naming the chart, the dependency, the version and what charts/ holds', () => {
    const err = refusal(
      shop(
        [
          { name: 'cache', version: '0.3.2' },
          { name: 'queue', version: '2.0.0', repository: 'https://charts.example.invalid' },
        ],
        [cache('0.3.2')],
      ),
    );
    expect(err.message).toBe('chart /app/shop: dependency queue 2.0.0 is not vendored: charts/ holds cache 0.3.2');
    expect(err.hint).toBe(
      'Where the network is reachable, run `helm dependency build /app/shop`, then rebuild the installer image: an airgapped install cannot download a dependency.',
    );
  });

  it('a condition that disables it does not matter: helm requires every listed dependency', () => {
    expect(refusal(shop([{ name: 'cache', version: '0.3.2', condition: 'cache.enabled' }], [])).message).toBe(
      'chart /app/shop: dependency cache 0.3.2 is not vendored: charts/ holds no chart',
    );
  });

  it("a vendored version other than the one Chart.lock pins but inside the Chart.yaml range: marked, refused only by refuseOffPin (the vendor's CI)", () => {
    const tree = shop([{ name: 'cache', version: '~0.3.0' }], [cache('0.3.3')], lock('/app/shop', ['cache', '0.3.2']));
    const checks = requireVendoredDependencies(tree);
    expect(checks).toEqual([
      {
        chart: '/app/shop',
        name: 'cache',
        alias: undefined,
        range: '~0.3.0',
        listedIn: 'Chart.yaml',
        pinned: '0.3.2',
        pinnedIn: 'Chart.lock',
        vendored: ['0.3.3'],
        ok: false,
        offPin: true,
      },
    ]);
    expect(offPinWarning(checks[0]!)).toBe(
      "chart /app/shop: dependency cache is 0.3.3 in charts/, but Chart.lock pins 0.3.2: installed as it is (it is within the range ~0.3.0 Chart.yaml asks for); the vendor's CI (helm-installer check-chart) refuses this chart until its charts/ matches the lock",
    );
    let err: unknown;
    try {
      refuseOffPin(checks);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).message).toBe(
      'chart /app/shop: dependency cache is 0.3.3 in charts/, but Chart.lock pins 0.3.2',
    );
    expect(() =>
      refuseOffPin(
        requireVendoredDependencies(
          shop([{ name: 'cache', version: '~0.3.0' }], [cache('0.3.2')], lock('/app/shop', ['cache', '0.3.2'])),
        ),
      ),
    ).not.toThrow();
  });

  it('off the pin in a subchart of a subchart: marked there; off the pin and outside the range: refused everywhere', () => {
    const lib = chart('/app/shop/charts/mid/charts/lib', { name: 'lib', version: '2.2.4' });
    const mid = chart(
      '/app/shop/charts/mid',
      { name: 'mid', version: '1.0.0', dependencies: [{ name: 'lib', version: '2.2.x' }] },
      [lib],
      lock('/app/shop/charts/mid', ['lib', '2.2.3']),
    );
    const checks = requireVendoredDependencies(shop([{ name: 'mid', version: '1.0.0' }], [mid]));
    expect(checks.map((c) => [c.chart, c.name, c.ok, c.offPin])).toEqual([
      ['/app/shop', 'mid', true, undefined],
      ['/app/shop/charts/mid', 'lib', false, true],
    ]);
    const outside = chart(
      '/app/shop/charts/mid',
      { name: 'mid', version: '1.0.0', dependencies: [{ name: 'lib', version: '2.3.x' }] },
      [lib],
      lock('/app/shop/charts/mid', ['lib', '2.3.0']),
    );
    expect(refusal(shop([{ name: 'mid', version: '1.0.0' }], [outside])).message).toBe(
      'chart /app/shop/charts/mid: dependency lib is 2.2.4 in charts/, but Chart.lock pins 2.3.0',
    );
  });

  it('the pinned version passes; with no lock, a version within the range passes and one outside it is refused', () => {
    expect(
      requireVendoredDependencies(
        shop([{ name: 'cache', version: '~0.3.0' }], [cache('0.3.2')], lock('/app/shop', ['cache', '0.3.2'])),
      ),
    ).toEqual([
      {
        chart: '/app/shop',
        name: 'cache',
        alias: undefined,
        range: '~0.3.0',
        listedIn: 'Chart.yaml',
        pinned: '0.3.2',
        pinnedIn: 'Chart.lock',
        vendored: ['0.3.2'],
        ok: true,
      },
    ]);
    expect(checkDependencies(shop([{ name: 'cache', version: '>=0.3.0, <0.4.0' }], [cache('0.3.9')]))[0]!.ok).toBe(
      true,
    );
    expect(refusal(shop([{ name: 'cache', version: '^0.4.0' }], [cache('0.3.9')])).message).toBe(
      'chart /app/shop: dependency cache is 0.3.9 in charts/, but Chart.yaml asks for ^0.4.0',
    );
  });

  it('a stale lock (the pin outside the range Chart.yaml now asks for) is refused: helm would drop the alias and condition', () => {
    const tree = shop([{ name: 'cache', version: '~0.4.0' }], [cache('0.3.2')], lock('/app/shop', ['cache', '0.3.2']));
    expect(refusal(tree).message).toBe(
      'chart /app/shop: dependency cache is 0.3.2 in charts/, but Chart.yaml asks for ~0.4.0',
    );
  });

  it('a subchart counts by the name in its own Chart.yaml; one chart aliased twice is found for both', () => {
    const renamed = chart('/app/shop/charts/redis-copy', { name: 'cache', version: '0.3.2' });
    const checks = requireVendoredDependencies(
      shop(
        [
          { name: 'cache', version: '0.3.2', alias: 'sessions' },
          { name: 'cache', version: '0.3.2', alias: 'queue' },
        ],
        [renamed],
      ),
    );
    expect(checks.map((c) => [c.alias, c.ok])).toEqual([
      ['sessions', true],
      ['queue', true],
    ]);
    expect(refusal(shop([{ name: 'sessions', version: '0.3.2' }], [renamed])).message).toBe(
      'chart /app/shop: dependency sessions 0.3.2 is not vendored: charts/ holds cache 0.3.2',
    );
  });

  it("a nested subchart's own dependencies are checked too, the message naming that subchart", () => {
    const mid = chart('/app/shop/charts/mid', {
      name: 'mid',
      version: '1.0.0',
      dependencies: [{ name: 'leaf', version: '1.0.0' }],
    });
    const err = refusal(shop([{ name: 'mid', version: '1.0.0' }], [mid]));
    expect(err.message).toBe(
      'chart /app/shop/charts/mid: dependency leaf 1.0.0 is not vendored: charts/ holds no chart',
    );
    expect(err.hint).toContain('run `helm dependency build /app/shop/charts/mid`');
  });

  it('inside an archive the hint says to rebuild the archive', () => {
    const inner = chart('shop.tgz:charts/mid', {
      name: 'mid',
      version: '1.0.0',
      dependencies: [{ name: 'leaf', version: '1.0.0' }],
    });
    const root = chart(
      'shop.tgz:',
      { name: 'shop', version: '1.0.0', dependencies: [{ name: 'mid', version: '1.0.0' }] },
      [inner],
    );
    root.chartFile = 'shop.tgz:Chart.yaml';
    const err = refusal(root);
    expect(err.message).toBe(
      'chart shop.tgz:charts/mid: dependency leaf 1.0.0 is not vendored: charts/ holds no chart',
    );
    expect(err.hint).toBe(
      'Where the network is reachable, rebuild shop.tgz (`helm dependency build` on its chart, then `helm package`), then rebuild the installer image: an airgapped install cannot download a dependency.',
    );
  });

  it('every problem is named, one per line', () => {
    const err = refusal(
      shop([{ name: 'a', version: '1.0.0' }, { name: 'cache', version: '0.3.2' }, { name: 'b' }], [cache('0.3.1')]),
    );
    expect(err.message.split('\n')).toEqual([
      'chart /app/shop: dependency a 1.0.0 is not vendored: charts/ holds cache 0.3.1',
      'chart /app/shop: dependency cache is 0.3.1 in charts/, but Chart.yaml asks for 0.3.2',
      'chart /app/shop: dependency b (any version) is not vendored: charts/ holds cache 0.3.1',
    ]);
  });

  it("an old chart's requirements.yaml and requirements.lock are read in place of Chart.yaml's list, as helm does", () => {
    const files: DependencyFiles = {
      'requirements.yaml': {
        file: '/app/shop/requirements.yaml',
        data: { dependencies: [{ name: 'cache', version: '0.3.x' }] },
      },
      'requirements.lock': {
        file: '/app/shop/requirements.lock',
        data: { dependencies: [{ name: 'cache', version: '0.3.2' }] },
      },
    };
    const tree = chart('/app/shop', { apiVersion: 'v1', name: 'shop', version: '1.0.0' }, [cache('0.3.5')], files);
    expect(() => refuseOffPin(requireVendoredDependencies(tree))).toThrow(
      'chart /app/shop: dependency cache is 0.3.5 in charts/, but requirements.lock pins 0.3.2',
    );
  });

  it('a range only helm reads (Masterminds `!=`) is not held against the chart; the name still is', () => {
    const [check] = requireVendoredDependencies(shop([{ name: 'cache', version: '!=0.3.1' }], [cache('0.3.2')]));
    expect(check).toMatchObject({ ok: true, rangeUnread: true });
    expect(refusal(shop([{ name: 'cache', version: '!=0.3.1' }], [])).message).toBe(
      'chart /app/shop: dependency cache !=0.3.1 is not vendored: charts/ holds no chart',
    );
  });

  it('a dependency without a name is exit 3 naming the file', () => {
    expect(refusal(shop([{ version: '1.0.0' }], [])).message).toBe('/app/shop/Chart.yaml: dependency 1 has no name');
  });
});
