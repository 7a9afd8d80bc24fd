// The plan's CRD section: install's own CRD decisions (src/crds/), read the same way and changing
// nothing. A CRD install would refuse (a dropped storage version) fails the plan as it fails the
// install, with the same exit code and words.
import type { ObjectClient } from '../cluster/object-client.js';
import { InvalidInputError } from '../common/errors.js';
import type { CrdPolicy } from '../crds/crd-decision.js';
import type { PlanCrd } from './plan-types.js';

export async function planCrdSection(
  client: ObjectClient,
  manifests: string,
  policy: CrdPolicy,
  release: { name: string; namespace: string },
): Promise<PlanCrd[] | undefined> {
  if (!manifests.includes('CustomResourceDefinition')) return undefined;
  const [{ planCrds, surveyMigrations }, { describeCrdChanges, hasChanges }] = await Promise.all([
    import('../crds/upgrade-crds.js'),
    import('../crds/crd-changes.js'),
  ]);
  const plan = await planCrds(client, { manifests, policy, release });
  const { crds, decisions, live } = plan;
  const refused = decisions.filter((d) => d.refused);
  if (refused.length > 0)
    throw new InvalidInputError(refused.map((d) => d.refused).join('\n'), {
      hint: 'Ship a chart whose CRDs keep the version named above; install would change nothing.',
    });
  // The objects each migration rewrites, counted and checked as install checks them (a field lost refuses the plan too).
  const surveys = await surveyMigrations(client, plan, release.name);
  if (crds.length === 0) return undefined;
  return decisions.map((d): PlanCrd => {
    const changed = d.changes !== undefined && hasChanges(d.changes);
    const action =
      d.apply !== 'none'
        ? d.apply
        : d.origin === 'templates' && !live.has(d.name)
          ? 'create'
          : d.origin === 'templates' && changed
            ? 'update'
            : 'unchanged';
    return {
      name: d.name,
      origin: d.origin,
      action,
      ...(action === 'update' && d.changes ? { changes: describeCrdChanges(d.changes) } : {}),
      ...(d.migrate
        ? { migrate: { storage: d.migrate.storage, drop: d.migrate.drop, objects: surveys.get(d.name)?.objects ?? 0 } }
        : {}),
      ...(d.adopt ? { adopt: true } : {}),
    };
  });
}
