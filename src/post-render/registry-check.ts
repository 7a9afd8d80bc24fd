// The registry preflight of a run with --registry: every image of the plan is in the local
// registry under its KOTS name (read with the pull secret, when one is mounted), and no hook image
// would be pulled from outside it (helm 3 does not post-render hooks).
import type { Logger } from 'pino';
import { InvalidInputError, PreflightError } from '../common/errors.js';
import type { LocalRegistry } from '../common/image-reference.js';
import { describeOccurrence, requiredLocalImages, targetOf, type ImageCatalog } from '../images/image-catalog.js';
import type { ImageOccurrence } from '../images/manifest-images.js';
import { checkImagesExist } from '../registry/registry-preflight.js';
import { MiB, readInputFile } from '../common/read-input.js';
import { registerPullSecret, type SecretRegistry } from '../common/secrets.js';

export interface PreflightSettings {
  pullSecretFile?: string;
  caFile?: string;
  /** The credentials read from the pull secret file are registered here, to be masked. */
  secrets?: SecretRegistry;
}

export async function checkRegistry(
  plan: ImageCatalog,
  unrewrittenHooks: ImageOccurrence[],
  registry: LocalRegistry,
  logger: Logger,
  settings: PreflightSettings,
): Promise<void> {
  if (unrewrittenHooks.length > 0) {
    throw new PreflightError(
      [
        `${unrewrittenHooks.length} hook image(s) would be pulled from outside ${registry.address}: helm 3 does not post-render hooks`,
        ...unrewrittenHooks.map(
          (h) => `  ${h.image} -> ${targetOf(plan, h.image) ?? h.image} (${describeOccurrence(h)})`,
        ),
      ].join('\n'),
      {
        hint:
          'Set the chart value that renders each image to the local name after "->" (helm-installer images --why <image> names where it comes from), ' +
          'or run with helm 4 (HELM_BIN), which post-renders hooks; --skip-preflight skips this check and the hook pulls from the internet.',
      },
    );
  }
  // The same names the post-renderer writes: the plan's KOTS names.
  const images = requiredLocalImages(plan);
  const dockerConfigJson = settings.pullSecretFile
    ? readPullSecret(settings.pullSecretFile, settings.secrets)
    : undefined;
  const result = await checkImagesExist(images, { dockerConfigJson, caFile: settings.caFile });
  logger.info(
    { registry: registry.address, present: result.present.length, missing: result.missing.length },
    'registry preflight',
  );
  if (result.missing.length > 0) {
    throw new PreflightError(
      [
        `${result.missing.length} of ${images.length} images are missing from the registry ${registry.address}:`,
        ...result.missing.map((m) => `  ${m.image} (${m.reason})`),
      ].join('\n'),
      {
        hint: 'Push the airgap bundle to the registry (KOTS does on upload), or fix --registry; --skip-preflight skips this check.',
      },
    );
  }
}

const PULL_SECRET_HINT =
  'Mount the pull secret (its .dockerconfigjson key) at that path, or unset --pull-secret-file (HELM_INSTALLER_PULL_SECRET_FILE).';

function readPullSecret(file: string, secrets: SecretRegistry | undefined): string {
  let text: string;
  try {
    text = readInputFile(file, { what: 'pull secret file', maxBytes: MiB, hint: PULL_SECRET_HINT });
  } catch (err) {
    if (err instanceof InvalidInputError) throw err;
    throw new InvalidInputError(`cannot read the pull secret file ${file}: ${(err as Error).message}`, {
      file,
      hint: PULL_SECRET_HINT,
    });
  }
  if (secrets) registerPullSecret(text, secrets);
  return text;
}
