// Failed Kubernetes API calls as typed errors, and the bounded retry of transient ones. Pure
// except for the sleep in withApiRetry.
import { setTimeout as sleep } from 'node:timers/promises';
import { InstallerError, PreflightError, TransientError } from '../common/errors.js';
import type { Logger } from 'pino';

/** The client's ApiException, by shape (the class lives in the lazily loaded module). */
interface ApiFailure {
  code: number;
  body?: unknown;
}

export function apiStatus(err: unknown): number | undefined {
  const code = (err as Partial<ApiFailure> | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => apiStatus(err) === 404;
/** 409: a create that found the object, or an update whose resourceVersion is stale. */
export const isConflict = (err: unknown): boolean => apiStatus(err) === 409;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'API_CALL_TIMEOUT',
]);

const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  API_CALL_TIMEOUT: 'no answer in time',
};

/** The network error code somewhere in the cause chain (undici wraps it in "fetch failed"). */
export function networkCode(err: unknown, depth = 0): string | undefined {
  if (!err || typeof err !== 'object' || depth > 5) return undefined;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown[] };
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return e.code;
  // undici's own network failures ("fetch failed" whose cause has no errno, e.g. "bad port").
  if (err instanceof TypeError && err.message === 'fetch failed' && !networkCodeIn(e.cause)) return 'FETCH_FAILED';
  for (const inner of [e.cause, ...(Array.isArray(e.errors) ? e.errors : [])]) {
    const found = networkCode(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function networkCodeIn(cause: unknown): boolean {
  return (
    typeof (cause as { code?: unknown } | undefined)?.code === 'string' &&
    NETWORK_CODES.has((cause as { code: string }).code)
  );
}

/** The API server's own words (its Status object's message), else the error's. */
export function apiMessage(err: unknown): string {
  const body = (err as Partial<ApiFailure> | undefined)?.body;
  const parsed = typeof body === 'string' ? safeJson(body) : body;
  const message = (parsed as { message?: unknown } | undefined)?.message;
  if (typeof message === 'string' && message) return message;
  const code = networkCode(err);
  if (code === 'FETCH_FAILED')
    return `network error: ${((err as { cause?: Error }).cause?.message ?? 'fetch failed').split('\n')[0]}`;
  if (code) return `${NETWORK_WORDS[code] ?? 'network error'} (${code})`;
  return err instanceof Error ? err.message.split('\n')[0]! : String(err);
}

/** A retry may fix it: the server unreachable, overloaded or restarting. */
export function isTransientApiError(err: unknown): boolean {
  const status = apiStatus(err);
  if (status !== undefined)
    return status === 429 || status === 500 || status === 502 || status === 503 || status === 504;
  return networkCode(err) !== undefined;
}

/** What `what` failed with, as the error whose exit code says what to do. */
export function toInstallerApiError(err: unknown, what: string, server: string): InstallerError {
  if (err instanceof InstallerError) return err;
  const status = apiStatus(err);
  const message = `${what} failed: ${apiMessage(err)}`;
  if (status === 401 || status === 403) {
    return new PreflightError(message, {
      hint: "Grant the installer's ServiceAccount the permission named above (see manifests/installer.yaml), or check its credentials.",
      cause: err,
    });
  }
  if (isTransientApiError(err)) {
    return new TransientError(`${message}: cluster unreachable (API server ${server})`, {
      hint: 'Check that the API server is up and reachable from the installer; the installer can simply be run again.',
      cause: err,
    });
  }
  return new InstallerError(1, message, {
    hint: 'Unexpected answer from the API server; see the log above.',
    cause: err,
  });
}

export interface RetryOptions {
  /** Give up once this much time has passed since the first attempt. */
  boundMs: number;
  signal?: AbortSignal;
  logger?: Logger;
  what: string;
  server: string;
  /** First pause; doubles up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * Runs fn, retrying transient API failures with exponential backoff until boundMs has passed,
 * then throws a TransientError (exit 5) naming the cause and the attempts. Non-transient errors
 * are thrown at once.
 */
export async function withApiRetry<T>(fn: () => Promise<T>, o: RetryOptions): Promise<T> {
  const started = Date.now();
  let delay = o.initialDelayMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (caught) {
      // Callers may have typed the error already; the API's own failure is its cause.
      const err = caught instanceof InstallerError && caught.cause !== undefined ? caught.cause : caught;
      if (!isTransientApiError(err)) throw toInstallerApiError(caught, o.what, o.server);
      const elapsed = Date.now() - started;
      if (elapsed >= o.boundMs || o.signal?.aborted) {
        throw new TransientError(
          `${o.what} failed: cluster unreachable: API server ${o.server} did not answer (${apiMessage(err)}) after ${attempt} attempts in ${(elapsed / 1000).toFixed(1)}s`,
          {
            hint: 'Check that the API server is up and reachable from the installer (network policy, proxy, KUBECONFIG); raise --connect-timeout (HELM_INSTALLER_CONNECT_TIMEOUT) to wait longer; the Job retries exit 5.',
            cause: err,
          },
        );
      }
      o.logger?.warn(
        { attempt, retryInMs: Math.min(delay, o.boundMs - elapsed), cause: apiMessage(err), server: o.server },
        `${o.what}: API server not reachable yet, retrying`,
      );
      await sleep(Math.min(delay, o.boundMs - elapsed), undefined, { signal: o.signal }).catch(() => undefined);
      delay = Math.min(delay * 2, o.maxDelayMs ?? 5000);
    }
  }
}

/** Bounds a single API call: a server that accepts the connection and never answers. */
export async function withCallTimeout<T>(p: Promise<T>, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`API call timed out after ${ms} ms`), { code: 'API_CALL_TIMEOUT' })),
      ms,
    );
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
