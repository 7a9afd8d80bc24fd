// The app rollback (app-revision.ts decides the steps from where each release is): each release
// goes back to its revision at the last good app revision (helm rollback, waited for), or is
// uninstalled when that revision did not have it, one at a time, dependents first, each under its release's Lease
// like any change. A step that fails is named with what is left to do and the others still run:
// the more of the app is back, the less is a combination nobody tested.
import type { KubeClients } from '../cluster/kube-client.js';
import { ReleaseRecords } from '../cluster/release-secrets.js';
import { toInstallerError } from '../run/report.js';
import type { InstallerError } from '../common/errors.js';
import { INPUT_DIGEST_LABEL } from '../reconcile/release-digest.js';
import type { Deployed, RollbackStep } from './app-revision.js';
import { OWNER_LABEL } from './inventory.js';
import { underReleaseLease, type PruneContext } from './prune-releases.js';

export type RollbackResult =
  { step: RollbackStep; done: true; revision?: number } | { step: RollbackStep; done: false; error: InstallerError };

export interface RollbackContext extends PruneContext {
  o: PruneContext['o'] & { historyMax: number };
}

/**
 * Where each release of the plan is, in the plan's order: its deployed revision, that revision's
 * input digest, and whether its newest record is `app`'s (as prune-releases.ts's ownership()), as
 * its records say (one list each); absent when it is not installed.
 */
export async function deployedRevisions(
  kube: KubeClients,
  keys: readonly string[],
  app: string,
): Promise<Map<string, Deployed>> {
  const found = await Promise.all(
    keys.map(async (key): Promise<[string, Deployed | undefined]> => {
      const [namespace, name] = splitKey(key);
      const records = await new ReleaseRecords(kube, namespace, name).current();
      const deployed = records.filter((r) => r.status === 'deployed').at(-1);
      const digest = deployed?.labels[INPUT_DIGEST_LABEL];
      const ours = records.at(-1)?.labels[OWNER_LABEL] === app;
      return [key, deployed && { revision: deployed.revision, ...(digest ? { digest } : {}), ours }];
    }),
  );
  return new Map(found.filter((f): f is [string, Deployed] => f[1] !== undefined));
}

export async function rollBackApp(c: RollbackContext, steps: readonly RollbackStep[]): Promise<RollbackResult[]> {
  const results: RollbackResult[] = [];
  for (const step of steps) {
    const [namespace, name] = splitKey(step.key);
    try {
      const revision = await underReleaseLease(c, { namespace, name }, () => stepBack(c, step, namespace, name));
      results.push({ step, done: true, ...(revision !== undefined ? { revision } : {}) });
    } catch (error) {
      results.push({ step, done: false, error: toInstallerError(error) });
    }
  }
  return results;
}

/** The revision helm made by rolling back (a rollback is a new revision), or none for an uninstall. */
async function stepBack(
  c: RollbackContext,
  step: RollbackStep,
  namespace: string,
  name: string,
): Promise<number | undefined> {
  if (step.kind === 'uninstall') {
    c.logger.info(
      { release: step.key },
      `app rollback: uninstalling ${step.key}, which this run installed first (revision ${step.from})`,
    );
    await c.helm.uninstall({ release: name, namespace, timeout: c.o.timeout }, { signal: c.signal });
    return undefined;
  }
  c.logger.info(
    { release: step.key, from: step.from, to: step.to },
    `app rollback: ${step.key} back from revision ${step.from} to revision ${step.to}`,
  );
  await c.helm.rollback(
    { release: name, namespace, revision: step.to, timeout: c.o.timeout, historyMax: c.o.historyMax },
    { signal: c.signal },
  );
  return (await c.helm.history(name, namespace, 1, c.signal)).at(-1)?.revision;
}

/** Pure: the summary line of a step. */
export function describeRollback(r: RollbackResult): string {
  return `${r.step.key}: ${rollbackText(r)}`;
}

/**
 * Pure: what happened to the release, or what is left to do. The cause comes last: a summary line
 * is cut at 300 characters (report.ts fitSummary), and helm's causes run long; what to do must stay.
 */
export function rollbackText(r: RollbackResult): string {
  const what =
    r.step.kind === 'uninstall'
      ? 'uninstalled (new in the failed app revision)'
      : `rolled back from revision ${r.step.from} to ${r.step.to}${r.done && r.revision ? ` (now revision ${r.revision})` : ''}`;
  if (r.done) return what;
  const todo =
    r.step.kind === 'uninstall'
      ? `helm uninstall ${splitKey(r.step.key)[1]} -n ${splitKey(r.step.key)[0]}`
      : `helm rollback ${splitKey(r.step.key)[1]} ${r.step.to} -n ${splitKey(r.step.key)[0]}`;
  return `NOT ${what}; left to do: ${todo}, or run the installer again (exit ${r.error.exitCode}: ${r.error.message.split('\n')[0]})`;
}

function splitKey(key: string): [string, string] {
  const at = key.indexOf('/');
  return [key.slice(0, at), key.slice(at + 1)];
}
