// The two bodies a webhook receives, one per outcome: a generic JSON document with a fixed set
// of keys (absent facts are null, so a receiver's schema never changes with the outcome), and
// Slack's incoming-webhook form, `{"text": ...}`, which Mattermost, Rocket.Chat and most chat
// tools also accept. Pure; the outcome's texts were masked when it was recorded.
import type { Outcome, OutcomeReason } from '../run/outcome.js';
import type { NotifyFormat } from '../options/notify-options.js';

export interface JsonBody {
  source: 'helm-installer';
  release: string;
  namespace: string;
  outcome: OutcomeReason;
  type: Outcome['type'];
  note: string;
  cause: string | null;
  chartVersion: string | null;
  revision: number | null;
  durationSeconds: number;
  exitCode: number;
}

export function jsonBody(o: Outcome): JsonBody {
  return {
    source: 'helm-installer',
    release: o.release,
    namespace: o.namespace,
    outcome: o.reason,
    type: o.type,
    note: o.note,
    cause: o.cause ?? null,
    chartVersion: o.chartVersion ?? null,
    revision: o.revision ?? null,
    durationSeconds: o.durationSeconds,
    exitCode: o.exitCode,
  };
}

/** Slack reads `&`, `<` and `>` as markup (links, mentions): escaped as its docs ask. */
function slackEscape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function icon(o: Outcome): string {
  if (o.exitCode !== 0) return ':x:';
  return o.type === 'Warning' ? ':warning:' : ':white_check_mark:';
}

/** One line (two for a cause the note does not already give): what happened, then the facts. */
export function slackBody(o: Outcome): { text: string } {
  const facts = [
    o.chartVersion !== undefined ? `chart ${o.chartVersion}` : undefined,
    o.revision !== undefined ? `revision ${o.revision}` : undefined,
    o.exitCode !== 0 ? `exit ${o.exitCode}` : undefined,
    `${o.durationSeconds}s`,
  ].filter((f) => f !== undefined);
  const head = `${icon(o)} *${o.reason}*: release \`${o.release}\` in namespace \`${o.namespace}\`: ${slackEscape(o.note)} (${slackEscape(facts.join(', '))})`;
  const cause = o.cause !== undefined && !o.note.includes(o.cause) ? `\nCause: ${slackEscape(o.cause)}` : '';
  return { text: head + cause };
}

/** The request body, as sent. */
export function notifyBody(o: Outcome, format: NotifyFormat): string {
  return JSON.stringify(format === 'slack' ? slackBody(o) : jsonBody(o));
}
