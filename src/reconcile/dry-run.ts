// `install --dry-run`: the same checks (the owners of what helm would adopt among them), then
// helm's server-side dry run with --take-ownership as install would pass it; no Lease, no
// recovery, nothing written.
import { clusterRenderFlags, readClusterDiscovery, type ClusterDiscovery } from '../cluster/capabilities.js';
import { connectKube, helmDefaultNamespace, type KubeClients } from '../cluster/kube-client.js';
import { ReleaseRecords } from '../cluster/release-secrets.js';
import { ReleaseBusyError } from '../common/errors.js';
import { isPending } from '../helm/helm-results.js';
import { successSummary, writeSummary } from '../run/report.js';
import { checkWithoutCluster, rbacCheck } from './checks.js';
import { withRenderSetup } from '../run/render-setup.js';
import { applySettings, type InstallRun } from './install-run.js';
import { chartLabel } from '../run/run-context.js';
import { checkOwners, type OwnersPort } from './actions/check-owners.js';
import { adoption, everDeployed, type Step } from './decide.js';
import { readOwnedObjects } from './read-owners.js';

export async function dryRun(run: InstallRun): Promise<number> {
  const { o, logger, release, helm } = run;
  // Renders with the cluster's version and APIs, as helm's server-side dry run does. A kubeconfig
  // that cannot be loaded is reported after the checks that need no cluster (below).
  const kube = await connectKube().catch(() => undefined);
  const discovery = kube && readClusterDiscovery(kube.config).read();
  discovery?.catch(() => undefined);
  helm.setRenderFlags(clusterRenderFlags(discovery, logger));
  return withRenderSetup(
    run,
    async (plan) => {
      const manifests = await checkWithoutCluster(run, plan, o.namespace);
      const cluster = kube ?? (await connectKube());
      const namespace = o.namespace ?? helmDefaultNamespace(cluster.config);
      await rbacCheck(
        run,
        { kube: cluster, namespace, records: new ReleaseRecords(cluster, namespace, release) },
        discovery,
      )(manifests);
      run.stage('reading release history');
      const history = await helm.history(release, o.namespace, undefined, run.signal);
      const last = history.at(-1);
      if (last && isPending(last.status)) {
        throw new ReleaseBusyError(
          `release ${release} is ${last.status} (revision ${last.revision}): a dry run does not recover it`,
          {
            hint: 'Run without --dry-run: the installer recovers a release that a killed operation left pending.',
          },
        );
      }
      const takeOwnership = await judgeOwners(run, {
        kube: cluster,
        namespace,
        manifests,
        discovery,
        everDeployed: everDeployed(history),
      });
      run.stage('dry run');
      await helm.upgradeInstall(
        { ...plan.upgradeArguments(o.namespace), dryRun: true, takeOwnership },
        { signal: run.signal, env: plan.airgap.env },
      );
      logger.info({ release, dryRun: true }, 'done');
      writeSummary(undefined, {
        summary: successSummary({
          release,
          namespace: o.namespace,
          action: 'dry run',
          chart: chartLabel(run),
          seconds: (Date.now() - run.started) / 1000,
        }),
      });
      return 0;
    },
    { apply: applySettings(run) },
  );
}

/** Whose objects helm would adopt, judged as the install's owners step judges them; whether helm is given --take-ownership. */
async function judgeOwners(
  run: InstallRun,
  c: {
    kube: KubeClients;
    namespace: string;
    manifests: string;
    discovery: Promise<ClusterDiscovery> | undefined;
    everDeployed: boolean;
  },
): Promise<boolean> {
  const { release, logger } = run;
  const goal: Extract<Step, { kind: 'owners' }>['goal'] = c.everDeployed
    ? { kind: 'upgrade', status: 'out-of-date', reason: 'dry run', drift: [] }
    : { kind: 'install', reason: 'dry run' };
  const mode = adoption(goal, run.o.takeOwnership);
  if (!mode) return false;
  const { resources } = await (c.discovery ?? readClusterDiscovery(c.kube.config).read());
  const owners: OwnersPort = {
    release,
    logger,
    stage: run.stage,
    signal: run.signal,
    leaseLost: new AbortController().signal,
    releaseNamespace: c.namespace,
    liveObjects: (signal) =>
      readOwnedObjects(c.kube, { manifests: c.manifests, resources, release, releaseNamespace: c.namespace, signal }),
  };
  await checkOwners(owners, { kind: 'owners', goal, mode });
  return true;
}
