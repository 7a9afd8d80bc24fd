// Action "map-apis": the cluster was upgraded under the release, and a record helm reads as the
// current release names an apiVersion the cluster no longer serves. Helm builds those objects
// before every upgrade (and a rollback), so without this each run fails with "unable to build
// kubernetes objects from current release manifest" and nothing a person changes in the values
// helps. As helm-mapkubeapis does, each such record's manifest is rewritten in place, every object
// at the version that replaced it (a kind removed with no successor is dropped from the record);
// the original is kept in a Secret beside it first. Under the Lease: no helm of ours reads the
// record meanwhile. Then the loop decides again (helm upgrades, or the run skips).
import { describeMapping, type ApiMapping } from '../../drift/map-removed-apis.js';
import type { MappedRecord } from '../decide.js';
import type { ActionRun, Narration } from './action.js';

export interface MapApisPort extends Narration {
  namespace: string;
  /**
   * Rewrites the revision's record with the mappings the cluster's discovery gives now; returns
   * what was mapped (none: nothing was left to map) and the Secret that keeps the original.
   */
  mapRecord(revision: number): Promise<{ mappings: ApiMapping[]; copy: string }>;
  /** The command that puts revision `revision`'s original record back. */
  restoreCommand(revision: number): string;
}

export const mapRemovedApis: ActionRun<'map-apis', MapApisPort> = async (p, step) => {
  p.stage('mapping removed APIs in the release record');
  const mapped: MappedRecord[] = [];
  for (const { revision, mappings: seen } of step.records) {
    p.logger.info(
      { revision, objects: seen.length },
      `rewriting release record revision ${revision}: it names APIs this cluster no longer serves`,
    );
    const { mappings, copy } = await p.mapRecord(revision);
    mapped.push({ revision, mappings, copy });
    if (mappings.length === 0) continue;
    for (const m of mappings)
      p.logger.warn(
        { revision, object: `${m.kind}/${m.name}`, from: m.from, to: m.to, source: m.source },
        `removed API in the stored record: ${describeMapping(m)}`,
      );
    p.logger.warn(
      { revision, copy, restore: p.restoreCommand(revision) },
      `release record revision ${revision} named APIs this cluster no longer serves (it was upgraded since): rewrote it as helm-mapkubeapis does; the original is kept in Secret ${p.namespace}/${copy}`,
    );
  }
  return { mapped };
};
