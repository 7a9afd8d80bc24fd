// `values --explain`: which layer set each leaf of the merged values. Helm parses each layer
// alone (so its dialect and --set syntax are helm's); attribution is then pure: a leaf comes
// from the highest layer that defines that exact path, because maps merge and everything else
// replaces.
import type { HelmClient } from '../helm/helm-client.js';
import type { SetArgument } from '../helm/helm-args.js';

export interface LayerValues {
  label: string;
  config: Record<string, unknown>;
}

export interface ExplainedLeaf {
  path: string;
  value: unknown;
  layer: string;
}

export async function readLayerValues(
  helm: HelmClient,
  files: { file: string; label: string }[],
  sets: { set: SetArgument; label: string }[],
): Promise<LayerValues[]> {
  const out: LayerValues[] = [];
  for (const f of files) out.push({ label: f.label, config: await helm.mergedValues({ files: [f.file], sets: [] }) });
  for (const s of sets) out.push({ label: s.label, config: await helm.mergedValues({ files: [], sets: [s.set] }) });
  return out;
}

export function explainLeaves(merged: Record<string, unknown>, layers: LayerValues[]): ExplainedLeaf[] {
  const rows: ExplainedLeaf[] = [];
  const walk = (node: unknown, path: string[]): void => {
    if (isPlainMap(node) && Object.keys(node).length > 0) {
      for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
      return;
    }
    const source = [...layers].reverse().find((l) => hasPath(l.config, path));
    rows.push({ path: formatPath(path), value: node, layer: source?.label ?? 'unknown' });
  };
  walk(merged, []);
  return rows;
}

function hasPath(tree: unknown, path: string[]): boolean {
  let node: unknown = tree;
  for (const key of path) {
    if (!isPlainMap(node) || !Object.hasOwn(node, key)) return false;
    node = node[key];
  }
  return true;
}

function isPlainMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** a.b["key.with.dots"] style, so a path can be pasted back into --set with care. */
function formatPath(path: string[]): string {
  return path.map((p, i) => (/^[A-Za-z0-9_-]+$/.test(p) ? (i === 0 ? p : `.${p}`) : `[${JSON.stringify(p)}]`)).join('');
}
