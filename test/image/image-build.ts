// `npm run image:build`: builds the Dockerfile with buildah on the locally assembled base, pushes
// it to the local cluster's loopback registry (starting the cluster if none runs) and prints the
// pushed reference as the last line of stdout. Progress and timings go to stderr.
//   IMAGE=$(npm run -s image:build | tail -1)
// The layer cache (buildah --layers) and the npm cache mount make a rebuild with no change quick;
// the tag carries the image id, so a changed image is never mistaken for a cached one by a kubelet.
// The bundled charts are checked first (each chart of the app's release plan), as every run reads
// them (src/inputs/chart.ts): an image whose chart lacks a vendored dependency would fail every
// airgapped install, so none is built.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { loadAppCharts } from '../../src/inputs/app-charts.js';
import { resolveInput } from '../../src/inputs/app-input.js';
import { httpRequest } from '../../src/registry/registry-http.js';
import { ensureCluster } from '../cluster/control-plane.js';
import { repoRoot } from '../cluster/paths.js';
import { buildah, buildahStreaming, checkBuildah } from './buildah.js';
import { ensureBaseImage } from './base-image.js';

const LOCAL_IMAGE = 'localhost/helm-installer:build';
const REPOSITORY = 'helm-installer';

export interface BuiltImage {
  /** `127.0.0.1:PORT/helm-installer:<version>-<id>` as pushed */
  reference: string;
  imageId: string;
  /** Sum of the layers: uncompressed (on a node's disk) and compressed (what a pull transfers). */
  bytes: { uncompressed: number; compressed: number };
  seconds: { base: number; build: number; push: number };
}

/** `root`: the build context (the Dockerfile and app/ in it); the checkout by default. */
export async function buildImage(opts: {
  log: (line: string) => void;
  registry?: string;
  quietBuild?: boolean;
  root?: string;
}): Promise<BuiltImage> {
  const { log } = opts;
  const root = opts.root ?? repoRoot();
  // Every chart the image's app installs (each chart of its release plan).
  for (const chart of (await loadAppCharts({ appDir: join(root, 'app') }, resolveInput({ appDir: join(root, 'app') })))
    .charts) {
    log(`chart ${chart.name} ${chart.version}: ${chart.dependencies.length} dependencies, every one vendored`);
  }
  checkBuildah();
  const t0 = Date.now();
  const base = await ensureBaseImage(log);
  const t1 = Date.now();
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version as string;
  const revision =
    (await execa('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, reject: false })).stdout || 'unknown';
  log(`building ${LOCAL_IMAGE} on ${base.name}`);
  const bud = await buildahStreaming(
    [
      'bud',
      '--layers',
      '--pull=false',
      '--format',
      'oci',
      ...proxyCa(),
      '--build-arg',
      `BASE_IMAGE=${base.name}`,
      '--build-arg',
      `VERSION=${version}`,
      '--build-arg',
      `REVISION=${revision}`,
      '-f',
      join(root, 'Dockerfile'),
      '-t',
      LOCAL_IMAGE,
      root,
    ],
    (line) => (opts.quietBuild ? undefined : log(line)),
  );
  if (bud.exitCode !== 0) throw new Error(`buildah bud failed (exit ${bud.exitCode}); its output is above`);
  const t2 = Date.now();
  const imageId = await buildah(['inspect', '--type', 'image', '--format', '{{.FromImageID}}', LOCAL_IMAGE]);
  const uncompressed = layerBytes(await buildah(['inspect', '--type', 'image', '--format', '{{.Manifest}}', imageId]));
  const registry = opts.registry ?? (await ensureCluster({ log, usage: 'keep' })).registry;
  const reference = `${registry}/${REPOSITORY}:${version}-${imageId.replace(/^sha256:/, '').slice(0, 12)}`;
  log(`pushing ${reference}`);
  await pushImage(imageId, reference);
  const t3 = Date.now();
  const compressed = layerBytes(await pushedManifest(reference));
  return {
    reference,
    imageId,
    bytes: { uncompressed, compressed },
    seconds: { base: (t1 - t0) / 1000, build: (t2 - t1) / 1000, push: (t3 - t2) / 1000 },
  };
}

/** Pushes a built image (by id: a concurrent build may move the tag) to a plain-HTTP registry. */
export async function pushImage(imageId: string, reference: string): Promise<void> {
  await buildah(['push', '--tls-verify=false', '--format', 'oci', imageId, `docker://${reference}`]);
}

/**
 * npm ci in the build stages reaches the npm registry; where this machine trusts an extra CA
 * (NODE_EXTRA_CA_CERTS, a TLS-intercepting proxy), the RUN steps get that file and the variable.
 */
function proxyCa(): string[] {
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  if (!ca || !existsSync(ca)) return [];
  return ['--volume', `${ca}:/run/build-ca.crt:ro`, '--build-arg', 'NODE_EXTRA_CA_CERTS=/run/build-ca.crt'];
}

/** Sum of the layer sizes in a manifest (uncompressed in buildah's storage, compressed as pushed). */
function layerBytes(manifest: string): number {
  const parsed = JSON.parse(manifest) as { layers?: { size: number }[] };
  return (parsed.layers ?? []).reduce((sum, l) => sum + l.size, 0);
}

async function pushedManifest(reference: string): Promise<string> {
  const [host, rest] = [reference.slice(0, reference.indexOf('/')), reference.slice(reference.indexOf('/') + 1)];
  const [name, tag] = rest.split(':') as [string, string];
  const response = await httpRequest({
    url: new URL(`http://${host}/v2/${name}/manifests/${tag}`),
    method: 'GET',
    headers: { Accept: 'application/vnd.oci.image.manifest.v1+json' },
    timeoutMs: 10_000,
  });
  if (response.status !== 200)
    throw new Error(`registry ${host}: GET manifest of ${reference}: HTTP ${response.status}`);
  return response.body.toString();
}
