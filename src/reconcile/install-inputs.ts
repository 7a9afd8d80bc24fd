// What this run asks for, as digests comparable with the labels of the deployed revision: the
// chart and the inputs as given (no helm run), and the values digest (the layers as written, or,
// where that reading does not apply, one helm run: helm's own merge). The values digest is
// computed only when a run needs it: an unchanged redeploy whose inputs as given equal the
// deployed revision's never does (a values probe running beside it made that redeploy about
// 20 ms slower), and a run that stops early stops a probe still running.
import { readFileSync } from 'node:fs';
import type { RevisionLabels } from '../cluster/release-secrets.js';
import type { HelmClient } from '../helm/helm-client.js';
import {
  chartDigest,
  decideNoOp,
  inputDigest,
  sameInputs,
  valuesDigest,
  writtenValuesDigest,
  type ApplySettings,
  type InputDigests,
  type ReleaseDigests,
} from './release-digest.js';
import { valuesAsWritten } from '../inputs/values-as-written.js';
import { toValuesArguments, type ResolvedValues } from '../inputs/values.js';
import { installerVersion } from '../common/version.js';
import type { InputsCompared } from './decide.js';
import type { InstallRun } from './install-run.js';

export interface InstallInputs {
  known: InputDigests;
  /** The three digests; the values one computed at most once, on the first call. */
  digests(): Promise<ReleaseDigests>;
  /** Stops a values probe still running (the run ended without needing it). */
  stop(): void;
  /** What is known now, for the log: the values digest only once it was computed. */
  recorded(): Partial<ReleaseDigests>;
}

interface InputsSource {
  chartPath: string;
  resolved: ResolvedValues;
  helm: HelmClient;
  settings: Omit<ApplySettings, 'installerVersion'>;
  signal: AbortSignal;
}

/** The run's inputs: besides the values, what changes the applied objects (never --drift, --timeout or the like). */
export function runInputs(run: InstallRun): InstallInputs {
  const { o } = run;
  const settings = {
    registry: o.registry,
    imagePullSecret: o.imagePullSecret,
    imagePaths: o.imagePaths,
    helmArgs: o.helmArgs,
    appSlug: o.appSlug,
  };
  return installInputs({
    chartPath: run.chart.path,
    resolved: run.resolved,
    helm: run.helm,
    settings,
    signal: run.signal,
  });
}

function installInputs(s: InputsSource): InstallInputs {
  const settings: ApplySettings = { ...s.settings, installerVersion: installerVersion() };
  // Each values file read once, for both digests (the values were read and bounded before).
  const layers = s.resolved.layers.map((l) => ({ source: l.source, content: readFileSync(l.file) }));
  const known = { chart: chartDigest(s.chartPath), input: inputDigest(layers, s.resolved.sets, settings) };
  const stopped = new AbortController();
  let values: Promise<ReleaseDigests> | undefined;
  let settled: ReleaseDigests | undefined;
  const digests = () => {
    values ??= (async () => {
      const written = valuesAsWritten(layers.map((l) => l.content));
      if (written) return { ...known, values: writtenValuesDigest(written, s.resolved.sets, settings) };
      const merged = await s.helm.mergedValues(
        toValuesArguments(s.resolved),
        AbortSignal.any([s.signal, stopped.signal]),
      );
      return { ...known, values: valuesDigest(merged, settings) };
    })();
    values.then(
      (d) => (settled = d),
      () => undefined,
    );
    return values;
  };
  return { known, digests, stop: () => stopped.abort(), recorded: () => settled ?? known };
}

/**
 * The inputs against the last revision, when it is deployed: equal as given (no helm run: the
 * no-op's short way), else decided on the values digest.
 */
export async function compareInputs(records: RevisionLabels[], inputs: InstallInputs): Promise<InputsCompared> {
  if (sameInputs(records, inputs.known)) return { equal: true };
  const decision = decideNoOp(records, await inputs.digests());
  return decision.unchanged ? { equal: true } : { equal: false, reason: decision.reason };
}
