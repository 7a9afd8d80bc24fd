// The per-run working directory shared by values, render, images and install: generated values
// layers (registry hints) and the post-renderer that rewrites images, both scoped to one
// callback and removed afterwards.
import type { ChartInfo } from '../chart.js';
import type { CommonOptions } from '../config.js';
import { prepareAirgap, type AirgapSetup } from '../airgap.js';
import type { HelmClient } from '../helm/helm-client.js';
import type { ValuesArguments } from '../helm/helm-args.js';
import { withTempDir } from '../temp-dir.js';

export type { AirgapSetup };

export async function withAirgap<T>(
  o: CommonOptions,
  chart: ChartInfo,
  helm: HelmClient,
  userValues: ValuesArguments,
  fn: (setup: AirgapSetup) => Promise<T>,
): Promise<T> {
  return withTempDir('helm-installer', async (workDir) => fn(await prepareAirgap(o, chart, helm, userValues, workDir)));
}
