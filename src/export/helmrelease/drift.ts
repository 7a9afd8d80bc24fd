// --drift and its ignore rules as Flux's `spec.driftDetection`: the same modes under other names,
// the same JSON pointer paths, a target selector for Kind/namespace/name.
import type { IgnoreRule } from '../../drift/ignore-rules.js';
import type { DriftMode } from '../../reconcile/decide.js';

const MODES: Record<DriftMode, 'enabled' | 'warn' | 'disabled'> = { correct: 'enabled', warn: 'warn', off: 'disabled' };

interface FluxIgnoreRule {
  paths: string[];
  target?: { kind?: string; name?: string; namespace?: string };
}

export interface DriftDetection {
  mode: 'enabled' | 'warn' | 'disabled';
  ignore?: FluxIgnoreRule[];
}

/** Pure: the driftDetection block and what of ours it does not carry. */
export function driftDetection(drift: { mode: DriftMode; ignore: readonly IgnoreRule[] }): {
  spec: DriftDetection;
  notes: string[];
} {
  const notes: string[] = [];
  const ignore = drift.ignore.map((rule) => fluxRule(rule, notes));
  if (ignore.length > 0) {
    notes.push(
      'drift ignore rules: Flux only leaves the fields out of its drift check; our install also keeps their live values through every upgrade, Flux sets them to what the chart renders at each upgrade',
    );
  }
  return { spec: ignore.length > 0 ? { mode: MODES[drift.mode], ignore } : { mode: MODES[drift.mode] }, notes };
}

function fluxRule(rule: IgnoreRule, notes: string[]): FluxIgnoreRule {
  if (!rule.target) return { paths: [...rule.paths] };
  // `*` (any) is a field left out in Flux's selector.
  const { kind, name, namespace } = rule.target;
  const target = Object.fromEntries(
    Object.entries({ kind, name, namespace }).filter(([, v]) => v !== undefined && v !== '*'),
  ) as FluxIgnoreRule['target'] & object;
  // Ours matches kinds whatever their case; Flux's selector matches the kind as written.
  if (target.kind && target.kind[0] !== target.kind[0]!.toUpperCase()) {
    notes.push(
      `drift ignore rule for kind ${JSON.stringify(target.kind)}: Flux matches the kind as written (case counts): write it as the API names it, e.g. Deployment`,
    );
  }
  return Object.keys(target).length > 0 ? { paths: [...rule.paths], target } : { paths: [...rule.paths] };
}
