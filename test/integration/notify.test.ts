// Webhook notifications against the real API server and a real local HTTP receiver: each
// outcome of an install, an unchanged redeploy, an upgrade and a failure is POSTed exactly once,
// in both body forms, with the bodies written out here by hand; no secret reaches a body or the
// log, and the URL (a token in its path and query) is never printed. Receivers that hang, answer
// 500, redirect in a loop or are not there cost the run at most the set bound, and never its
// exit code.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type CliResult } from '../helpers.js';
import { install, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { refusedUrl, startReceiver, type Receiver } from './notify-receiver.js';

const namespace = namespacesDeletedAfterAll();
const TOKEN = 'T0KEN-notify-7f3a9c51be';
/** The bundled chart's version (app/storefront/Chart.yaml). */
const CHART_VERSION = '1.4.0';
/** The hook Job fails at once (KWOK's phase annotation, no retry): helm fails, exit 4. */
const FAILING_HOOK = [
  '--set-string',
  'migrations.podAnnotations.helm-installer\\.test/kwok-phase=Failed',
  '--set',
  'migrations.backoffLimit=0',
];

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(behaviour: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(behaviour);
  receivers.push(r);
  return r;
}

/** Nothing printed names the URL or its token. */
function expectUrlHidden(r: CliResult): void {
  const printed = r.stdout + r.stderr;
  expect(printed.includes(TOKEN), `the URL's token was printed:\n${printed.slice(-3000)}`).toBe(false);
}

/** The summary's cause and action lines (what the admin reads), for the failure's body. */
function summaryOf(stderr: string): { cause: string; action: string } {
  const cause = /^cause: (.*)$/m.exec(stderr)?.[1];
  const action = /^release: .*  action: (.*)$/m.exec(stderr)?.[1];
  if (!cause || !action) throw new Error(`no summary in:\n${stderr}`);
  return { cause, action };
}

const slackEscape = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The one POST a run made; its duration, checked as a number, is returned for the exact text. */
function onePost(r: Receiver, before: number): { body: any; duration: number } {
  const posts = r.received.slice(before);
  expect(posts).toHaveLength(1);
  const post = posts[0]!;
  expect(post.method).toBe('POST');
  expect(post.path).toBe(`/hooks/${TOKEN}?key=${TOKEN}-q`);
  expect(post.headers['content-type']).toBe('application/json');
  const body = JSON.parse(post.body);
  const duration =
    typeof body.durationSeconds === 'number'
      ? body.durationSeconds
      : Number(/, ([0-9.]+)s\)(\n|$)/.exec(body.text)?.[1]);
  expect(duration).toBeGreaterThanOrEqual(0);
  return { body, duration };
}

describe('webhook notifications on a real install', () => {
  it('json: installed, unchanged, upgraded and failed, each POSTed once with every fact', async () => {
    const ns = await namespace('notify-json');
    const hook = await receiver('ok');
    const args = ['--notify-url', hook.url(TOKEN)];
    const expected = (facts: Record<string, unknown>, duration: number) => ({
      source: 'helm-installer',
      release: 'storefront',
      namespace: ns,
      type: 'Normal',
      cause: null,
      chartVersion: CHART_VERSION,
      exitCode: 0,
      durationSeconds: duration,
      ...facts,
    });

    const installed = await install('storefront', ns, args);
    expect(installed.exitCode, installed.stderr).toBe(0);
    expectUrlHidden(installed);
    let post = onePost(hook, 0);
    expect(post.body).toEqual(
      expected(
        { outcome: 'Installed', revision: 1, note: `installed as revision 1 (chart storefront-${CHART_VERSION})` },
        post.duration,
      ),
    );

    const unchanged = await install('storefront', ns, args);
    expect(unchanged.exitCode, unchanged.stderr).toBe(0);
    expectUrlHidden(unchanged);
    post = onePost(hook, 1);
    expect(post.body).toEqual(
      expected(
        {
          outcome: 'Unchanged',
          revision: 1,
          note: 'revision 1 is deployed and healthy, chart and values unchanged: nothing to do',
        },
        post.duration,
      ),
    );

    const upgraded = await install('storefront', ns, [...args, '--set', 'web.replicaCount=3']);
    expect(upgraded.exitCode, upgraded.stderr).toBe(0);
    expectUrlHidden(upgraded);
    post = onePost(hook, 2);
    expect(post.body).toEqual(
      expected(
        { outcome: 'Upgraded', revision: 2, note: `upgraded to revision 2 (chart storefront-${CHART_VERSION})` },
        post.duration,
      ),
    );

    const failed = await install('storefront', ns, [...args, '--set', 'web.replicaCount=3', ...FAILING_HOOK]);
    expect(failed.exitCode, failed.stderr).toBe(4);
    expectUrlHidden(failed);
    const { cause, action } = summaryOf(failed.stderr);
    post = onePost(hook, 3);
    expect(post.body).toEqual(
      expected(
        {
          outcome: 'Failed',
          type: 'Warning',
          exitCode: 4,
          cause,
          revision: null,
          note: `failed (exit 4) while ${action}: ${cause}`,
        },
        post.duration,
      ),
    );
    expect(hook.received).toHaveLength(4);
  });

  it('slack: the same four outcomes as {"text": ...}, each POSTed once', async () => {
    const ns = await namespace('notify-slack');
    const hook = await receiver('ok');
    const args = ['--notify-url', hook.url(TOKEN), '--notify-format', 'slack'];
    const where = `release \`storefront\` in namespace \`${ns}\``;

    const installed = await install('storefront', ns, args);
    expect(installed.exitCode, installed.stderr).toBe(0);
    let post = onePost(hook, 0);
    expect(post.body).toEqual({
      text: `:white_check_mark: *Installed*: ${where}: installed as revision 1 (chart storefront-${CHART_VERSION}) (chart ${CHART_VERSION}, revision 1, ${post.duration}s)`,
    });

    const unchanged = await install('storefront', ns, [], {
      HELM_INSTALLER_NOTIFY_URL: hook.url(TOKEN),
      HELM_INSTALLER_NOTIFY_FORMAT: 'slack',
    });
    expect(unchanged.exitCode, unchanged.stderr).toBe(0);
    expectUrlHidden(unchanged);
    post = onePost(hook, 1);
    expect(post.body).toEqual({
      text: `:white_check_mark: *Unchanged*: ${where}: revision 1 is deployed and healthy, chart and values unchanged: nothing to do (chart ${CHART_VERSION}, revision 1, ${post.duration}s)`,
    });

    // The URL from a file (a mounted Secret's key).
    const urlFile = join(tempDir('notify-url'), 'url');
    writeFileSync(urlFile, `${hook.url(TOKEN)}\n`);
    const upgraded = await install('storefront', ns, [
      '--notify-url-file',
      urlFile,
      '--notify-format',
      'slack',
      '--set',
      'web.replicaCount=3',
    ]);
    expect(upgraded.exitCode, upgraded.stderr).toBe(0);
    expectUrlHidden(upgraded);
    post = onePost(hook, 2);
    expect(post.body).toEqual({
      text: `:white_check_mark: *Upgraded*: ${where}: upgraded to revision 2 (chart storefront-${CHART_VERSION}) (chart ${CHART_VERSION}, revision 2, ${post.duration}s)`,
    });

    const failed = await install('storefront', ns, [...args, '--set', 'web.replicaCount=3', ...FAILING_HOOK]);
    expect(failed.exitCode, failed.stderr).toBe(4);
    expectUrlHidden(failed);
    const { cause, action } = summaryOf(failed.stderr);
    post = onePost(hook, 3);
    expect(post.body).toEqual({
      text: `:x: *Failed*: ${where}: ${slackEscape(`failed (exit 4) while ${action}: ${cause}`)} (chart ${CHART_VERSION}, exit 4, ${post.duration}s)`,
    });
    expect(hook.received).toHaveLength(4);
  });

  it('no secret in a body or the log: a --set password, and a failure whose cause quotes it', async () => {
    const ns = await namespace('notify-secret');
    const chart = join(tempDir('notify-chart'), 'vault-shop');
    mkdirSync(join(chart, 'templates'), { recursive: true });
    writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: vault-shop\nversion: 0.3.1\n');
    writeFileSync(join(chart, 'values.yaml'), 'db:\n  password: ""\nrejectPassword: false\n');
    writeFileSync(
      join(chart, 'templates', 'secret.yaml'),
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-db\nstringData:\n  password: {{ .Values.db.password | quote }}\n',
    );
    // A vendor's `fail` that echoes the value, so helm's error (the cause) quotes it.
    writeFileSync(
      join(chart, 'templates', 'reject.yaml'),
      '{{- if .Values.rejectPassword }}{{ fail (printf "database password %q is too weak" .Values.db.password) }}{{- end }}\n',
    );
    const password = 'PLANTED-notify-pw-40c2e8';
    const hook = await receiver('ok');
    for (const format of ['json', 'slack']) {
      const before = hook.received.length;
      const r = await install('vault', ns, [
        '--chart',
        chart,
        '--notify-url',
        hook.url(TOKEN),
        '--notify-format',
        format,
        '--set',
        `db.password=${password}`,
        '--set',
        'rejectPassword=true',
        '--log-level',
        'debug',
      ]);
      expect(r.exitCode, r.stderr).toBe(3);
      expectUrlHidden(r);
      expect(r.stderr).toContain('database password "[REDACTED]" is too weak');
      const { body } = onePost(hook, before);
      const text = JSON.stringify(body);
      expect(text).toContain('database password \\"[REDACTED]\\" is too weak');
      expect(text).not.toContain(password);
      expect(r.stdout + r.stderr).not.toContain(password);
    }
    // And a success with the password set: nothing of it in the body either.
    const ok = await install('vault', ns, [
      '--chart',
      chart,
      '--notify-url',
      hook.url(TOKEN),
      '--set',
      `db.password=${password}`,
      '--log-level',
      'debug',
    ]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expectUrlHidden(ok);
    const { body } = onePost(hook, 2);
    expect(body).toMatchObject({ outcome: 'Installed', release: 'vault', chartVersion: '0.3.1', revision: 1 });
    expect(JSON.stringify(body) + ok.stdout + ok.stderr).not.toContain(password);
  });
});

describe('a receiver that misbehaves costs at most the bound, never the exit code', () => {
  let ns: string;
  const bound = ['--notify-timeout', '1s', '--notify-retries', '2', '--notify-max-time', '4s'];

  /** Runs an unchanged redeploy (fast, exit 0) and returns the log lines of the webhook. */
  async function redeploy(url: string): Promise<{ r: CliResult; ended: number; lines: any[] }> {
    if (!ns) {
      ns = await namespace('notify-bound');
      const first = await install('storefront', ns);
      expect(first.exitCode, first.stderr).toBe(0);
    }
    const r = await install('storefront', ns, ['--notify-url', url, ...bound]);
    const ended = Date.now();
    expect(r.exitCode, r.stderr).toBe(0);
    expectUrlHidden(r);
    expect(r.stdout + r.stderr).not.toContain('pa%40ss-word-9');
    const lines = r.stdout
      .split('\n')
      .filter((l) => l.includes('"notify":"webhook"'))
      .map((l) => JSON.parse(l));
    return { r, ended, lines };
  }

  it('a 500: retried twice (three POSTs of the same body), then given up with a warning', async () => {
    const hook = await receiver('error500');
    const { lines } = await redeploy(hook.url(TOKEN));
    expect(hook.received).toHaveLength(3);
    expect(new Set(hook.received.map((p) => p.body)).size).toBe(1);
    // Backoff between the attempts: 0.5 s, then 1 s.
    expect(hook.received[1]!.at - hook.received[0]!.at).toBeGreaterThanOrEqual(450);
    expect(hook.received[2]!.at - hook.received[1]!.at).toBeGreaterThanOrEqual(950);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, outcome: 'Unchanged', attempts: 3, cause: 'the receiver answered 500' }),
    ]);
  });

  it('a redirect loop: one POST, the redirect not followed', async () => {
    const hook = await receiver('redirectLoop');
    const { lines } = await redeploy(hook.url(TOKEN));
    expect(hook.received).toHaveLength(1);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        attempts: 1,
        cause: expect.stringMatching(/^the receiver answered 302, a redirect, which is not followed/),
      }),
    ]);
  });

  it('a receiver that never answers: each attempt stops at --notify-timeout, all of them at --notify-max-time', async () => {
    const hook = await receiver('hang');
    const { ended, lines } = await redeploy(hook.url(TOKEN));
    // 1 s, 0.5 s backoff, 1 s, 1 s backoff, and what is left of the 4 s cap (about 0.5 s).
    expect(hook.received).toHaveLength(3);
    expect(ended - hook.received[0]!.at).toBeLessThan(4000 + 1500);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, attempts: 3, cause: expect.stringMatching(/^no answer within \d+ms/) }),
    ]);
  });

  it('credentials in the URL go as Basic authorization (fetch refuses them in the URL), never printed', async () => {
    const hook = await receiver('ok');
    const url = hook.url(TOKEN).replace('http://', 'http://hook-user:pa%40ss-word-9@');
    const { lines } = await redeploy(url);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from('hook-user:pa@ss-word-9').toString('base64')}`,
    );
    expect(lines).toEqual([expect.objectContaining({ level: 30, status: 200, attempts: 1 })]);
  });

  it('no receiver (connection refused): retried, given up, exit 0', async () => {
    const { lines } = await redeploy(await refusedUrl(TOKEN));
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, attempts: 3, cause: 'could not reach the receiver (ECONNREFUSED)' }),
    ]);
  });
});
