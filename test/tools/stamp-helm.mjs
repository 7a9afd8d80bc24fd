// Writes the version stamp beside each pinned helm (`helm4.version`, `helm3.version`): what the
// binary says of itself and its size, read by src/helm/helm-binary.ts so that no run spawns
// `helm version`. Idempotent; run by install-helm.mjs after extracting, and by the tests.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function stampHelm(binary) {
  const version = execFileSync(binary, ['version', '--short'], {
    encoding: 'utf8',
    env: { ...process.env, HELM_PLUGINS: '/nonexistent' },
  }).trim();
  writeFileSync(`${binary}.version`, `${JSON.stringify({ version, size: statSync(binary).size })}\n`);
}

export function stampPinnedHelms(root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')) {
  for (const name of ['helm4', 'helm3']) {
    const binary = join(root, 'node_modules', '.helm-installer', name);
    if (existsSync(binary)) stampHelm(binary);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) stampPinnedHelms();
