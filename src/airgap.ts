// Stage "images": everything --registry changes. Filled in by the airgap work.
import type { ChartInfo } from './chart.js';
import type { CommonOptions } from './config.js';
import type { Logger } from './logger.js';

export interface AirgapSetup {
  generated: { file: string; label: string }[];
  postRendererArgs: string[];
  env: Record<string, string>;
  preflight?: (renderedManifests: string, logger: Logger) => Promise<void>;
}

export async function prepareAirgap(o: CommonOptions, _chart: ChartInfo, _helmMajor: 3 | 4, _workDir: string): Promise<AirgapSetup> {
  void o;
  return { generated: [], postRendererArgs: [], env: {} };
}
