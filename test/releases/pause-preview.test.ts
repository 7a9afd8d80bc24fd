// "Pause automatic changes" and "Preview only" both ticked: the pause wins, and it is told.
import { describe, expect, it } from 'vitest';
import { suspendedNext, suspendedNote, tellsOutcomes } from '../../src/releases/pause-preview.js';

describe('pause and preview', () => {
  it('a pause always writes its Events, beside a preview too; a preview or a dry run alone tells nothing', () => {
    expect(tellsOutcomes({ suspend: true, planOnly: true, dryRun: false })).toBe(true);
    expect(tellsOutcomes({ suspend: true, planOnly: false, dryRun: false })).toBe(true);
    expect(tellsOutcomes({ suspend: false, planOnly: true, dryRun: false })).toBe(false);
    expect(tellsOutcomes({ suspend: false, planOnly: false, dryRun: true })).toBe(false);
    expect(tellsOutcomes({ suspend: false, planOnly: false, dryRun: false })).toBe(true);
  });

  it('the Suspended note and the log say that no preview was made, and how to get one, only when one was asked for', () => {
    const alone =
      'suspended (HELM_INSTALLER_SUSPEND=true): nothing read, changed or removed; unset it and redeploy to resume';
    expect(suspendedNote({ planOnly: false })).toBe(alone);
    expect(suspendedNote({ planOnly: true })).toBe(
      `${alone}; no preview made: HELM_INSTALLER_PLAN_ONLY=true too, and a pause wins; unset HELM_INSTALLER_SUSPEND (untick "Pause automatic changes") to see the preview`,
    );
    expect(suspendedNext({ planOnly: false })).toHaveLength(1);
    expect(suspendedNext({ planOnly: true })[0]).toContain('no preview');
  });
});
