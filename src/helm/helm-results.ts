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
      status: (String(r.status ?? 'unknown') as ReleaseStatus),
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

export function isPending(status: ReleaseStatus): boolean {
  return status.startsWith('pending-');
}
