// install's quick way, when nothing is rewritten: `helm upgrade --install` starts as soon as the
// release read shows an upgrade or a first install ahead, and renders while this run takes the
// Lease, instead of after a render check of our own. Helm waits at the render gate
// (helm/render-gate.ts) with exactly what it will apply; the RBAC preflight checks that, the
// Lease is taken, and only then does helm go on. Anything else (helm stopping before it rendered,
// the release changed before the Lease was held) stops helm at the gate, having written nothing,
// and the caller goes on the usual way: render check, Lease, recovery, upgrade.
import type { ChartInfo } from '../chart.js';
import type { ClusterDiscovery } from '../cluster/capabilities.js';
import type { ReleaseLease } from '../cluster/release-lease.js';
import type { RevisionLabels } from '../cluster/release-secrets.js';
import type { UpgradeArguments } from '../helm/helm-args.js';
import type { HelmClient } from '../helm/helm-client.js';
import { hasOwnPostRenderer } from '../helm/render-flags.js';
import { prepareRenderGate } from '../helm/render-gate.js';
import { chartCrdTexts, crdNames } from '../rbac/chart-crds.js';
import type { Logger } from '../logger.js';
import { interrupted } from '../interrupted.js';
import { awaitInOrder } from '../overlap.js';
import type { RunState } from '../run-state.js';

export interface GateEligibility {
  /** What is in crds/, for the RBAC preflight (a render check would have included it). */
  crdTexts: string[];
  /**
   * A first install of a chart with crds/: helm creates those before it renders, so it starts
   * with --skip-crds, and the gate lets it through only when every one of them exists already
   * (then helm would have created none: the same install). Checked while helm renders.
   */
  crdsMustExist: boolean;
}

/**
 * Whether this run may start helm before its checks. Helm 4 only (helm 3 does not post-render
 * hooks, so the gate would not see them); not with an image rewrite (it is the post-renderer) or
 * a post-renderer of the user's; only on a release that is new or whose last revision is
 * deployed (anything else may need recovering first); a first install only when its crds/ can be
 * read (a chart directory, no archived subchart).
 */
export function gateEligibility(a: { helmMajor: 3 | 4; rewriting: boolean; helmArgs: string[]; chart: ChartInfo; last: RevisionLabels | undefined }): GateEligibility | undefined {
  if (a.helmMajor !== 4 || a.rewriting || hasOwnPostRenderer(a.helmArgs)) return undefined;
  if (a.last && a.last.status !== 'deployed') return undefined;
  const texts = a.chart.format === 'directory' ? chartCrdTexts(a.chart.path) : undefined;
  // An upgrade creates nothing from crds/.
  if (a.last) return { crdTexts: texts ?? [], crdsMustExist: false };
  if (!texts) return undefined;
  return { crdTexts: texts, crdsMustExist: texts.length > 0 };
}

/** Why the quick way was given up (helm stopped at the gate or before it, having written nothing). */
class GiveUp extends Error {}

/** Every CRD in the crds/ texts served by the cluster (an established CRD is in discovery as <plural>.<group>, its name). */
async function missingCrds(texts: string[], discovery: Promise<ClusterDiscovery> | undefined): Promise<string | undefined> {
  const names = crdNames(texts);
  if (!names) return 'a file in crds/ is not a list of CustomResourceDefinitions the installer can read';
  const d = await discovery?.catch(() => undefined);
  if (!d) return "the cluster's discovery did not answer";
  const served = new Set([...d.resources.values()].map((r) => `${r.resource}.${r.group}`));
  const missing = names.filter((n) => !served.has(n));
  return missing.length > 0 ? `CRDs not in the cluster yet: ${missing.join(', ')}` : undefined;
}

export interface GatedUpgrade {
  helm: HelmClient;
  state: RunState;
  logger: Logger;
  /** helm upgrade's arguments, without a post-renderer (the gate is added). */
  args: UpgradeArguments;
  workDir: string;
  eligible: GateEligibility;
  discovery: Promise<ClusterDiscovery> | undefined;
  /** The RBAC preflight on what helm will apply (crds/ included). */
  rbacCheck(manifests: string): Promise<void>;
  /** Takes the Lease (once); a namespace it must create waits for `checked`. */
  acquire(checked: () => Promise<void>, signal: AbortSignal): Promise<ReleaseLease>;
  /** The records as they are under the Lease. */
  recordsUnderLease(): Promise<RevisionLabels[]>;
  /** The last revision as the release read saw it before helm started. */
  last: RevisionLabels | undefined;
  /** From the moment helm may apply to the summary (install-command's). */
  upgraded(held: ReleaseLease, run: (helmSignal: AbortSignal) => Promise<{ revision?: number }>): Promise<number>;
}

/** The exit code, or undefined when the caller must go on the usual way (helm wrote nothing). */
export async function gatedUpgrade(g: GatedUpgrade): Promise<number | undefined> {
  const gate = prepareRenderGate(g.workDir);
  // Until the gate opens helm has written nothing, so a signal kills it outright (a render can go
  // on for a minute after SIGTERM); once through, SIGTERM, so helm can roll back.
  let through = false;
  const killHelm = new AbortController();
  const stopHelm = new AbortController();
  const stop = () => {
    gate.stop();
    if (through) stopHelm.abort();
    else killHelm.abort();
  };
  g.state.signal.addEventListener('abort', stop, { once: true });
  const upgrading = g.helm.upgradeInstall(
    {
      ...g.args,
      postRendererArgs: [...gate.helmArgs, ...g.args.postRendererArgs],
      extraArgs: [...(g.eligible.crdsMustExist ? ['--skip-crds'] : []), ...g.args.extraArgs],
    },
    { signal: stopHelm.signal, killSignal: killHelm.signal, env: gate.env },
  );
  upgrading.catch(() => undefined);
  // Stopped at the gate (or before it): wait for helm to end, so nothing runs on after this run.
  const stopped = async () => {
    gate.stop();
    await upgrading.catch(() => undefined);
  };
  try {
    g.state.progress.action = 'render check';
    const ended = upgrading.then(
      () => new GiveUp('helm ended without reaching the render gate'),
      (error: unknown) => new GiveUp(`helm stopped before it rendered: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`),
    );
    const crdsMissing = g.eligible.crdsMustExist ? missingCrds(g.eligible.crdTexts, g.discovery) : Promise.resolve(undefined);
    const rendered = Promise.race([gate.reached, ended.then((e) => Promise.reject(e))]).then(async (manifests) => {
      const missing = await crdsMissing;
      if (missing) throw new GiveUp(missing);
      return manifests;
    });
    rendered.catch(() => undefined);
    const checked = rendered.then((manifests) => g.rbacCheck([manifests, ...g.eligible.crdTexts].join('\n---\n')));
    checked.catch(() => undefined);
    const stopWaiting = new AbortController();
    const taking = g.acquire(() => checked, AbortSignal.any([g.state.signal, stopWaiting.signal]));
    taking.catch(() => undefined);
    try {
      await awaitInOrder(g.state.progress, [
        ['render check', rendered],
        ['rbac preflight', checked],
      ] as const);
    } catch (error) {
      stopWaiting.abort();
      await taking.catch(() => undefined);
      await stopped();
      if (g.state.signal.aborted) throw interrupted(g.state.progress.action);
      if (error instanceof GiveUp) {
        g.logger.info({ cause: error.message }, 'helm was stopped at the render gate, having written nothing: the run goes on the usual way');
        return undefined;
      }
      throw error;
    }
    g.state.progress.action = 'waiting for the release lease';
    let held: ReleaseLease;
    try {
      held = await taking;
      const now = (await g.recordsUnderLease()).at(-1);
      if (now?.revision !== g.last?.revision || now?.status !== g.last?.status) {
        g.logger.info({ before: g.last, now }, 'the release changed before the Lease was held: helm is stopped at the render gate, and the run goes on the usual way');
        await stopped();
        return undefined;
      }
    } catch (error) {
      await stopped();
      throw error;
    }
    if (g.state.signal.aborted) {
      await stopped();
      throw interrupted('waiting for the release lease');
    }
    through = true;
    gate.open();
    return await g.upgraded(held, (helmSignal) => {
      if (helmSignal.aborted) stop();
      else helmSignal.addEventListener('abort', stop, { once: true });
      return upgrading;
    });
  } finally {
    g.state.signal.removeEventListener('abort', stop);
    gate.dispose();
  }
}
