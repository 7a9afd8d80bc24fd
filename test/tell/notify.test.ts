// The webhook's pure parts: the two body forms (exact texts, written out by hand) and the option
// parsers (what they accept, what they say, and that the URL is registered as a secret).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OptionValueError, UsageError } from '../../src/common/errors.js';
import { SecretRegistry } from '../../src/common/secrets.js';
import { jsonBody, notifyBody, slackBody } from '../../src/tell/notify-body.js';
import {
  boundedDurationMs,
  notifyUrlOf,
  parseNotifyFormat,
  parseNotifyRetries,
  parseNotifyUrl,
  parseNotifyUrlFile,
} from '../../src/options/notify-options.js';
import { requestTarget } from '../../src/tell/notify.js';
import type { Outcome } from '../../src/run/outcome.js';
import { tempDir } from '../helpers.js';

const upgraded: Outcome = {
  reason: 'Upgraded',
  type: 'Normal',
  release: 'storefront',
  namespace: 'shop',
  note: 'upgraded to revision 4 (chart storefront-1.4.0)',
  chartVersion: '1.4.0',
  revision: 4,
  durationSeconds: 12.3,
  exitCode: 0,
};
const failed: Outcome = {
  reason: 'Failed',
  type: 'Warning',
  release: 'storefront',
  namespace: 'shop',
  note: 'failed (exit 4) while helm upgrade: Deployment/storefront-web <not ready> & rolled back',
  cause: 'Deployment/storefront-web <not ready> & rolled back',
  chartVersion: '1.4.0',
  durationSeconds: 61,
  exitCode: 4,
};

describe('notification bodies', () => {
  it('json: every key, absent facts as null', () => {
    expect(jsonBody(upgraded)).toEqual({
      source: 'helm-installer',
      release: 'storefront',
      namespace: 'shop',
      outcome: 'Upgraded',
      type: 'Normal',
      note: 'upgraded to revision 4 (chart storefront-1.4.0)',
      cause: null,
      chartVersion: '1.4.0',
      revision: 4,
      durationSeconds: 12.3,
      exitCode: 0,
    });
    expect(JSON.parse(notifyBody(failed, 'json'))).toEqual({
      source: 'helm-installer',
      release: 'storefront',
      namespace: 'shop',
      outcome: 'Failed',
      type: 'Warning',
      note: 'failed (exit 4) while helm upgrade: Deployment/storefront-web <not ready> & rolled back',
      cause: 'Deployment/storefront-web <not ready> & rolled back',
      chartVersion: '1.4.0',
      revision: null,
      durationSeconds: 61,
      exitCode: 4,
    });
  });

  it('slack: one line of text, markup characters escaped, the cause not repeated when the note gives it', () => {
    expect(slackBody(upgraded)).toEqual({
      text: ':white_check_mark: *Upgraded*: release `storefront` in namespace `shop`: upgraded to revision 4 (chart storefront-1.4.0) (chart 1.4.0, revision 4, 12.3s)',
    });
    expect(notifyBody(failed, 'slack')).toBe(
      JSON.stringify({
        text: ':x: *Failed*: release `storefront` in namespace `shop`: failed (exit 4) while helm upgrade: Deployment/storefront-web &lt;not ready&gt; &amp; rolled back (chart 1.4.0, exit 4, 61s)',
      }),
    );
  });

  it('slack: drift is a warning; a cause the note does not give is its own line', () => {
    const drift: Outcome = {
      reason: 'DriftFound',
      type: 'Warning',
      release: 'r',
      namespace: 'n',
      note: '1 object(s) drifted',
      durationSeconds: 2,
      exitCode: 0,
    };
    expect(slackBody(drift).text).toBe(
      ':warning: *DriftFound*: release `r` in namespace `n`: 1 object(s) drifted (2s)',
    );
    const test: Outcome = {
      ...drift,
      reason: 'TestFailed',
      note: 'helm test failed',
      cause: 'pod r-test: exit 1',
      exitCode: 4,
    };
    expect(slackBody(test).text).toBe(
      ':x: *TestFailed*: release `r` in namespace `n`: helm test failed (exit 4, 2s)\nCause: pod r-test: exit 1',
    );
  });
});

describe('notification options', () => {
  const ctx = () => ({ secrets: new SecretRegistry() });
  const url = 'https://hooks.example.com/services/T0/B0/XYZsecret123?token=abc123';

  it('an http(s) URL is normalised and registered as a secret, with its token parts', () => {
    const c = ctx();
    expect(parseNotifyUrl(` ${url} `, c)).toBe(url);
    expect(c.secrets.maskText(`posting to ${url}`)).toBe('posting to [REDACTED]');
    expect(c.secrets.maskText('path /services/T0/B0/XYZsecret123?token=abc123')).toBe('path [REDACTED]');
    const withUser = ctx();
    parseNotifyUrl('http://user:p%40ssw0rd@127.0.0.1:8080', withUser);
    expect(withUser.secrets.maskText('http://user:p%40ssw0rd@127.0.0.1:8080/ and p@ssw0rd')).toBe(
      '[REDACTED] and [REDACTED]',
    );
  });

  it('refuses other schemes and unparsable text without quoting the URL, after registering it', () => {
    for (const bad of [
      'ftp://hooks.example.com/T0KEN-x',
      'hooks.example.com/T0KEN-x',
      'http//T0KEN-x',
      'https://a b/T0KEN-x',
      'javascript:T0KEN-x',
      'file:///T0KEN-x',
    ]) {
      const c = ctx();
      let message = '';
      try {
        parseNotifyUrl(bad, c);
      } catch (e) {
        expect(e).toBeInstanceOf(OptionValueError);
        message = (e as Error).message;
      }
      expect(message, bad).toMatch(/^expected an http:\/\/ or https:\/\/ URL/);
      expect(message).not.toContain('T0KEN');
      expect(c.secrets.maskText(bad)).toBe('[REDACTED]');
    }
  });

  it('a URL file: read and checked; empty means no webhook', () => {
    const dir = tempDir('notify-unit');
    writeFileSync(join(dir, 'url'), `${url}\n`);
    writeFileSync(join(dir, 'empty'), ' \n');
    writeFileSync(join(dir, 'bad'), 'ftp://T0KEN-x\n');
    expect(parseNotifyUrlFile(join(dir, 'url'), ctx())).toBe(url);
    expect(parseNotifyUrlFile(join(dir, 'empty'), ctx())).toBeUndefined();
    expect(() => parseNotifyUrlFile(join(dir, 'bad'), ctx())).toThrow(
      new OptionValueError(
        `the file ${join(dir, 'bad')} holds no usable URL: expected an http:// or https:// URL; this one has another scheme (the URL is not shown: it may hold a token)`,
      ),
    );
    expect(() => parseNotifyUrlFile(join(dir, 'missing'), ctx())).toThrow(
      /cannot read the notify URL file .*missing: ENOENT/,
    );
  });

  it('format, timeouts and retries', () => {
    expect(parseNotifyFormat('slack')).toBe('slack');
    expect(parseNotifyFormat(' JSON ')).toBe('json');
    expect(() => parseNotifyFormat('teams')).toThrow('expected json or slack');
    const timeout = boundedDurationMs(60_000, '1m');
    expect([timeout('5s'), timeout('500ms'), timeout('1m'), timeout('1.5s')]).toEqual([5000, 500, 60_000, 1500]);
    for (const bad of ['0', '0s', '61s', '2m', 'soon', '5', '-1s', ''])
      expect(() => timeout(bad), bad).toThrow('expected a duration from 1ms to 1m');
    expect([parseNotifyRetries('0'), parseNotifyRetries('5')]).toEqual([0, 5]);
    for (const bad of ['6', '-1', '1.5', 'two', ''])
      expect(() => parseNotifyRetries(bad), bad).toThrow('expected a whole number from 0 to 5');
  });

  it('the URL given two ways is a usage error naming both flags and variables', () => {
    expect(notifyUrlOf({})).toBeUndefined();
    expect(notifyUrlOf({ notifyUrlFile: url })).toBe(url);
    expect(() => notifyUrlOf({ notifyUrl: url, notifyUrlFile: url })).toThrow(UsageError);
    expect(() => notifyUrlOf({ notifyUrl: url, notifyUrlFile: url })).toThrow(
      '--notify-url (HELM_INSTALLER_NOTIFY_URL) and --notify-url-file (HELM_INSTALLER_NOTIFY_URL_FILE) are both set',
    );
  });
});

describe('the request', () => {
  it('credentials in the URL become a Basic authorization header; other URLs are sent as they are', () => {
    expect(requestTarget('https://hooks.example.com/x?y=1')).toEqual({
      url: 'https://hooks.example.com/x?y=1',
      headers: {},
    });
    expect(requestTarget('https://me:p%40ss@hooks.example.com/x')).toEqual({
      url: 'https://hooks.example.com/x',
      headers: { authorization: `Basic ${Buffer.from('me:p@ss').toString('base64')}` },
    });
  });
});
