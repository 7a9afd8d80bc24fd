// The checks before anything changes, one path for every install: the chart rendered as helm will
// apply it (templates and schema: bad values are exit 3), the rewritten images in the registry
// (exit 6), then the RBAC the release needs (exit 6). The render and the registry preflight need
// no cluster and run at once, a failure still reported in stage order; the RBAC preflight reads
// the cluster, so a run that cannot reach it yet asks it once the Lease has waited for the
// cluster (and before the Lease creates a namespace); the cluster fit check (classes the chart
// names, a dry run of its pods: cluster-fit.ts) follows it.
import type { ClusterDiscovery } from '../cluster/capabilities.js';
import { InvalidInputError } from '../common/errors.js';
import { describeOccurrence } from '../images/image-catalog.js';
import { awaitInOrder } from '../run/overlap.js';
import type { RbacQueries } from '../rbac/rbac-preflight.js';
import type { RenderSetup } from '../run/render-setup.js';
import { untilAborted } from '../run/run-control.js';
import type { ClusterRun } from '../run/run-context.js';
import { eventNamespace } from '../run/event-place.js';
import type { InstallRun } from './install-run.js';
import { mentionsRemovable, unservedObjects, type ApiMapping } from '../drift/map-removed-apis.js';
import { servedFrom } from '../drift/removed-apis.js';

/** The render and the registry preflight; returns the rendered chart. */
export async function checkWithoutCluster(
  run: InstallRun,
  plan: RenderSetup,
  namespace: string | undefined,
): Promise<string> {
  const { o, logger, state } = run;
  run.stage('render check');
  const rendered = plan.render(namespace).then((r) => r.manifests);
  const preflight = plan.airgap.preflight;
  const [manifests] = await awaitInOrder(state.progress, [
    ['render check', rendered],
    [
      'registry preflight',
      preflight && !o.skipPreflight
        ? untilAborted(
            preflight(logger, { pullSecretFile: o.pullSecretFile, caFile: o.registryCaFile, secrets: state.secrets }),
            run.signal,
            'registry preflight',
          )
        : Promise.resolve(),
    ],
  ] as const);
  warnUnrewrittenHooks(run, plan);
  return manifests;
}

/**
 * The RBAC preflight on what was rendered, asked at most once per run. Its rules review of the
 * release namespace needs no render: asked at once, while helm renders. The run's Events are
 * checked too (where they go: the Job's namespace in a Job), a denial only warned about.
 */
export function rbacCheck(
  run: InstallRun,
  cluster: ClusterRun,
  discovery: Promise<ClusterDiscovery> | undefined,
): (manifests: string) => Promise<void> {
  let queries: Promise<RbacQueries> | undefined;
  let checked: Promise<void> | undefined;
  const events = eventNamespace(run.o, cluster.kube.config, cluster.namespace);
  const query = () =>
    (queries ??= Promise.all([import('../rbac/rbac-preflight.js'), import('../rbac/chart-crds.js')]).then(
      ([m, { crdAccessGuess }]) => {
        const q = m.RbacQueries.of(
          cluster.kube.config,
          discovery?.then((d) => d.resources),
        );
        void q.review(cluster.namespace);
        if (events !== cluster.namespace) void q.review(events);
        q.prefetchAccess(crdAccessGuess(run.chart.path));
        return q;
      },
    ));
  if (!run.o.skipPreflight && discovery) query().catch(() => undefined);
  return (manifests) =>
    (checked ??= run.o.skipPreflight
      ? Promise.resolve()
      : (async () => {
          run.stage('rbac preflight');
          const [{ rbacPreflight }, { eventPermission }, q] = await Promise.all([
            import('../rbac/rbac-preflight.js'),
            import('../rbac/required-permissions.js'),
            query(),
          ]);
          // The fit check's reads and dry runs go beside the preflight's reviews; a denial is still
          // the one named when both fail (the fit check's calls fail too without the access).
          await awaitInOrder(run.state.progress, [
            [
              'rbac preflight',
              untilAborted(
                rbacPreflight(
                  { manifests, releaseNamespace: cluster.namespace, optional: [eventPermission(events)] },
                  run.logger,
                  cluster.kube.config,
                  q,
                ),
                run.signal,
                'rbac preflight',
              ),
            ],
            ['cluster fit check', untilAborted(fitCheck(run, cluster, manifests), run.signal, 'cluster fit check')],
          ] as const);
        })());
}

/**
 * What the API server says of the release's pods before any change: the classes the chart names
 * that the cluster lacks (exit 3), and the refusals and Pod Security warnings of a dry run of its
 * pods (logged with their way out; the wait names them again if they stop the pods).
 */
async function fitCheck(run: InstallRun, cluster: ClusterRun, manifests: string): Promise<void> {
  run.stage('cluster fit check');
  const [{ readClusterFit }, { describeMissingClasses, missingClassesHint }, { objectClient }] = await Promise.all([
    import('./cluster-fit.js'),
    import('./named-classes.js'),
    import('../cluster/object-client.js'),
  ]);
  const fit = await readClusterFit(
    await objectClient(cluster.kube, run.signal),
    manifests,
    cluster.namespace,
    run.logger,
  );
  for (const r of fit.refusals) {
    const what = r.owner.startsWith('ResourceQuota/')
      ? 'the pods may not fit'
      : r.enforced
        ? 'the cluster would refuse the pods of'
        : 'the cluster warns about the pods of';
    run.logger.warn({ object: r.owner, refusal: r.kind, wayOut: r.wayOut }, `${what} ${r.owner}: ${r.message}`);
  }
  if (fit.missing.length > 0) {
    throw new InvalidInputError(
      [
        'the chart names classes the cluster does not have:',
        ...describeMissingClasses(fit.missing).map((l) => `  ${l}`),
      ].join('\n'),
      {
        hint: missingClassesHint(fit.missing),
      },
    );
  }
}

/** With --skip-preflight the hook images helm 3 does not post-render are still named. */
function warnUnrewrittenHooks(run: InstallRun, plan: RenderSetup): void {
  if (!run.o.skipPreflight) return;
  for (const h of plan.airgap.unrewrittenHooks) {
    run.logger.warn(
      { image: h.image, hook: h.hook, kind: h.kind, name: h.name },
      `helm 3 does not post-render hooks: ${h.image} (${describeOccurrence(h)}) is pulled as it is (--skip-preflight)`,
    );
  }
}

/**
 * A new render that names an apiVersion of the removals table that the cluster no longer serves
 * (an old chart on an upgraded cluster) is bad input: named before helm, with what the cluster
 * serves instead, exit 3. Helm would fail on it only after taking the release (and, for the
 * release's current record, say "fix the values"). A cluster whose discovery did not answer is
 * left to helm.
 */
export async function unservedApisCheck(manifests: string, discovery: Promise<ClusterDiscovery>): Promise<void> {
  if (!mentionsRemovable(manifests)) return;
  const found = await discovery.then(
    ({ capabilities }) => ({
      capabilities,
      unserved: unservedObjects(manifests, servedFrom(capabilities.apiVersions)),
    }),
    () => undefined,
  );
  if (!found || found.unserved.length === 0) return;
  const { capabilities, unserved } = found;
  const lines = unserved.map((m) => `  ${unservedLine(m, capabilities.apiVersions)}`);
  throw new InvalidInputError(
    [`the chart renders APIs this cluster (Kubernetes ${capabilities.kubeVersion}) no longer serves:`, ...lines].join(
      '\n',
    ),
    {
      file: unserved[0]!.source,
      hint: 'The chart was written for an older Kubernetes: install a chart version made for this one (ask the vendor), or set the values that make the chart render the versions named above.',
    },
  );
}

/** Pure: one refused object: where, its apiVersion, and the versions of its kind the cluster serves. */
function unservedLine(m: ApiMapping, apiVersions: readonly string[]): string {
  const object = `${m.kind}/${m.namespace ? `${m.namespace}/` : ''}${m.name}${m.source ? ` (${m.source})` : ''}`;
  const instead = apiVersions.filter((v) => v.endsWith(`/${m.kind}`)).map((v) => v.slice(0, -m.kind.length - 1));
  const serves =
    instead.length > 0
      ? `the cluster serves ${m.kind} as ${instead.join(', ')}`
      : `the cluster serves no ${m.kind} (removed with no successor)`;
  return `${object}: apiVersion ${m.from}, removed in Kubernetes ${m.removedIn}; ${serves}`;
}
