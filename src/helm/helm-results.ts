// Pure parsers for helm's JSON answers, validated where they enter.

export type ReleaseStatus =
  | 'deployed'
  | 'failed'
  | 'superseded'
  | 'uninstalled'
  | 'uninstalling'
  | 'pending-install'
  | 'pending-upgrade'
  | 'pending-rollback'
  | 'unknown';

export interface HistoryEntry {
  revision: number;
  status: ReleaseStatus;
  chart: string;
  appVersion: string;
  description: string;
  updated: string;
}

export function parseHistory(json: string): HistoryEntry[] {
  const data = JSON.parse(json) as unknown;
  if (!Array.isArray(data)) throw new Error('helm history -o json did not return a list');
  return data.map((raw): HistoryEntry => {
    const r = raw as Record<string, unknown>;
    return {
      revision: Number(r.revision),
      status: String(r.status ?? 'unknown') as ReleaseStatus,
      chart: String(r.chart ?? ''),
      appVersion: String(r.app_version ?? ''),
      description: String(r.description ?? ''),
      updated: String(r.updated ?? ''),
    };
  });
}

/** The JSON line the values probe chart renders (after helm's `---` and `# Source:` lines). */
export function parseProbeValues(rendered: string): Record<string, unknown> {
  const line = rendered.split('\n').find((l) => l.startsWith('{'));
  const data = line ? (JSON.parse(line) as unknown) : {};
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('values probe rendered no map');
  return data as Record<string, unknown>;
}

/**
 * The revision `helm upgrade --install` made, from its own output: the `REVISION: N` line of its
 * status text (before any NOTES), or the release's `version` when `-o json` / `-o yaml` was passed
 * through. So learning it costs no second `helm history`. Undefined when there is none.
 */
export function parseUpgradeRevision(stdout: string): number | undefined {
  const text = stdout.trimStart();
  if (text.startsWith('{')) {
    try {
      const version = (JSON.parse(text) as { version?: unknown }).version;
      return typeof version === 'number' && Number.isInteger(version) && version > 0 ? version : undefined;
    } catch {
      return undefined;
    }
  }
  const m = /^REVISION: (\d+)$/m.exec(text) ?? /^version: (\d+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

export interface TestRun {
  /** The test hook's name (a Pod's, usually). */
  name: string;
  /** Helm's phase of its last run: Succeeded, Failed, Running, Unknown. */
  phase: string;
}

/**
 * The test hooks and their phases from `helm test`'s status text, which helm 4 and helm 3 print on
 * stdout whether the tests passed or not (a `TEST SUITE: <name>` line, then `Phase: <phase>`);
 * `TEST SUITE: None` is a chart without tests. The failure on stderr differs between them and
 * names no pod on helm 3's timeout, so the phases are read here.
 */
export function parseTestSuite(stdout: string): TestRun[] {
  const runs: TestRun[] = [];
  const phased = new Set<TestRun>();
  for (const line of stdout.split('\n')) {
    // The chart's NOTES come last and are the chart's own text.
    if (line.startsWith('NOTES:')) break;
    const suite = /^TEST SUITE:\s+(\S+)\s*$/.exec(line);
    if (suite) {
      if (suite[1] !== 'None') runs.push({ name: suite[1]!, phase: 'Unknown' });
      continue;
    }
    const phase = /^Phase:\s+(\S+)\s*$/.exec(line);
    const last = runs.at(-1);
    if (phase && last && !phased.has(last)) {
      last.phase = phase[1]!;
      phased.add(last);
    }
  }
  return runs;
}

export function isPending(status: ReleaseStatus): boolean {
  return status.startsWith('pending-');
}
