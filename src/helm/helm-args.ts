// Pure argv builders for every helm command we run, one per operation, aware of the helm 3 / 4
// flag differences (`--atomic` became `--rollback-on-failure`, `--wait` takes a strategy).

export type SetKind = 'set' | 'set-string' | 'set-json';
export interface SetArgument {
  kind: SetKind;
  expression: string;
}

/** The user-supplied values, in helm's own layering order: files first, then --set*. */
export interface ValuesArguments {
  files: string[];
  sets: SetArgument[];
}

export interface UpgradeArguments {
  release: string;
  chart: string;
  namespace?: string;
  values: ValuesArguments;
  timeout: string;
  historyMax: number;
  dryRun: boolean;
  takeOwnership: boolean;
  postRendererArgs: string[];
  extraArgs: string[];
}

export function valuesArgs(values: ValuesArguments): string[] {
  return [...values.files.flatMap((f) => ['-f', f]), ...values.sets.flatMap((s) => [`--${s.kind}`, s.expression])];
}

export function namespaceArgs(namespace?: string): string[] {
  return namespace ? ['--namespace', namespace] : [];
}

export function upgradeInstallArgs(a: UpgradeArguments, helmMajor: 3 | 4): string[] {
  const safety =
    helmMajor === 4
      ? ['--wait=watcher', '--rollback-on-failure']
      : // helm 3: boolean --wait, and --atomic (which implies --wait).
        ['--wait', '--atomic'];
  return [
    'upgrade',
    '--install',
    a.release,
    a.chart,
    ...namespaceArgs(a.namespace),
    '--create-namespace',
    ...safety,
    '--timeout',
    a.timeout,
    '--history-max',
    String(a.historyMax),
    ...(a.takeOwnership ? ['--take-ownership'] : []),
    ...(a.dryRun ? ['--dry-run=server'] : []),
    ...valuesArgs(a.values),
    ...a.postRendererArgs,
    ...a.extraArgs,
  ];
}

export interface TemplateArguments {
  release: string;
  chart: string;
  namespace?: string;
  values: ValuesArguments;
  postRendererArgs: string[];
  /** Render hooks too (the default); tests and the image lister want everything. */
  includeCrds?: boolean;
}

export function templateArgs(a: TemplateArguments): string[] {
  return [
    'template',
    a.release,
    a.chart,
    ...namespaceArgs(a.namespace),
    ...(a.includeCrds ? ['--include-crds'] : []),
    ...valuesArgs(a.values),
    ...a.postRendererArgs,
  ];
}

/**
 * `helm install --dry-run=client -o json` on a chart: its `config` is the merged user-supplied
 * values exactly as helm layered them (nulls kept). Needs no cluster.
 */
export function mergedValuesArgs(release: string, chart: string, values: ValuesArguments): string[] {
  return ['install', release, chart, '--dry-run=client', '-o', 'json', ...valuesArgs(values)];
}

export function historyArgs(release: string, namespace: string | undefined, max?: number): string[] {
  return ['history', release, ...namespaceArgs(namespace), ...(max ? ['--max', String(max)] : []), '-o', 'json'];
}
