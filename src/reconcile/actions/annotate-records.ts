// Helm's release records (Secrets sh.helm.release.v1.<release>.v<N>) get the KOTS app slug too:
// they hold the chart's values, passwords included, and `kubectl kots remove --undeploy` would
// leave them behind, and with them a release whose objects are gone. Helm has no way to annotate
// its own records, so they are patched after each helm run that writes them.
import { APP_SLUG_ANNOTATION } from '../../common/app-slug.js';
import type { InstallRun } from '../install-run.js';
import type { ClusterRun } from '../../run/run-context.js';

/** Best effort: a failure is a warning (the release itself is done); the next helm run tries again. */
export async function annotateReleaseRecords(run: InstallRun, cluster: ClusterRun): Promise<void> {
  const slug = run.o.appSlug;
  if (slug === undefined) return;
  try {
    const patched = await cluster.records.annotateAll(APP_SLUG_ANNOTATION, slug);
    if (patched > 0)
      run.logger.debug(
        { release: run.release, records: patched, [APP_SLUG_ANNOTATION]: slug },
        'release records annotated with the app slug',
      );
  } catch (error) {
    run.logger.warn(
      { release: run.release, cause: error instanceof Error ? error.message.split('\n')[0] : String(error) },
      `could not annotate the release records with ${APP_SLUG_ANNOTATION}: kubectl kots remove will leave them (delete them with: kubectl delete secret -l owner=helm,name=${run.release})`,
    );
  }
}
