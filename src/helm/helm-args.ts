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
    // Adopting objects made by `kubectl apply`: helm 4 applies server-side, where kubectl's
    // field manager owns the fields and would make every changed field a conflict.
    ...(a.takeOwnership ? ['--take-ownership', ...(helmMajor === 4 ? ['--force-conflicts'] : [])] : []),
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
  /** Also print crds/ (render and images show everything helm would install). */
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
 * Renders a probe chart whose only template is `{{ toJson .Values }}`. With no chart defaults,
 * .Values is exactly helm's merge of the user-supplied layers (nulls kept). Unlike
 * `install --dry-run=client -o json`, this needs no cluster on helm 3 either.
 */
export function mergedValuesArgs(release: string, probeChart: string, values: ValuesArguments): string[] {
  return ['template', release, probeChart, ...valuesArgs(values)];
}

export function historyArgs(release: string, namespace: string | undefined, max?: number): string[] {
  return ['history', release, ...namespaceArgs(namespace), ...(max ? ['--max', String(max)] : []), '-o', 'json'];
}
