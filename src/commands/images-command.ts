// `helm-installer images`: every image the chart deploys with the given values (hooks, subcharts
// and configured custom-resource paths included), from helm's own rendering. Union passes
// (--union-values, --union-set) add images that sit behind value toggles. `--format kots` prints
// the Application's additionalImages block; `--check` fails when an Application misses one.
import { parseImagePath } from '../airgap.js';
import { PreflightError } from '../errors.js';
import type { ValuesArguments } from '../helm/helm-args.js';
import { parseImageReference, parseRegistryAddress, planImageRewrites } from '../images/image-reference.js';
import { checkKotsApplication, formatKotsAdditionalImages } from '../images/kots-images.js';
import { collectImages } from '../images/manifest-images.js';
import { defineCommand } from '../command.js';
import { type CommonOptions, commonOptionTable, oneOf, parsePath, splitLines, splitPathList, toCommonOptions } from '../config.js';
import { list, value } from '../options.js';
import type { RunState } from '../run-state.js';
import { expandValuesPath, readValuesFile, toValuesArguments } from '../values.js';
import { maskSetArgument, setExpression } from '../set-expressions.js';
import { startCommand } from './prepare.js';

export interface ImagesOptions extends CommonOptions {
  format: 'list' | 'kots';
  check?: string;
  unionValues: string[];
  unionSets: string[];
}

export const imagesDefinition = defineCommand({
  name: 'images',
  description: 'list every image the chart deploys (hooks and subcharts included)',
  options: {
    ...commonOptionTable,
    format: value('--format <format>', 'IMAGES_FORMAT', 'list (one per line) or kots (Application additionalImages)', oneOf('list', 'kots'), 'list' as 'list' | 'kots'),
    check: value('--check <file>', 'IMAGES_CHECK', "exit 6 when this KOTS Application's additionalImages misses an image", parsePath),
    unionValues: list('--union-values <file>', 'UNION_VALUES', 'extra values file to render too, for images behind toggles (repeatable)', {
      split: splitPathList,
      parse: parsePath,
    }),
    unionSet: list('--union-set <expr>', 'UNION_SET', 'extra --set to render too, each its own pass (repeatable)', {
      split: splitLines,
      parse: (raw, ctx) => setExpression('set')(raw, ctx).expression,
      echo: (raw, ctx) => maskSetArgument('set', raw, ctx.secrets),
    }),
  },
  run: (o, state) =>
    imagesCommand({ ...toCommonOptions(o), format: o.format, check: o.check, unionValues: o.unionValues, unionSets: o.unionSet }, state),
});

export async function imagesCommand(o: ImagesOptions, state: RunState): Promise<number> {
  const { chart, release, resolved, helm } = await startCommand(o, state, 2);
  const extraPaths = o.imagePaths.map(parseImagePath);

  const main = toValuesArguments(resolved);
  const unionFiles = o.unionValues.flatMap(expandValuesPath);
  for (const f of unionFiles) readValuesFile(f);
  const passes: ValuesArguments[] = [
    main,
    ...unionFiles.map((f) => ({ files: [...main.files, f], sets: main.sets })),
    ...o.unionSets.map((expression) => ({ files: main.files, sets: [...main.sets, { kind: 'set' as const, expression }] })),
  ];

  state.progress.action = 'rendering';
  // One spelling per image: `nginx` and `docker.io/library/nginx:latest` are the same image.
  const images = new Map<string, string>();
  for (const values of passes) {
    const manifests = await helm.template({ release, chart: chart.path, namespace: o.namespace, values, postRendererArgs: [], includeCrds: true });
    for (const occurrence of collectImages(manifests, extraPaths)) {
      const key = parseImageReference(occurrence.image).normalized;
      if (!images.has(key)) images.set(key, occurrence.image);
    }
  }
  const originals = [...images.values()].sort();

  if (o.check) {
    state.progress.action = `checking ${o.check}`;
    const missing = await checkKotsApplication(o.check, originals);
    if (missing.length > 0) {
      throw new PreflightError([`${o.check} lists ${originals.length - missing.length} of ${originals.length} images; additionalImages misses:`, ...missing.map((m) => `  ${m}`)].join('\n'), {
        file: o.check,
        key: 'spec.additionalImages',
        hint: 'Add them (helm-installer images --format kots prints the whole block), or the airgap bundle will lack them.',
      });
    }
    process.stdout.write(`${o.check}: all ${originals.length} images are listed in additionalImages\n`);
    return 0;
  }
  // With --registry: the names the local registry must hold (two sources on one name are refused).
  const listed = o.registry ? [...planImageRewrites(originals, parseRegistryAddress(o.registry)).values()].sort() : originals;
  process.stdout.write(o.format === 'kots' ? formatKotsAdditionalImages(listed) : listed.map((i) => `${i}\n`).join(''));
  return 0;
}
