// Bad webhook options through the built CLI: exit 2 naming the flag and its environment variable,
// before any cluster call (the kubeconfig names a file that does not exist: anything that
// reached for the cluster would fail otherwise), and the URL's token never printed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';

const dir = tempDir('notify-bad-input');
const TOKEN = 'T0KEN-bad-input-93d1e7';
const env = { KUBECONFIG: join(dir, 'no-such-kubeconfig') };

async function refused(args: string[], extraEnv: Record<string, string>, ...mentions: string[]) {
  const r = await runCli(['install', '--release', 'shop', '--namespace', 'shop', ...args], {
    env: { ...env, ...extraEnv },
  });
  expect(r.exitCode, r.stderr).toBe(2);
  for (const m of mentions) expect(r.stderr).toContain(m);
  expect(r.stdout + r.stderr).not.toContain(TOKEN);
  expect(r.stderr).toMatch(/^release: \(not resolved\)  action: parsing options$/m);
  return r;
}

describe('bad webhook options: exit 2 before any cluster call', () => {
  it('a URL that is not http(s), or does not parse, by flag and by env; never quoted', async () => {
    for (const bad of [
      `ftp://hooks.example.com/${TOKEN}`,
      `hooks.example.com/${TOKEN}`,
      `http://exa mple.com/${TOKEN}`,
    ]) {
      await refused(
        ['--notify-url', bad],
        {},
        'invalid --notify-url "<hidden>" (or env HELM_INSTALLER_NOTIFY_URL): expected an http:// or https:// URL',
      );
      await refused(
        [],
        { HELM_INSTALLER_NOTIFY_URL: bad },
        'invalid HELM_INSTALLER_NOTIFY_URL="<hidden>" (env for --notify-url): expected an http:// or https:// URL',
      );
    }
  });

  it('a URL file that is missing or holds no http(s) URL', async () => {
    const file = join(dir, 'url');
    writeFileSync(file, `smtp://${TOKEN}@example.com\n`);
    await refused(
      ['--notify-url-file', file],
      {},
      `invalid --notify-url-file "${file}" (or env HELM_INSTALLER_NOTIFY_URL_FILE): the file ${file} holds no usable URL`,
    );
    await refused(
      [],
      { HELM_INSTALLER_NOTIFY_URL_FILE: join(dir, 'missing') },
      `invalid HELM_INSTALLER_NOTIFY_URL_FILE="${join(dir, 'missing')}" (env for --notify-url-file): cannot read the notify URL file`,
    );
  });

  it('an unknown format, a bad timeout, retries or cap: each named with its variable, all at once', async () => {
    const url = `https://hooks.example.com/${TOKEN}`;
    const r = await refused(
      ['--notify-url', url, '--notify-format', 'teams', '--notify-timeout', '0'],
      { HELM_INSTALLER_NOTIFY_RETRIES: '10', HELM_INSTALLER_NOTIFY_MAX_TIME: 'forever' },
      'invalid --notify-format "teams" (or env HELM_INSTALLER_NOTIFY_FORMAT): expected json or slack',
      'invalid --notify-timeout "0" (or env HELM_INSTALLER_NOTIFY_TIMEOUT): expected a duration from 1ms to 1m',
      'invalid HELM_INSTALLER_NOTIFY_RETRIES="10" (env for --notify-retries): expected a whole number from 0 to 5',
      'invalid HELM_INSTALLER_NOTIFY_MAX_TIME="forever" (env for --notify-max-time): expected a duration from 1ms to 5m',
    );
    expect(r.stderr).not.toContain('invalid --notify-url');
  });

  it('the URL given both ways', async () => {
    const file = join(dir, 'good-url');
    writeFileSync(file, `https://hooks.example.com/${TOKEN}\n`);
    const r = await runCli(['install', '--release', 'shop', '--namespace', 'shop', '--notify-url-file', file], {
      env: { ...env, HELM_INSTALLER_NOTIFY_URL: `https://hooks.example.com/${TOKEN}` },
    });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      '--notify-url (HELM_INSTALLER_NOTIFY_URL) and --notify-url-file (HELM_INSTALLER_NOTIFY_URL_FILE) are both set',
    );
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });
});
