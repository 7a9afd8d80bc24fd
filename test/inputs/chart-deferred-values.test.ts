// loadChart's `deferValues` (install's no-op check needs the chart's name, version and bytes, not
// its defaults): the values.yaml files are read on the first read of `defaultValues`, give the
// same defaults as an eager load, and a bad one is still an exit-3 error naming the file, only
// later. Small charts written here, read by the real loader.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadChart } from '../../src/inputs/chart.js';
import { InvalidInputError } from '../../src/common/errors.js';
import { ExitCode } from '../../src/common/exit-codes.js';
import { tempDir } from '../helpers.js';

function writeChart(values: string): string {
  const dir = join(tempDir('deferred-values'), 'shop');
  mkdirSync(join(dir, 'charts', 'cache', 'templates'), { recursive: true });
  mkdirSync(join(dir, 'templates'), { recursive: true });
  writeFileSync(
    join(dir, 'Chart.yaml'),
    'apiVersion: v2\nname: shop\nversion: 1.2.3\ndependencies:\n  - name: cache\n    version: 0.1.0\n    alias: redis\n',
  );
  writeFileSync(join(dir, 'values.yaml'), values);
  writeFileSync(join(dir, 'charts', 'cache', 'Chart.yaml'), 'apiVersion: v2\nname: cache\nversion: 0.1.0\n');
  writeFileSync(join(dir, 'charts', 'cache', 'values.yaml'), 'image: {repository: redis, tag: "7"}\nport: 6379\n');
  return dir;
}

const caught = (read: () => unknown): unknown => {
  try {
    read();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('loadChart with deferred values', () => {
  it('gives the same defaults as an eager load, subchart defaults under its alias', async () => {
    const chart = writeChart('web: {replicas: 2}\nredis: {port: 6380}\n');
    const expected = { web: { replicas: 2 }, redis: { image: { repository: 'redis', tag: '7' }, port: 6380 } };
    const eager = await loadChart({ chart, appDir: '/nonexistent' });
    const deferred = await loadChart({ chart, appDir: '/nonexistent' }, { deferValues: true });
    expect({ name: deferred.name, version: deferred.version }).toEqual({ name: 'shop', version: '1.2.3' });
    expect(eager.defaultValues).toEqual(expected);
    expect(deferred.defaultValues).toEqual(expected);
    // Kept: the same object on every read.
    expect(deferred.defaultValues).toBe(deferred.defaultValues);
  });

  it('a bad values.yaml fails an eager load, and a deferred one only when its defaults are read, naming the file (exit 3)', async () => {
    const chart = writeChart('web: {replicas: 2\n');
    const valuesFile = join(chart, 'values.yaml');
    const eager = await loadChart({ chart, appDir: '/nonexistent' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(eager).toBeInstanceOf(InvalidInputError);
    expect((eager as InvalidInputError).exitCode).toBe(ExitCode.invalidInput);
    expect((eager as InvalidInputError).file).toBe(valuesFile);

    const deferred = await loadChart({ chart, appDir: '/nonexistent' }, { deferValues: true });
    expect(deferred.name).toBe('shop');
    for (const attempt of [1, 2]) {
      const err = caught(() => deferred.defaultValues);
      expect(err, `read ${attempt}`).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).file).toBe(valuesFile);
      expect((err as InvalidInputError).message).toMatch(
        new RegExp(`^${valuesFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
      );
    }
  });
});
