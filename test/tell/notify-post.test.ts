// The webhook's POSTs against a real local receiver (node:http), without a cluster: several
// outcomes (a release plan's) go out once each, in the order recorded, masked; once
// --notify-max-time is spent the rest are logged as not sent, not tried.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/logger.js';
import { SecretRegistry } from '../../src/common/secrets.js';
import { notify } from '../../src/tell/notify.js';
import type { Outcome } from '../../src/run/outcome.js';
import { startReceiver, type Receiver } from '../integration/notify-receiver.js';

const outcome = (release: string, note = `installed ${release}`): Outcome => ({
  reason: 'Installed',
  type: 'Normal',
  release,
  namespace: 'shop',
  note,
  chartVersion: '1.0.0',
  revision: 1,
  durationSeconds: 1,
  exitCode: 0,
});

function run() {
  const lines: any[] = [];
  const secrets = new SecretRegistry();
  const destination = new Writable({ write: (chunk, _e, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  return { secrets, logger: createLogger({ format: 'json', secrets, destination }), lines };
}

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

describe('webhook POSTs', () => {
  it("a release plan's outcomes: one POST each, in order, with texts masked by the run's secrets", async () => {
    const hook = await startReceiver('ok');
    receivers.push(hook);
    const r = run();
    r.secrets.add('s3cr3t-value');
    await notify(
      [outcome('db'), outcome('web', 'installed web with s3cr3t-value'), outcome('cache')],
      { url: hook.url('tok'), format: 'json', timeoutMs: 2000, retries: 2, maxTimeMs: 10_000 },
      r,
    );
    expect(hook.received.map((p) => JSON.parse(p.body).release)).toEqual(['db', 'web', 'cache']);
    expect(JSON.parse(hook.received[1]!.body).note).toBe('installed web with [REDACTED]');
    expect(r.lines.map((l) => [l.msg, l.release, l.attempts])).toEqual([
      ['webhook notified', 'db', 1],
      ['webhook notified', 'web', 1],
      ['webhook notified', 'cache', 1],
    ]);
  });

  it('--notify-max-time spent on a receiver that hangs: the outcomes after it are not tried', async () => {
    const hook = await startReceiver('hang');
    receivers.push(hook);
    const r = run();
    const started = Date.now();
    await notify(
      [outcome('db'), outcome('web')],
      { url: hook.url('tok'), format: 'slack', timeoutMs: 400, retries: 0, maxTimeMs: 300 },
      r,
    );
    expect(Date.now() - started).toBeLessThan(300 + 1000);
    expect(hook.received).toHaveLength(1);
    expect(r.lines.map((l) => [l.level, l.release, l.msg])).toEqual([
      // What is left of the cap when the attempt starts (300 ms, or a little less).
      [
        40,
        'db',
        expect.stringMatching(/^webhook not notified: no answer within (300|29\d)ms; the run's result stands$/),
      ],
      [40, 'web', "webhook not notified: --notify-max-time (300ms) is spent; the run's result stands"],
    ]);
  });
});
