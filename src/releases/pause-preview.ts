// "Pause automatic changes" (--suspend) and "Preview only" (--plan-only) both ticked: the pause
// wins. A maintenance window promises that nothing is read, changed or removed, so no preview is
// made either (a preview reads every object of the release); but it is not silent: the Suspended
// Event is written as for a pause alone, and it, the log and stderr say the preview was not made
// and how to get it. Pure decisions, so that the command's wiring and the run agree.

export interface PausePreviewOptions {
  suspend: boolean;
  planOnly: boolean;
  dryRun: boolean;
}

/** Does the run write Events and notifications? A pause always does (its Suspended Event); a dry run or a preview alone changes nothing and tells nothing. */
export function tellsOutcomes(o: PausePreviewOptions): boolean {
  if (o.suspend) return true;
  return !o.dryRun && !o.planOnly;
}

const SUSPENDED =
  'suspended (HELM_INSTALLER_SUSPEND=true): nothing read, changed or removed; unset it and redeploy to resume';
const PREVIEW_SKIPPED =
  'no preview made: HELM_INSTALLER_PLAN_ONLY=true too, and a pause wins; unset HELM_INSTALLER_SUSPEND (untick "Pause automatic changes") to see the preview';

/** The note of each Suspended Event. */
export function suspendedNote(o: Pick<PausePreviewOptions, 'planOnly'>): string {
  return o.planOnly ? `${SUSPENDED}; ${PREVIEW_SKIPPED}` : SUSPENDED;
}

/** What the run prints on stderr after the list of releases left as they are. */
export function suspendedNext(o: Pick<PausePreviewOptions, 'planOnly'>): string[] {
  return [
    ...(o.planOnly ? ['  no preview: "preview only" is ticked too, and a pause wins (nothing is read)'] : []),
    '  next: unset HELM_INSTALLER_SUSPEND (or untick "pause automatic changes") and redeploy to resume',
  ];
}
