// The plan's section of what the API server says before any change (reconcile/cluster-fit.ts, the
// install's own check): the classes the chart names that the cluster lacks, where install stops
// (exit 3), and the refusals and Pod Security warnings of a dry run of the pods.
import type { ObjectClient } from '../cluster/object-client.js';
import type { Logger } from 'pino';
import { readClusterFit } from '../reconcile/cluster-fit.js';
import { describeMissingClasses, missingClassesHint } from '../reconcile/named-classes.js';
import type { PlanRefusal } from './plan-types.js';

export async function planRefusals(
  client: ObjectClient,
  manifests: string,
  namespace: string,
  logger: Logger,
): Promise<PlanRefusal[]> {
  const fit = await readClusterFit(client, manifests, namespace, logger);
  return [
    ...fit.missing.map((m) => ({
      object: `${m.kind}/${m.name}`,
      kind: 'missing-class',
      blocks: true,
      message: describeMissingClasses([m])[0]!,
      wayOut: [missingClassesHint([m])],
    })),
    ...fit.refusals.map((r) => ({
      object: r.owner,
      kind: r.kind,
      blocks: r.enforced,
      message: r.message,
      wayOut: r.wayOut,
    })),
  ];
}
