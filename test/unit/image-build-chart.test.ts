// `npm run image:build` refuses a bundled chart whose dependency is not vendored before it
// builds anything (issue 21, item 5): the same exit-3 error every run gives, thrown before
// buildah is even looked for, the base assembled or a layer built (nothing logged).
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/common/errors.js';
import { ExitCode } from '../../src/common/exit-codes.js';
import { buildImage } from '../image/image-build.js';
import { repoRoot, tempDir } from '../helpers.js';

describe('image:build and the bundled chart', () => {
  it('a dependency not in charts/ stops the build before anything is built, naming it', async () => {
    const root = tempDir('image-build-chart');
    const chart = join(root, 'app', 'shop');
    mkdirSync(join(root, 'app'));
    cpSync(join(repoRoot, 'test/fixtures/charts/unvendored-deps'), chart, { recursive: true });
    const logged: string[] = [];
    const err = await buildImage({ log: (line) => logged.push(line), root }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).exitCode).toBe(ExitCode.invalidInput);
    expect((err as InvalidInputError).message).toBe(
      `chart ${chart}: dependency cache 0.3.2 (pinned in Chart.lock) is not vendored: charts/ holds no chart`,
    );
    expect((err as InvalidInputError).hint).toBe(
      `Where the network is reachable, run \`helm dependency build ${chart}\`, then rebuild the installer image: an airgapped install cannot download a dependency.`,
    );
    expect(logged).toEqual([]);
  });
});
