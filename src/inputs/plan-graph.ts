// The release plan as a graph, pure: each release's namespace settled, `dependsOn` resolved to
// releases of the plan, cycles refused with their path, `enabled` evaluated from the
// environment, and an order in which every release comes after its dependencies. Bad plans are
// exit 3 naming the file and line, before anything is touched.
import { InvalidInputError, OptionValueError } from '../common/errors.js';
import { parseBoolean } from '../options/options.js';
import type { PlannedRelease, ReleasePlan } from './plan-file.js';

interface GraphRelease extends PlannedRelease {
  namespace: string;
  /** `namespace/name`: unique in the plan. */
  key: string;
  /** Keys of the enabled releases this one waits for. */
  deps: string[];
}

export interface PlanGraph {
  app: string;
  /** Enabled releases, each after its dependencies (ties in the plan's order). */
  enabled: GraphRelease[];
  /** Releases the plan lists but `enabled` turns off: uninstalled if this installer made them. */
  disabled: GraphRelease[];
  /** A dependency on a disabled release is not waited for: named so the log can say so. */
  ignoredDeps: { release: string; dependsOn: string }[];
}

const HINT = 'Fix the release plan (see README "Several charts", src/releases/README.md).';

const releaseKey = (namespace: string, name: string) => `${namespace}/${name}`;

export function planGraph(plan: ReleasePlan, defaultNamespace: string, env: NodeJS.ProcessEnv): PlanGraph {
  const fail = (why: string, line?: number): never => {
    throw new InvalidInputError(`release plan ${plan.file}${line ? ` line ${line}` : ''}: ${why}`, {
      file: plan.file,
      line,
      hint: HINT,
    });
  };
  const byKey = new Map<string, GraphRelease>();
  for (const r of plan.releases) {
    const namespace = r.namespace ?? defaultNamespace;
    const key = releaseKey(namespace, r.name);
    const twin = byKey.get(key);
    if (twin) fail(`two releases named ${r.name} in namespace ${namespace} (lines ${twin.line} and ${r.line})`, r.line);
    byKey.set(key, { ...r, namespace, key, deps: [] });
  }
  const all = [...byKey.values()];
  for (const r of all) r.deps = r.dependsOn.map((d) => resolveDependency(d, r, all, fail));
  refuseCycles(all, fail);
  const on = new Set(all.filter((r) => isEnabled(r, env, fail)).map((r) => r.key));
  const ignoredDeps = all
    .filter((r) => on.has(r.key))
    .flatMap((r) => r.deps.filter((d) => !on.has(d)).map((d) => ({ release: r.key, dependsOn: d })));
  const enabled = all.filter((r) => on.has(r.key)).map((r) => ({ ...r, deps: r.deps.filter((d) => on.has(d)) }));
  return {
    app: plan.app,
    enabled: topologicalOrder(enabled),
    disabled: all.filter((r) => !on.has(r.key)),
    ignoredDeps,
  };
}

function resolveDependency(
  written: string,
  from: GraphRelease,
  all: GraphRelease[],
  fail: (why: string, line?: number) => never,
): string {
  const matches = written.includes('/') ? all.filter((r) => r.key === written) : all.filter((r) => r.name === written);
  if (matches.length === 0)
    return fail(`release ${from.name} depends on ${written}, which is not in the plan`, from.line);
  if (matches.length > 1)
    return fail(
      `release ${from.name} depends on ${written}, which names releases in ${matches.length} namespaces: write namespace/name`,
      from.line,
    );
  if (matches[0]!.key === from.key) return fail(`release ${from.name} depends on itself`, from.line);
  return matches[0]!.key;
}

/** A depth-first walk; the first cycle found is named with its whole path. */
function refuseCycles(all: GraphRelease[], fail: (why: string, line?: number) => never): void {
  const byKey = new Map(all.map((r) => [r.key, r]));
  const state = new Map<string, 'walking' | 'done'>();
  const walk = (r: GraphRelease, path: GraphRelease[]): void => {
    if (state.get(r.key) === 'done') return;
    if (state.get(r.key) === 'walking') {
      const cycle = [...path.slice(path.indexOf(r)), r].map((c) => c.name);
      fail(`dependency cycle: ${cycle.join(' -> ')}`, r.line);
    }
    state.set(r.key, 'walking');
    for (const d of r.deps) walk(byKey.get(d)!, [...path, r]);
    state.set(r.key, 'done');
  };
  for (const r of all) walk(r, []);
}

function isEnabled(r: GraphRelease, env: NodeJS.ProcessEnv, fail: (why: string, line?: number) => never): boolean {
  if (typeof r.enabled === 'boolean') return r.enabled;
  const raw = env[r.enabled.env];
  if (raw === undefined) return r.enabled.default;
  try {
    return parseBoolean(raw);
  } catch (error) {
    if (error instanceof OptionValueError)
      return fail(
        `release ${r.name} is enabled by ${r.enabled.env}=${JSON.stringify(raw.slice(0, 40))}: ${error.message}`,
        r.line,
      );
    throw error;
  }
}

/** Kahn's algorithm, taking releases in the plan's order whenever several are free. */
function topologicalOrder(releases: GraphRelease[]): GraphRelease[] {
  const placed = new Set<string>();
  const order: GraphRelease[] = [];
  while (order.length < releases.length) {
    const next = releases.find((r) => !placed.has(r.key) && r.deps.every((d) => placed.has(d)));
    if (!next) throw new Error('internal: a cycle passed the cycle check');
    placed.add(next.key);
    order.push(next);
  }
  return order;
}
