// The webhook options' parsers. The URL is a secret (Slack's, and most receivers', carry their
// token in the path or the query): it is registered with the run's SecretRegistry before it is
// checked, and no message here quotes it, so a bad URL is named by its flag and variable only.
import { parseDurationMs, parsePath } from './config.js';
import { OptionValueError, UsageError } from '../common/errors.js';
import type { ParseContext } from './options.js';
import { readInputFile } from '../common/read-input.js';
import type { SecretRegistry } from '../common/secrets.js';

export type NotifyFormat = 'json' | 'slack';

const NOT_SHOWN = '(the URL is not shown: it may hold a token)';

/** Shown instead of the value in the resolver's "invalid --notify-url ..." message. */
export const hideUrl = (): string => '<hidden>';

/** A path or a query this long is a token more likely than a word that occurs elsewhere. */
const TOKEN_PART = 16;

function registerUrl(raw: string, url: URL | undefined, secrets: SecretRegistry): void {
  secrets.add(raw);
  secrets.add(raw.trim());
  if (!url) return;
  secrets.add(url.href);
  secrets.add(decodeURIComponent(url.password));
  secrets.add(decodeURIComponent(url.username));
  // An error or a receiver's answer may quote the path or the query without the host.
  if (url.search.length >= TOKEN_PART) secrets.add(url.search.slice(1));
  if (url.pathname.length + url.search.length >= TOKEN_PART) secrets.add(url.pathname + url.search);
}

/** An http(s) URL, as given (its token included): returns the normalised href. */
export function parseNotifyUrl(raw: string, ctx: ParseContext): string {
  const text = raw.trim();
  const url = URL.canParse(text) ? new URL(text) : undefined;
  registerUrl(raw, url, ctx.secrets);
  if (!url || /\s/.test(text))
    throw new OptionValueError(`expected an http:// or https:// URL; this one does not parse ${NOT_SHOWN}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OptionValueError(`expected an http:// or https:// URL; this one has another scheme ${NOT_SHOWN}`);
  if (url.hostname === '') throw new OptionValueError(`expected an http:// or https:// URL with a host ${NOT_SHOWN}`);
  return url.href;
}

/**
 * A file holding the URL (a Secret's key, mounted): read now, with the other options. Empty (or
 * white space only) means no notification: KOTS renders an unset config item as "".
 */
export function parseNotifyUrlFile(raw: string, ctx: ParseContext): string | undefined {
  const path = parsePath(raw);
  let text: string;
  try {
    text = readInputFile(path, { what: 'notify URL file', maxBytes: 64 * 1024, hint: '' });
  } catch (err) {
    throw new OptionValueError((err as Error).message);
  }
  registerUrl(text, undefined, ctx.secrets);
  if (text.trim() === '') return undefined;
  try {
    return parseNotifyUrl(text, ctx);
  } catch (err) {
    throw new OptionValueError(`the file ${path} holds no usable URL: ${(err as Error).message}`);
  }
}

export function parseNotifyFormat(raw: string): NotifyFormat {
  const v = raw.trim().toLowerCase();
  if (v !== 'json' && v !== 'slack') throw new OptionValueError('expected json or slack');
  return v;
}

/** A Go duration above 0 (at least 1ms) and at most `maxText`; returns milliseconds. */
export function boundedDurationMs(maxMs: number, maxText: string) {
  return (raw: string): number => {
    const expected = `expected a duration from 1ms to ${maxText}, such as 500ms, 5s or 1m`;
    let ms: number;
    try {
      ms = parseDurationMs(raw);
    } catch {
      throw new OptionValueError(expected);
    }
    if (ms < 1 || ms > maxMs) throw new OptionValueError(expected);
    return Math.round(ms);
  };
}

export function parseNotifyRetries(raw: string): number {
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isInteger(n) || n < 0 || n > 5)
    throw new OptionValueError('expected a whole number from 0 to 5');
  return n;
}

/**
 * The two ways to give the URL are one choice: both set is a usage error, before any work. An
 * empty file counts as unset (KOTS mounts the Secret whether or not the item has an answer).
 */
export function notifyUrlOf(o: { notifyUrl?: string; notifyUrlFile?: string }): string | undefined {
  if (o.notifyUrl !== undefined && o.notifyUrlFile !== undefined) {
    throw new UsageError(
      '--notify-url (HELM_INSTALLER_NOTIFY_URL) and --notify-url-file (HELM_INSTALLER_NOTIFY_URL_FILE) are both set: give the URL one way',
      {
        hint: 'Keep one of the two: the file (a mounted Secret) keeps the URL out of the environment helm inherits.',
      },
    );
  }
  return o.notifyUrl ?? o.notifyUrlFile;
}
