// Stage "images": everything --registry (and --image-pull-secret, --image-path) changes, for one
// run: a values layer of registry hints for charts that follow the common conventions, the
// post-renderer that rewrites every image (the guarantee), and the registry preflight.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChartInfo } from './chart.js';
import type { CommonOptions } from './config.js';
import { type InstallerError, InvalidInputError, PreflightError, UsageError } from './errors.js';
import type { HelmClient } from './helm/helm-client.js';
import type { ValuesArguments } from './helm/helm-args.js';
import { parseRegistryAddress, rewriteImageReference, type LocalRegistry } from './images/image-reference.js';
import { collectImages, type ExtraImagePath } from './images/manifest-images.js';
import { postRenderFailure } from './images/post-render-run.js';
import { preparePostRenderer } from './images/post-renderer-setup.js';
import { checkImagesExist } from './images/registry-preflight.js';
import { buildValuesHints } from './images/values-hints.js';
import type { Logger } from './logger.js';
import { MiB, readInputFile } from './read-input.js';
import type { SecretRegistry } from './secrets.js';

export interface PreflightSettings {
  pullSecretFile?: string;
  caFile?: string;
  /** The credentials read from the pull secret file are registered here, to be masked. */
  secrets?: SecretRegistry;
}

export interface AirgapSetup {
  registry?: LocalRegistry;
  extraPaths: ExtraImagePath[];
  /** Generated values layers, placed above the customer's files and below --set. */
  generated: { file: string; label: string }[];
  postRendererArgs: string[];
  env: Record<string, string>;
  /** The post-renderer's own failure, when it reported one (see post-render-run.ts). */
  postRenderFailure?: () => Promise<InstallerError | undefined>;
  /** Checks that every image of the rendered manifests is in the local registry. */
  preflight?: (renderedManifests: string, logger: Logger, settings: PreflightSettings) => Promise<void>;
}

/** `Kind:path` or `group/version/Kind:path` (README), e.g. `Promotion:spec.image`. */
export function parseImagePath(spec: string): ExtraImagePath {
  const m = /^(?:([^:]+)\/)?([A-Za-z][A-Za-z0-9]*):([A-Za-z0-9_.\-[\]*]+)$/.exec(spec.trim());
  if (!m) {
    throw new UsageError(`invalid --image-path "${spec}": expected Kind:path, e.g. Promotion:spec.image or Workflow:spec.templates[].container.image`, {
      key: 'image-path',
    });
  }
  return { kind: m[2]!, path: m[3]!, ...(m[1] ? { apiVersion: m[1] } : {}) };
}

export async function prepareAirgap(
  o: CommonOptions,
  chart: ChartInfo,
  helm: HelmClient,
  userValues: ValuesArguments,
  workDir: string,
): Promise<AirgapSetup> {
  const extraPaths = o.imagePaths.map(parseImagePath);
  const registry = o.registry ? parseRegistryAddress(o.registry) : undefined;
  if (!registry && !o.imagePullSecret) return { extraPaths, generated: [], postRendererArgs: [], env: {} };

  const generated: AirgapSetup['generated'] = [];
  if (registry) {
    // Hints follow the values the chart will really see (a vendor layer may have moved an image).
    const effective = mergeForHints(chart.defaultValues, await helm.mergedValues(userValues));
    const hints = buildValuesHints(effective, registry);
    if (Object.keys(hints).length > 0) {
      // JSON is YAML that go-yaml reads without dialect surprises.
      const file = join(workDir, 'registry-hints.json');
      await writeFile(file, JSON.stringify(hints, null, 2));
      generated.push({ file, label: 'registry hints' });
    }
  }
  const postRenderer = await preparePostRenderer({
    workDir,
    plan: { registry, extraPaths, imagePullSecret: o.imagePullSecret },
    helmMajor: helm.major,
  });
  return {
    registry,
    extraPaths,
    generated,
    postRendererArgs: postRenderer.helmArgs,
    env: postRenderer.env,
    postRenderFailure: () => postRenderFailure(postRenderer.reportFile),
    preflight: registry ? (manifests, logger, settings) => checkRegistry(manifests, registry, extraPaths, logger, settings) : undefined,
  };
}

async function checkRegistry(
  manifests: string,
  registry: LocalRegistry,
  extraPaths: ExtraImagePath[],
  logger: Logger,
  settings: PreflightSettings,
): Promise<void> {
  // Rewriting again is a no-op for images the post-renderer already moved; it also covers hooks,
  // which helm 3 does not post-render.
  const images = [...new Set(collectImages(manifests, extraPaths).map((o) => rewriteImageReference(o.image, registry)))].sort();
  const dockerConfigJson = settings.pullSecretFile ? readPullSecret(settings.pullSecretFile, settings.secrets) : undefined;
  const result = await checkImagesExist(images, { dockerConfigJson, caFile: settings.caFile });
  logger.info({ registry: registry.address, present: result.present.length, missing: result.missing.length }, 'registry preflight');
  if (result.missing.length > 0) {
    throw new PreflightError(
      [
        `${result.missing.length} of ${images.length} images are missing from the registry ${registry.address}:`,
        ...result.missing.map((m) => `  ${m.image} (${m.reason})`),
      ].join('\n'),
      { hint: 'Push the airgap bundle to the registry (KOTS does on upload), or fix --registry; --skip-preflight skips this check.' },
    );
  }
}

const PULL_SECRET_HINT = 'Mount the pull secret (its .dockerconfigjson key) at that path, or unset --pull-secret-file (HELM_INSTALLER_PULL_SECRET_FILE).';

function readPullSecret(file: string, secrets: SecretRegistry | undefined): string {
  let text: string;
  try {
    text = readInputFile(file, { what: 'pull secret file', maxBytes: MiB, hint: PULL_SECRET_HINT });
  } catch (err) {
    if (err instanceof InvalidInputError) throw err;
    throw new InvalidInputError(`cannot read the pull secret file ${file}: ${(err as Error).message}`, { file, hint: PULL_SECRET_HINT });
  }
  if (secrets) registerPullSecret(text, secrets);
  return text;
}

/** Every credential in a .dockerconfigjson, base64 `auth` and its decoded password included. */
export function registerPullSecret(text: string, secrets: SecretRegistry): void {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // The preflight reports the format error; mask every quoted string that could be a credential.
    for (const m of text.matchAll(/"(auth|password|identitytoken|registrytoken)"\s*:\s*"([^"]*)"/gi)) secrets.add(m[2]);
    return;
  }
  secrets.collectFrom(data);
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === 'auth' && typeof v === 'string') {
        const decoded = Buffer.from(v, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon >= 0) secrets.add(decoded.slice(colon + 1));
        secrets.add(decoded);
      } else walk(v);
    }
  };
  walk(data);
}

/** Chart defaults overlaid with the user's merged values: maps merge, the rest replaces. */
function mergeForHints(base: unknown, over: unknown): unknown {
  if (isMap(base) && isMap(over)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(over)) out[k] = v === null ? undefined : mergeForHints(base[k], v);
    return out;
  }
  return over === undefined ? base : over;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
