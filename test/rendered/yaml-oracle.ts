// The oracle comparison of the fast YAML reader: two trees of `yaml` nodes, compared in all that
// the rewriter or a finder could notice (values, node kinds, styles, source ranges). Shared by the
// unit test and test/tools/fast-yaml-charts.ts, which runs rendered public charts through it.
import { isMap, isPair, isScalar, isSeq } from 'yaml';

/** Every difference between two trees that the rewriter or a finder could notice. */
export function differences(a: unknown, b: unknown, path = '$', out: string[] = []): string[] {
  if (a === null || a === undefined || b === null || b === undefined) {
    if ((a ?? null) !== (b ?? null)) out.push(`${path}: ${String(a)} vs ${String(b)}`);
    return out;
  }
  if (isScalar(a)) {
    if (!isScalar(b)) return [...out, `${path}: scalar vs ${String(b)}`];
    if (a.type !== b.type) out.push(`${path}: type ${a.type} vs ${b.type}`);
    if (a.range![0] !== b.range![0] || a.range![1] !== b.range![1]) out.push(`${path}: range ${a.range} vs ${b.range}`);
    if (!Object.is(a.value, b.value))
      out.push(`${path}: value ${JSON.stringify(a.value)} vs ${JSON.stringify(b.value)}`);
    if (a.source !== b.source) out.push(`${path}: source ${JSON.stringify(a.source)} vs ${JSON.stringify(b.source)}`);
    return out;
  }
  if (isMap(a) || isSeq(a)) {
    if (isMap(a) !== isMap(b) || isSeq(a) !== isSeq(b)) return [...out, `${path}: collection kind`];
    const other = b as typeof a;
    if (a.range![0] !== other.range![0]) out.push(`${path}: starts at ${a.range![0]} vs ${other.range![0]}`);
    if (Boolean(a.flow) !== Boolean(other.flow)) out.push(`${path}: flow ${a.flow} vs ${other.flow}`);
    if (a.items.length !== other.items.length)
      return [...out, `${path}: ${a.items.length} vs ${other.items.length} items`];
    a.items.forEach((item: unknown, i: number) => {
      const twin = other.items[i] as unknown;
      if (isPair(item) && isPair(twin)) {
        differences(item.key, twin.key, `${path}.<key ${i}>`, out);
        differences(item.value, twin.value, `${path}.${String((item.key as { value?: unknown }).value)}`, out);
      } else differences(item, twin, `${path}[${i}]`, out);
    });
    return out;
  }
  return [...out, `${path}: unexpected node`];
}
