// `helm-installer plan` (and `install` with HELM_INSTALLER_PLAN_ONLY=true): what install would do
// and why, and every object it would create, change or delete. The install's own pieces, read
// only: the render setup's render (render-setup.ts), the release state and the decision table
// (reconcile/read-state.ts, reconcile/decide.ts), the live objects compared as the drift check
// compares them (compare-live.ts). No Lease, no write: the dry runs persist nothing.
import {
  clusterRenderFlags,
  readClusterDiscovery,
  type ClusterDiscovery,
  type ResourceIndex,
} from '../cluster/capabilities.js';
import { connectKube, helmDefaultNamespace } from '../cluster/kube-client.js';
import { ReleaseRecords } from '../cluster/release-secrets.js';
import { findOrphanedClaims } from '../drift/find-orphaned-claims.js';
import { manifestObjects, placeObjects } from '../drift/manifest-objects.js';
import { mapRemovedApis } from '../drift/map-removed-apis.js';
import { servedFrom } from '../drift/removed-apis.js';
import { objectClient } from '../cluster/object-client.js';
import { checkWithoutCluster, unservedApisCheck } from '../reconcile/checks.js';
import { adoption, decide, everDeployed, type Action, type ReleaseState } from '../reconcile/decide.js';
import { ignoredFieldPins } from '../reconcile/ignored-fields.js';
import { runInputs } from '../reconcile/install-inputs.js';
import { readReleaseState, revisionManifest } from '../reconcile/read-state.js';
import { applySettings, ignoreRules, type InstallRun } from '../reconcile/install-run.js';
import { chartLabel, type ClusterRun } from '../run/run-context.js';
import { withRenderSetup, type RenderSetup } from '../run/render-setup.js';
import { compareWithLive } from './compare-live.js';
import { planCrdSection } from './plan-crds.js';
import { planRefusals } from './plan-refusals.js';
import { planEntries } from './plan-entries.js';
import type { PlanApiMapping, PlanClaimsAtRisk, PlanDecision, PlanObjectInput, PlanReport } from './plan-types.js';
import { markRecreated } from './recreate-entries.js';
import { markOwnership } from './ownership-entries.js';

export interface PreviewOptions {
  showSecrets: boolean;
}

export async function buildPlanReport(run: InstallRun, p: PreviewOptions): Promise<PlanReport> {
  const { o, logger, release } = run;
  run.stage('connecting to the cluster');
  const kube = await connectKube();
  const namespace = o.namespace ?? helmDefaultNamespace(kube.config);
  run.state.progress.namespace = namespace;
  const cluster: ClusterRun = { kube, namespace, records: new ReleaseRecords(kube, namespace, release) };
  const discovery = readClusterDiscovery(kube.config).read();
  discovery.catch(() => undefined);
  run.helm.setRenderFlags(clusterRenderFlags(discovery, logger));
  const inputs = runInputs(run);
  run.stage('reading release state');
  // Drift is read below from the same live objects the plan compares, not object by object.
  const reading = readReleaseState({
    ...cluster,
    inputs,
    drift: 'off',
    ignore: ignoreRules(run),
    forceUpgrade: o.forceUpgrade,
    discovery: () => discovery,
    logger,
    signal: run.signal,
  });
  reading.then(
    () => inputs.stop(),
    () => inputs.stop(),
  );
  // Without ignore rules the render needs nothing of the release: it runs beside the read.
  const pins = ignoreRules(run).length > 0 ? await ignoredFieldPins(run, cluster, await reading, discovery) : undefined;
  return withRenderSetup(run, (plan) => planFromRender(run, p, { cluster, reading, discovery }, plan), {
    pins,
    apply: applySettings(run),
  });
}

/** What the plan reads before the render, started at once: the release state and the discovery. */
interface PlanReads {
  cluster: ClusterRun;
  reading: Promise<ReleaseState>;
  discovery: Promise<ClusterDiscovery>;
}

/** The render compared with the live objects, then what install would do with them and why. */
async function planFromRender(
  run: InstallRun,
  p: PreviewOptions,
  reads: PlanReads,
  plan: RenderSetup,
): Promise<PlanReport> {
  const { o, logger, release } = run;
  const { cluster, reading, discovery } = reads;
  const namespace = cluster.namespace;
  const [state, checked] = await Promise.all([reading, checkWithoutCluster(run, plan, namespace)]);
  // What install would refuse before helm, plan refuses the same way.
  await unservedApisCheck(checked, discovery);
  const { manifests, output } = await plan.render(namespace);
  const rendered = [...output].join('');
  run.stage('comparing with the cluster');
  const { resources, lastManifest, client, compared } = await compareRendered(run, reads, state, rendered);
  // The drift the decision needs is what the comparison found, when install would look for it.
  const withDrift: ReleaseState =
    state.inputs?.equal && o.drift !== 'off' ? { ...state, drift: compared.drift } : state;
  const objects = recreated(compared.objects, {
    lastManifest,
    rendered,
    resources,
    release,
    releaseNamespace: namespace,
    recreate: o.recreateImmutable === 'auto' && everDeployed(state.records),
  });
  const planned = planEntries(objects, { showSecrets: p.showSecrets });
  const action = decide(withDrift, o);
  const decision = planDecision(action);
  // Whose objects helm would adopt, as install's owners step judges them.
  const mode = action.kind === 'install' || action.kind === 'upgrade' ? adoption(action, o.takeOwnership) : undefined;
  const entries = markOwnership(planned.entries, objects, { release, namespace }, mode);
  const hooks = planned.hooks;
  const [crds, refusals, dataAtRisk] = runsHooks(decision)
    ? await Promise.all([
        planCrdSection(client, manifests, o.crds, { name: release, namespace }),
        planRefusals(client, manifests, namespace, logger),
        everDeployed(state.records) ? claimsAtRisk(run, cluster, { lastManifest, rendered, resources }) : [],
      ])
    : [undefined, [], []];
  const removedApis = planMappings(state);
  return {
    release,
    namespace,
    chart: chartLabel(run),
    decision,
    entries,
    hooks: runsHooks(decision) ? hooks : [],
    ...(crds ? { crds } : {}),
    ...(removedApis.length > 0 ? { removedApis } : {}),
    ...(refusals.length > 0 ? { refusals } : {}),
    ...(dataAtRisk.length > 0 ? { dataAtRisk } : {}),
  };
}

/**
 * The render against the live objects and the last applied revision's manifest, as install will
 * have mapped it: the removed APIs of the record are named apart.
 */
async function compareRendered(run: InstallRun, reads: PlanReads, state: ReleaseState, rendered: string) {
  const { kube, namespace, records } = reads.cluster;
  const base = lastApplied(state);
  const { resources, capabilities } = await reads.discovery;
  const stored = base === undefined ? undefined : await revisionManifest(kube, records, base);
  const lastManifest =
    stored === undefined ? undefined : mapRemovedApis(stored, servedFrom(capabilities.apiVersions)).manifest;
  const client = await objectClient(kube, run.signal);
  const compared = await compareWithLive(kube, client, {
    rendered,
    lastManifest,
    firstInstall: !everDeployed(state.records),
    resources,
    releaseNamespace: namespace,
    release: run.release,
    rules: ignoreRules(run),
  });
  return { resources, lastManifest, client, compared };
}

/** The objects install recreates before the upgrade marked (with auto, on a release deployed before). */
function recreated(
  objects: PlanObjectInput[],
  r: {
    lastManifest?: string;
    rendered: string;
    resources: ResourceIndex;
    release: string;
    releaseNamespace: string;
    recreate: boolean;
  },
): PlanObjectInput[] {
  if (!r.recreate || r.lastManifest === undefined) return objects;
  const place = (text: string) =>
    placeObjects(manifestObjects(text), r.resources, { releaseNamespace: r.releaseNamespace, release: r.release });
  return markRecreated(objects, { previous: place(r.lastManifest), next: place(r.rendered) }, r);
}

/** Pure: the stored records' removed APIs, one row per object. */
function planMappings(state: ReleaseState): PlanApiMapping[] {
  return (state.removedApis ?? []).flatMap((r) =>
    r.mappings.map((m) => ({
      revision: r.revision,
      kind: m.kind,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      name: m.name,
      from: m.from,
      to: m.to,
      removedIn: m.removedIn,
    })),
  );
}

/** What install's claims step finds before an upgrade of a release deployed before: the claims left behind. */
async function claimsAtRisk(
  run: InstallRun,
  cluster: ClusterRun,
  r: { lastManifest?: string; rendered: string; resources: ResourceIndex },
): Promise<PlanClaimsAtRisk[]> {
  if (r.lastManifest === undefined) return [];
  const common = {
    previousManifest: r.lastManifest,
    manifests: r.rendered,
    release: run.release,
    releaseNamespace: cluster.namespace,
    resources: r.resources,
    signal: run.signal,
  };
  const orphans = await findOrphanedClaims(cluster.kube, common);
  return orphans.map((o) => ({
    statefulSet: o.statefulSet.name,
    namespace: o.statefulSet.namespace,
    kept: o.kept,
    claims: o.claims,
    policy: run.o.orphanedClaims,
  }));
}

/** The revision helm prunes against: the last deployed one (a stuck or failed one is recovered or replaced first). */
function lastApplied(state: ReleaseState): number | undefined {
  const deployed = state.records.filter((r) => r.status === 'deployed').at(-1);
  return (deployed ?? state.records.at(-1))?.revision;
}

/** Pure: whether the action runs helm, and with it the chart's hooks (a drift correction or nothing does not). */
export function runsHooks(decision: PlanDecision): boolean {
  return decision.action === 'install' || decision.action === 'upgrade' || decision.action === 'recover';
}

/** Pure: the decision as the plan states it. */
export function planDecision(action: Action): PlanDecision {
  switch (action.kind) {
    case 'install':
      return { action: 'install', reason: action.reason };
    case 'upgrade':
      return { action: 'upgrade', reason: action.reason };
    case 'recover':
      return {
        action: 'recover',
        reason: `revision ${action.revision} is ${action.pendingStatus} (a killed operation): install rolls it back, then decides again on the state below`,
      };
    case 'correct-drift':
      return {
        action: 'correct drift',
        reason: `${action.drift.length} object(s) differ from revision ${action.revision}: install puts them back, no new revision`,
      };
    case 'skip':
      return action.status === 'drifted'
        ? {
            action: 'nothing',
            reason: `${action.drift.length} object(s) differ from revision ${action.revision}, left as they are (--drift warn)`,
          }
        : {
            action: 'nothing',
            reason: `chart and values equal revision ${action.revision}, which is deployed and healthy`,
          };
  }
}
