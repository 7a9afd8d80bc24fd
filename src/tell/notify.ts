// The webhook teller: one POST per outcome, in the order the run recorded them, bounded in time.
// Each attempt has its own timeout; a timeout, a connection error, a 5xx, 408 or 429 is retried
// with backoff; any other answer is final (a 4xx will answer the same again; a 3xx is not followed:
// a redirect loop must not loop, and a receiver that moved should be given by its new URL). All
// the POSTs of a run together stop at --notify-max-time: a receiver that hangs adds at most that to
// the run. Nothing here throws, and nothing logged names the URL (it is a registered secret too).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { SecretRegistry } from '../common/secrets.js';
import { notifyBody } from './notify-body.js';
import { notifyUrlOf, type NotifyFormat } from '../options/notify-options.js';
import type { Outcome } from '../run/outcome.js';

export interface NotifySettings {
  url: string;
  format: NotifyFormat;
  /** Per attempt, in ms. */
  timeoutMs: number;
  /** Attempts after the first, for a failure a retry can fix. */
  retries: number;
  /** All POSTs of the run together, in ms. */
  maxTimeMs: number;
}

/** What the teller reads of install's options (the notify* keys of its option table). */
export interface NotifyOptions {
  notifyUrl?: string;
  notifyUrlFile?: string;
  notifyFormat: NotifyFormat;
  notifyTimeout: number;
  notifyRetries: number;
  notifyMaxTime: number;
}

/** The teller (src/tell/tell.ts): nothing to do when no URL is set. */
export async function notifyWebhook(
  outcomes: Outcome[],
  c: { o: NotifyOptions; state: { secrets: SecretRegistry; logger?: Logger } },
): Promise<void> {
  const { o } = c;
  const url = notifyUrlOf(o);
  if (url === undefined) return;
  await notify(
    outcomes,
    { url, format: o.notifyFormat, timeoutMs: o.notifyTimeout, retries: o.notifyRetries, maxTimeMs: o.notifyMaxTime },
    c.state,
  );
}

type Attempt = { ok: true; status: number } | { ok: false; retry: boolean; cause: string };

/** The first backoff; doubled after each failed attempt. */
const BACKOFF_MS = 500;

export async function notify(
  outcomes: Outcome[],
  s: NotifySettings,
  run: { secrets: SecretRegistry; logger?: Logger },
): Promise<void> {
  const deadline = Date.now() + s.maxTimeMs;
  for (const outcome of outcomes) {
    const fields = {
      notify: 'webhook',
      format: s.format,
      outcome: outcome.reason,
      release: outcome.release,
      namespace: outcome.namespace,
    };
    if (Date.now() >= deadline) {
      run.logger?.warn(
        fields,
        `webhook not notified: --notify-max-time (${s.maxTimeMs}ms) is spent; the run's result stands`,
      );
      continue;
    }
    const masked: Outcome = {
      ...outcome,
      note: run.secrets.maskText(outcome.note),
      ...(outcome.cause !== undefined && { cause: run.secrets.maskText(outcome.cause) }),
    };
    const r = await post(s, notifyBody(masked, s.format), deadline);
    if (r.result.ok) run.logger?.info({ ...fields, status: r.result.status, attempts: r.attempts }, 'webhook notified');
    else
      run.logger?.warn(
        { ...fields, attempts: r.attempts, cause: r.result.cause },
        `webhook not notified: ${r.result.cause}; the run's result stands`,
      );
  }
}

/** One outcome's POST, retried while a retry can help and time is left. */
async function post(s: NotifySettings, body: string, deadline: number): Promise<{ result: Attempt; attempts: number }> {
  let attempts = 0;
  for (;;) {
    attempts += 1;
    const result = await attempt(s.url, body, Math.min(s.timeoutMs, deadline - Date.now()));
    if (result.ok || !result.retry || attempts > s.retries) return { result, attempts };
    const wait = BACKOFF_MS * 2 ** (attempts - 1);
    // Too little time left for the wait and an attempt worth making: stop now, not at the cap.
    if (Date.now() + wait + 100 >= deadline)
      return {
        result: { ...result, cause: `${result.cause} (no time left for another attempt within --notify-max-time)` },
        attempts,
      };
    await sleep(wait);
  }
}

/**
 * fetch refuses a URL with credentials in it (https://user:pass@host/): they go as the Basic
 * authorization header they stand for, as curl sends them.
 */
export function requestTarget(href: string): { url: string; headers: Record<string, string> } {
  const url = new URL(href);
  if (url.username === '' && url.password === '') return { url: href, headers: {} };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.href, headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } };
}

async function attempt(href: string, body: string, timeoutMs: number): Promise<Attempt> {
  const { url, headers } = requestTarget(href);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'helm-installer' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(Math.max(1, timeoutMs)),
    });
    // The answer's body is not needed: dropped, so the connection is free (or closed) at once.
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
    if (res.status >= 300 && res.status < 400) {
      return {
        ok: false,
        retry: false,
        cause: `the receiver answered ${res.status}, a redirect, which is not followed (give the URL it redirects to)`,
      };
    }
    return {
      ok: false,
      retry: res.status >= 500 || res.status === 408 || res.status === 429,
      cause: `the receiver answered ${res.status}`,
    };
  } catch (error) {
    return { ok: false, retry: true, cause: fetchFailure(error, timeoutMs) };
  }
}

/** Why fetch threw, by kind and code only: undici's own texts may quote the address. */
function fetchFailure(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; cause?: { code?: string; name?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs}ms`;
  const code = e.cause?.code ?? e.cause?.name;
  return code ? `could not reach the receiver (${code})` : 'could not reach the receiver';
}
