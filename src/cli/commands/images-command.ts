// `helm-installer images`: every image the chart deploys with the given values (hooks, subcharts
// and configured custom-resource paths included), from helm's own rendering. Union passes
// (--union-values, --union-set) add images that sit behind value toggles. `--format kots` prints
// the Application's additionalImages block; `--check` fails when an Application misses one. With
// a release plan, the images of all its releases (src/releases/app-images.ts; one chart is an app of one).
import { InvalidInputError, PreflightError } from '../../common/errors.js';
import type { ValuesArguments } from '../../helm/helm-args.js';
import {
  buildImageCatalog,
  describeRegistryOnly,
  listedImages,
  registryWarningLabel,
  sourceImages,
  whyImage,
  type ImageCatalog,
  type ImageCatalogInput,
} from '../../images/image-catalog.js';
import { imagesJson } from '../../images/images-json.js';
import { checkKotsApplication, formatImages } from '../../images/kots-images.js';
import type { ImageOccurrence, RegistryOnlyOccurrence } from '../../images/manifest-images.js';
import { defineCommand } from '../command.js';
import {
  type CommonOptions,
  commonOptionTable,
  oneOf,
  renderHelmArgs,
  parsePath,
  splitLines,
  splitPathList,
  toCommonOptions,
} from '../../options/config.js';
import { list, value } from '../../options/options.js';
import type { RunState } from '../../run/run-state.js';
import { expandValuesPath, readValuesFile } from '../../inputs/values.js';
import { maskSetArgument, setExpression } from '../../options/set-expressions.js';
import { startRun } from '../../run/run-context.js';
import { withRenderSetup, type RenderSetup } from '../../run/render-setup.js';
import { resolveInput } from '../../inputs/app-input.js';
import { appImageInput } from '../../releases/app-images.js';

export interface ImagesOptions extends CommonOptions {
  format: 'list' | 'kots' | 'json';
  check?: string;
  /** Print every place this reference comes from instead of the list. */
  why?: string;
  unionValues: string[];
  unionSets: string[];
  /** helm template flags after `--` (render-flags.ts). */
  helmArgs: string[];
}

export const imagesDefinition = defineCommand({
  name: 'images',
  description: 'list every image the chart deploys (hooks and subcharts included)',
  options: {
    ...commonOptionTable,
    format: value(
      '--format <format>',
      'IMAGES_FORMAT',
      'list (one reference per line, nothing else), kots (Application additionalImages) or json (artifact, places, releases of each)',
      oneOf('list', 'kots', 'json'),
      'list' as 'list' | 'kots' | 'json',
    ),
    check: value(
      '--check <file>',
      'IMAGES_CHECK',
      "exit 6 when this KOTS Application's additionalImages misses an image",
      parsePath,
    ),
    why: value(
      '--why <image>',
      'IMAGES_WHY',
      'print every place (object, field, flag, env var, ConfigMap key, chart annotation) this image comes from',
      (raw: string) => raw.trim(),
    ),
    unionValues: list(
      '--union-values <file>',
      'UNION_VALUES',
      'extra values file to render too, for images behind toggles (repeatable)',
      {
        split: splitPathList,
        parse: parsePath,
      },
    ),
    unionSet: list('--union-set <expr>', 'UNION_SET', 'extra --set to render too, each its own pass (repeatable)', {
      split: splitLines,
      parse: (raw, ctx) => setExpression('set')(raw, ctx).expression,
      echo: (raw, ctx) => maskSetArgument('set', raw, ctx.secrets),
    }),
    helmArgs: renderHelmArgs(),
  },
  run: (o, state) =>
    imagesCommand(
      {
        ...toCommonOptions(o),
        format: o.format,
        check: o.check,
        why: o.why,
        unionValues: o.unionValues,
        unionSets: o.unionSet,
        helmArgs: o.helmArgs,
      },
      state,
    ),
});

export async function imagesCommand(o: ImagesOptions, state: RunState): Promise<number> {
  // Every release the app lists (one chart: one); `--format json` names the releases of a plan's images.
  const input = resolveInput(o, state.progress);
  return printImages(o, state, buildImageCatalog(await appImageInput(o, state, input, chartImages)));
}

/** One chart's images, over the user's values and each union pass. */
async function chartImages(o: ImagesOptions, state: RunState): Promise<ImageCatalogInput> {
  const run = await startRun(o, state, 2);
  run.helm.setRenderFlags(o.helmArgs);
  const unionFiles = o.unionValues.flatMap(expandValuesPath);
  for (const f of unionFiles) readValuesFile(f);
  run.stage('rendering');
  return withRenderSetup(run, (runPlan) => unionInput(runPlan, unionFiles, o.unionSets, run.chart.annotatedImages), {
    imagesOnly: true,
  });
}

/**
 * One image catalog over every pass (the user's values, then each union file or --union-set on
 * top): the same function the post-renderer and the preflight use. The first pass is the run
 * plan's own (with --registry, the render its image catalog already made).
 */
async function unionInput(
  runPlan: RenderSetup,
  unionFiles: string[],
  unionSets: string[],
  annotated: ImageCatalogInput['annotated'],
): Promise<ImageCatalogInput> {
  const main = runPlan.userValues;
  const passes: ValuesArguments[] = [
    main,
    ...unionFiles.map((f) => ({ files: [...main.files, f], sets: main.sets })),
    ...unionSets.map((expression) => ({
      files: main.files,
      sets: [...main.sets, { kind: 'set' as const, expression }],
    })),
  ];
  const occurrences: ImageOccurrence[] = [];
  const registries: RegistryOnlyOccurrence[] = [];
  for (const values of passes) {
    const found = await runPlan.imagesOf(values);
    occurrences.push(...found.occurrences);
    registries.push(...found.registries);
  }
  return { occurrences, registries, annotated, registry: runPlan.airgap.registry };
}

async function printImages(o: ImagesOptions, state: RunState, plan: ImageCatalog): Promise<number> {
  const registry = plan.registry;
  for (const r of plan.registries)
    process.stderr.write(`warning: ${registryWarningLabel(r)}: ${describeRegistryOnly(r, registry)}\n`);
  for (const w of plan.warnings) process.stderr.write(`warning: ${w}\n`);

  if (o.why !== undefined) {
    const places = whyImage(plan, o.why);
    if (places.length === 0) {
      throw new InvalidInputError(`${o.why} is not an image of this chart (with these values)`, {
        hint: 'Run helm-installer images to list them; --why takes a reference as listed, as written in the chart, or its local name.',
      });
    }
    process.stdout.write(places.map((p) => `${p}\n`).join(''));
    return 0;
  }
  // One spelling per image: `nginx` and `docker.io/library/nginx:latest` are the same image.
  const originals = sourceImages(plan);

  if (o.check) {
    state.progress.action = `checking ${o.check}`;
    const missing = await checkKotsApplication(o.check, originals);
    if (missing.length > 0) {
      throw new PreflightError(
        [
          `${o.check} lists ${originals.length - missing.length} of ${originals.length} images; additionalImages misses:`,
          ...missing.map((m) => `  ${m}`),
        ].join('\n'),
        {
          file: o.check,
          key: 'spec.additionalImages',
          hint: 'Add them (helm-installer images --format kots prints the whole block), or the airgap bundle will lack them.',
        },
      );
    }
    process.stdout.write(`${o.check}: all ${originals.length} images are listed in additionalImages\n`);
    return 0;
  }
  // With --registry: the names the local registry must hold (two sources on one name are refused).
  if (o.format === 'json') process.stdout.write(`${JSON.stringify(imagesJson(plan), null, 2)}\n`);
  else process.stdout.write(formatImages(listedImages(plan), o.format));
  return 0;
}
