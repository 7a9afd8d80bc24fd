// The CRD step of an install or upgrade, under the Lease, before helm runs: every CRD of the
// render read live once (one GET each, in parallel; a chart without CRDs costs nothing), decided
// (crd-decision.ts), and only then acted on, so a refusal changes nothing. In order: the objects
// of each storage migration surveyed (a field the new storage version would prune refuses the
// run here, before any change), the crds/ CRDs created or updated (server-side apply as the
// installer's field manager; never deleted; one that drops versions as its intermediate CRD,
// bridged.ts), the templates' CRDs that no release owns made this release's (so helm can import
// them), a wait until every changed CRD serves what the chart's objects need, and the storage
// migrations (migrate-storage.ts), which write in the new storage version the intermediate CRD
// serves.
import type { KubeClients } from '../cluster/kube-client.js';
import { toInstallerApiError } from '../cluster/kube-errors.js';
import { HELM_FIELD_MANAGER } from '../drift/detect-drift.js';
import { ObjectApiError, objectClient, type ObjectClient } from '../cluster/object-client.js';
import { refusal } from '../drift/refusal.js';
import { InvalidInputError, PreflightError } from '../common/errors.js';
import type { Logger } from 'pino';
import { chartCrds, type ChartCrd, crdNames, type Obj } from './chart-crds.js';
import { describeCrdChanges } from './crd-changes.js';
import { type CrdDecision, type CrdPolicy, decideCrd, type Release } from './crd-decision.js';
import { INSTALLER_FIELD_MANAGER, type ManagedFieldsEntry, takeOverFields } from './field-owners.js';
import { CRD_PATH, migrateStorage, type MigrationSurvey, prunedRefusal, surveyMigration } from './migrate-storage.js';
import { waitServed } from './wait-served.js';
import { withBridgedLabel, withDroppedVersions } from './bridged.js';
import { recordsDigest, unchangedSinceApplied, withDigest } from './applied-digest.js';

export interface CrdStepInput {
  kube: KubeClients;
  /** The chart as helm renders it, crds/ included (`--include-crds`). */
  manifests: string;
  policy: CrdPolicy;
  release: Release;
  /** --skip-preflight: the migration's permissions are not asked first. */
  skipPreflight?: boolean;
  logger: Logger;
  signal?: AbortSignal;
}

export interface CrdPlan {
  crds: ChartCrd[];
  decisions: CrdDecision[];
  live: Map<string, Obj>;
}

const REFUSED_HINT = 'Ship a chart whose CRDs keep the version named above; nothing was changed.';

export interface CrdOutcome {
  created: string[];
  updated: string[];
  migrated: { name: string; objects: number; dropped: string[] }[];
  adopted: string[];
  /** The crds/ CRDs applied as intermediate CRDs (bridged.ts): finish() applies them as the chart has them. */
  bridged: string[];
  /**
   * Called once helm's upgrade succeeded: the CRDs whose new version drops versions are applied
   * as the chart has them only now (see bridged.ts); until then the dropped versions stay served.
   */
  finish(): Promise<void>;
}

/**
 * Reads and decides; changes nothing (install's step and the plan share it). `settled`: install's
 * step first reads each crds/ CRD's metadata alone, and one the installer leaves as it is (it
 * exists, and the policy never updates it or it is unchanged since applied: applied-digest.ts) is
 * neither read whole nor compared. The plan reads every CRD whole, to show what differs.
 */
export async function planCrds(
  client: ObjectClient,
  input: Pick<CrdStepInput, 'manifests' | 'policy' | 'release'>,
  o: { settled?: string[] } = {},
): Promise<CrdPlan> {
  const crds = chartCrds(input.manifests);
  const live = new Map<string, Obj>();
  const settled = new Set<string>();
  await Promise.all(
    crds.map(async (c) => {
      const path = `${CRD_PATH}/${encodeURIComponent(c.name)}`;
      if (o.settled && c.origin === 'crds') {
        const head = await client.get(path, { metadataOnly: true });
        if (!head) return;
        const metadata = (head.metadata ?? {}) as Obj;
        if (input.policy !== 'create-replace' || unchangedSinceApplied(metadata, c.digest)) {
          settled.add(c.name);
          return;
        }
      }
      const found = await client.get(path);
      if (found) live.set(c.name, found);
    }),
  );
  o.settled?.push(...settled);
  const decisions = crds.map((c): CrdDecision =>
    settled.has(c.name)
      ? { name: c.name, origin: c.origin, apply: 'none', adopt: false }
      : decideCrd(c, live.get(c.name), input.policy, input.release),
  );
  return { crds, live, decisions };
}

export async function upgradeCrds(input: CrdStepInput): Promise<CrdOutcome> {
  const outcome: CrdOutcome = {
    created: [],
    updated: [],
    migrated: [],
    adopted: [],
    bridged: [],
    finish: async () => undefined,
  };
  if (!input.manifests.includes('CustomResourceDefinition')) return outcome;
  const what = (verb: string) => `${verb} the chart's CRDs`;
  try {
    const client = await objectClient(input.kube, input.signal);
    const settled: string[] = [];
    input.logger.debug({ phase: 'crd step' }, 'CRD step: reading the live CRDs');
    const plan = await planCrds(client, input, { settled });
    input.logger.debug(
      { phase: 'crd step', read: plan.live.size, settled: settled.length },
      `CRD step: ${plan.live.size} CRDs read whole and decided, ${settled.length} settled from their metadata`,
    );
    const refused = plan.decisions.filter((d) => d.refused);
    if (refused.length > 0)
      throw new InvalidInputError(refused.map((d) => d.refused).join('\n'), { hint: REFUSED_HINT });
    if (!input.skipPreflight) await checkMigrationAccess(input.kube, plan);
    await surveyMigrations(client, plan, input.release.name, input.signal);
    const applied = new Map<string, Obj>();
    const bridged = await applyCrds(client, plan, outcome, input, applied);
    await adopt(client, plan, outcome, input);
    const changed = plan.crds.filter((c) => outcome.created.includes(c.name) || outcome.updated.includes(c.name));
    await waitServed(client, changed, input.signal, undefined, applied);
    await migrate(client, plan, outcome, input);
    input.logger.debug(
      { phase: 'crd step', crds: plan.crds.length, settled: settled.length },
      `CRD step ended: ${plan.crds.length} CRDs, ${settled.length} left as they are unread (unchanged since applied, or a policy that never updates them)`,
    );
    return { ...outcome, bridged: bridged.map((c) => c.name), finish: () => finishBridged(client, bridged, input) };
  } catch (error) {
    throw toInstallerApiError(error, what('updating'), input.kube.server);
  }
}

/**
 * Every migration's objects read and checked against the new storage version's schema, before any
 * change (install and plan alike): one that would lose a field refuses the run, exit 3. Returns
 * each migrating CRD's survey (the plan shows the counts).
 */
export async function surveyMigrations(
  client: ObjectClient,
  plan: CrdPlan,
  release: string,
  signal?: AbortSignal,
): Promise<Map<string, MigrationSurvey>> {
  const surveys = new Map<string, MigrationSurvey>();
  const refused: string[] = [];
  for (const [i, d] of plan.decisions.entries()) {
    if (!d.migrate) continue;
    const crd = plan.crds[i]!;
    const survey = await surveyMigration(client, plan.live.get(d.name)!, crd.body, d.migrate, signal);
    surveys.set(d.name, survey);
    if (survey.pruned.length > 0) refused.push(prunedRefusal(crd, d.migrate, survey.pruned, release));
  }
  if (refused.length > 0)
    throw new InvalidInputError(refused.join('\n'), {
      hint: 'Ship a chart whose CRD keeps the fields named above in its storage version; nothing was changed.',
    });
  return surveys;
}

/** Under the intermediate CRDs: each migration's objects written in the new storage version, then its stored versions trimmed. */
async function migrate(client: ObjectClient, plan: CrdPlan, outcome: CrdOutcome, input: CrdStepInput): Promise<void> {
  for (const [i, d] of plan.decisions.entries()) {
    if (!d.migrate) continue;
    const crd = plan.crds[i]!;
    input.logger.info(
      { crd: d.name, storage: d.migrate.storage, drop: d.migrate.drop },
      `CRD ${d.name}: rewriting its objects in ${d.migrate.storage}, so the new chart can drop ${d.migrate.drop.join(', ')}`,
    );
    const done = await migrateStorage(client, crd.body, d.migrate, input.signal);
    if ('pruned' in done) {
      throw new InvalidInputError(
        `${prunedRefusal(crd, d.migrate, done.pruned, input.release.name)} (The API server's dry run pruned them: no object was written; the CRD serves ${d.migrate.drop.join(', ')} beside ${d.migrate.storage} until a chart that keeps the fields goes in.)`,
        {
          hint: 'Ship a chart whose CRDs keep the fields named above; no object was written, no release changed.',
        },
      );
    }
    const objects = done.objects;
    outcome.migrated.push({ name: d.name, objects, dropped: d.migrate.drop });
    input.logger.info(
      { crd: d.name, objects, storedVersions: d.migrate.keep },
      `CRD ${d.name}: ${objects} objects stored in ${d.migrate.storage}; ${d.migrate.drop.join(', ')} dropped from its stored versions`,
    );
  }
}

/**
 * Side by side; every apply has ended (done or failed) before the first failure is thrown, naming
 * its CRD. Returns the CRDs applied with their dropped versions still served (bridged.ts).
 */
async function applyCrds(
  client: ObjectClient,
  plan: CrdPlan,
  outcome: CrdOutcome,
  input: CrdStepInput,
  applied: Map<string, Obj>,
): Promise<ChartCrd[]> {
  const bridged: ChartCrd[] = [];
  const results = await Promise.allSettled(
    plan.crds.map(async (crd, i) => {
      const d = plan.decisions[i]!;
      const live = plan.live.get(crd.name);
      // Equal to the chart's, but not marked as the installer's apply: applied once, unchanged, to record it.
      const record =
        d.apply === 'none' &&
        crd.origin === 'crds' &&
        input.policy === 'create-replace' &&
        live !== undefined &&
        recordsDigest((live.metadata ?? {}) as Obj, crd.digest);
      if (d.apply === 'none' && !record) return;
      try {
        applied.set(crd.name, await applyOne(client, crd, live, input, bridged));
      } catch (error) {
        throw applyError(
          error,
          `${d.apply === 'create' ? 'creating' : 'updating'} CRD ${crd.name} (${crd.source})`,
          input,
        );
      }
      if (record) {
        input.logger.debug({ crd: crd.name }, `CRD ${crd.name}: unchanged; applied again to record it as applied`);
        return;
      }
      (d.apply === 'create' ? outcome.created : outcome.updated).push(crd.name);
      input.logger.info(
        { crd: crd.name, source: crd.source, action: d.apply },
        `CRD ${crd.name} ${d.apply === 'create' ? 'created' : `updated: ${describeCrdChanges(d.changes!)}`}`,
      );
    }),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return bridged;
}

/** One CRD applied; returns what the API server answered. `bridged` gets it when applied as an intermediate CRD. */
async function applyOne(
  client: ObjectClient,
  crd: ChartCrd,
  live: Obj | undefined,
  input: CrdStepInput,
  bridged: ChartCrd[],
): Promise<Obj> {
  const path = `${CRD_PATH}/${encodeURIComponent(crd.name)}`;
  if (crd.origin === 'templates') {
    // As helm applies it (its manager and ownership metadata); helm's own upgrade drops what it drops.
    return client.apply(path, asHelmApplies(withDroppedVersions(crd.body, live!), input.release), {
      fieldManager: HELM_FIELD_MANAGER,
      dryRun: false,
    });
  }
  if (live) await takeOver(client, path, live, String(crd.body.apiVersion));
  const body = live ? withDroppedVersions(crd.body, live) : crd.body;
  if (body !== crd.body) bridged.push(crd);
  // The chart's CRD carries its digest; an intermediate one none (applied-digest.ts).
  return client.apply(path, body === crd.body ? withDigest(crd) : withBridgedLabel(body, input.release.name), {
    fieldManager: INSTALLER_FIELD_MANAGER,
    dryRun: false,
  });
}

function applyError(error: unknown, what: string, input: CrdStepInput): Error {
  // The API server refused the chart's CRD itself (it is invalid): the chart must change.
  if (error instanceof ObjectApiError && (error.code === 400 || error.code === 422)) {
    return new InvalidInputError(`${what} was refused: ${refusal(error)}`, {
      hint: "The chart's CRD is not valid for this cluster: tell the vendor; nothing else of the release was changed.",
    });
  }
  return toInstallerApiError(error, what, input.kube.server);
}

/** The CRD with the ownership metadata helm sets on every object it applies. */
function asHelmApplies(crd: Obj, release: Release): Obj {
  const meta = (crd.metadata ?? {}) as { labels?: Obj; annotations?: Obj };
  return {
    ...crd,
    metadata: {
      ...meta,
      labels: { ...meta.labels, 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: {
        ...meta.annotations,
        'meta.helm.sh/release-name': release.name,
        'meta.helm.sh/release-namespace': release.namespace,
      },
    },
  };
}

/** After helm's upgrade: the bridged CRDs as the chart has them, their dropped versions gone. */
async function finishBridged(client: ObjectClient, bridged: readonly ChartCrd[], input: CrdStepInput): Promise<void> {
  for (const crd of bridged) {
    try {
      await client.apply(`${CRD_PATH}/${encodeURIComponent(crd.name)}`, withDigest(crd), {
        fieldManager: INSTALLER_FIELD_MANAGER,
        dryRun: false,
      });
    } catch (error) {
      throw toInstallerApiError(
        error,
        `dropping the versions the chart no longer has from CRD ${crd.name}`,
        input.kube.server,
      );
    }
    input.logger.info(
      { crd: crd.name },
      `CRD ${crd.name}: the versions the chart dropped are no longer served, now that the release no longer uses them`,
    );
  }
}

/**
 * The fields helm or kubectl set before become the installer's, so the apply can drop them
 * (field-owners.ts). The patch holds only at the resourceVersion the ownership was read at; the
 * CRD may have changed since it was read (its stored versions trimmed by a migration, the API
 * server's own status update), so it is read again and the patch made again, a few times.
 */
async function takeOver(
  client: ObjectClient,
  path: string,
  read: Obj,
  apiVersion: string,
  attempts = 3,
): Promise<void> {
  let live: Obj | undefined = read;
  for (let attempt = 1; live; attempt++) {
    const meta = live.metadata as { managedFields?: ManagedFieldsEntry[]; resourceVersion?: string };
    const fields = takeOverFields(meta.managedFields ?? [], apiVersion);
    if (!fields) return;
    try {
      const ops = [
        { op: 'test' as const, path: '/metadata/resourceVersion', value: meta.resourceVersion },
        { op: 'replace' as const, path: '/metadata/managedFields', value: fields },
      ];
      await client.jsonPatch(path, ops, INSTALLER_FIELD_MANAGER);
      return;
    } catch (error) {
      // 422: the test failed (the CRD changed since it was read); 409: a conflict.
      if (!(error instanceof ObjectApiError) || (error.code !== 422 && error.code !== 409) || attempt >= attempts)
        throw error;
      live = await client.get(path);
    }
  }
}

/** A templates CRD no release owns (crds/ made it, an older chart version): helm's ownership metadata, so helm imports it. */
async function adopt(client: ObjectClient, plan: CrdPlan, outcome: CrdOutcome, input: CrdStepInput): Promise<void> {
  for (const d of plan.decisions.filter((x) => x.adopt)) {
    await client.mergePatch(
      `${CRD_PATH}/${encodeURIComponent(d.name)}`,
      {
        metadata: {
          labels: { 'app.kubernetes.io/managed-by': 'Helm' },
          annotations: {
            'meta.helm.sh/release-name': input.release.name,
            'meta.helm.sh/release-namespace': input.release.namespace,
          },
        },
      },
      INSTALLER_FIELD_MANAGER,
    );
    outcome.adopted.push(d.name);
    input.logger.info(
      { crd: d.name, release: input.release.name },
      `CRD ${d.name}: no release owned it (the chart moved it out of crds/); adopted by release ${input.release.name}`,
    );
  }
}

/** A migration reads and writes every object of a kind and the CRD's status: asked before any of it (exit 6). */
async function checkMigrationAccess(kube: KubeClients, plan: CrdPlan): Promise<void> {
  const migrations = plan.decisions.filter((d) => d.migrate);
  if (migrations.length === 0) return;
  const { RbacQueries } = await import('../rbac/rbac-preflight.js');
  const queries = RbacQueries.of(kube.config);
  const needed = migrations.flatMap((d) => {
    const { group, plural } = crdNames(plan.live.get(d.name)!);
    return [
      ...['list', 'update'].map((verb) => ({ group, resource: plural, verb })),
      { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions/status', verb: 'patch' },
    ];
  });
  const answers = await Promise.all(needed.map((p) => queries.allowed(p)));
  const denied = needed.filter((_, i) => !answers[i]);
  if (denied.length === 0) return;
  throw new PreflightError(
    `missing permissions for the CRD storage migration: ${[...new Set(denied.map((p) => `${p.verb} ${p.resource}.${p.group} (cluster-wide)`))].join(', ')}`,
    {
      hint: "Grant the installer's ServiceAccount these verbs in its ClusterRole (manifests/installer.yaml, kots/installer-job.yaml), then run again; nothing was changed.",
    },
  );
}
