// Causes named, early (issue 9, item 5), where a kubelet really pulls and runs: the chart's pods on
// the real node, their images in (or missing from) its loopback registry. An image that is not
// there and a container that exits 1 fail the install long before --timeout (helm is stopped and
// removes the first install), and the summary names the pod, the reason, the exact image or the
// container and its last log lines; a failed hook Job is named with its pod's log tail.
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { history, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { observedInstall, sayAndExitImage, seenPods, valuesFile } from './wait-causes.js';

const registry = inject('registry');
const tag = () => randomBytes(4).toString('hex');
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** The bound the runs give helm: failing fast means ending far below it. */
const TIMEOUT_S = 600;
/**
 * What a run stopped by its fail-fast bound says, where one that ran into helm's --timeout would
 * not: checked instead of its time (a timing asserted in a test is flaky under load).
 */
const STOPPED_BY_FAIL_FAST = 'helm was stopped and rolled the release back (a first install is removed).';

const namespace = namespacesDeletedAfterAll();

/**
 * An install on the real node with these values that should fail fast: helm given TIMEOUT_S,
 * the fail-fast bound 15 s. Its time is printed as a figure.
 */
async function failingFast(what: string, ns: string, values: string) {
  const run = await observedInstall('shop', ns, [
    '-f',
    values,
    '--timeout',
    `${TIMEOUT_S}s`,
    '--fail-fast-after',
    '15s',
    '--progress-interval',
    '5s',
  ]);
  process.stderr.write(
    `[figure] ${what}: failed after ${run.seconds.toFixed(1)} s (fail-fast 15 s, timeout ${TIMEOUT_S} s)\n`,
  );
  return run;
}

/** The one pod the run saw whose name begins with `prefix`. */
function onePod(run: Awaited<ReturnType<typeof observedInstall>>, prefix: string) {
  const pods = seenPods(run, prefix);
  expect(pods).toHaveLength(1);
  return pods[0];
}

/** The log lines the summary shows under its line that begins with `head`, each without its `indent` + '| '. */
function logTail(stderr: string, head: string, indent: string): string[] {
  const lines = stderr.split('\n');
  const at = lines.findIndex((l) => l.startsWith(head));
  return lines
    .slice(at + 1)
    .filter((l) => l.startsWith(`${indent}| `))
    .map((l) => l.slice(indent.length + 2));
}

describe.concurrent('causes named on the real node', () => {
  it('an image missing from the registry: exit 4 long before --timeout; the summary names the pod, the pull failure and the exact image', async () => {
    const ns = await namespace('wait-pull');
    const image = `${registry}/test/not-pushed:${tag()}`;
    const run = await failingFast('missing image', ns, valuesFile({ image, realNode: true }));
    expect(run.exitCode, run.stderr).toBe(4);
    expect(run.stderr).toContain(STOPPED_BY_FAIL_FAST);
    const seen = onePod(run, 'shop-app-');
    const pod = seen.metadata.name as string;
    expect(seen.spec.containers[0].image).toBe(image);
    expect(run.stderr).toMatch(/^helm-installer FAILED \(exit 4: helm operation failed\)$/m);
    expect(run.stderr).toMatch(new RegExp(`failed fast: Pod/${pod} stayed (ErrImagePull|ImagePullBackOff) for 15s`));
    expect(run.stderr).toMatch(
      new RegExp(`^Pod/${pod}: (ErrImagePull|ImagePullBackOff): image ${escape(image)}(:|$)`, 'm'),
    );
    // The kubelet's own words about the pull, as its latest Event.
    expect(run.stderr).toMatch(/last event: (Failed|BackOff): /);
    expect(run.termination.trim()).toBe(run.stderr.slice(run.stderr.indexOf('helm-installer FAILED')).trim());
    // helm was stopped and removed the first install.
    expect(await history('shop', ns)).toEqual([]);
  });

  it('a container that exits 1: CrashLoopBackOff naming the container, its exit code and its last log lines', async () => {
    const ns = await namespace('wait-crash');
    const image = await sayAndExitImage(registry, tag());
    const said = ['starting shop', 'reading /etc/shop/config.yaml', 'fatal: database host not set'];
    const run = await failingFast(
      'crash loop',
      ns,
      // With a readiness probe, as real workloads have: without one, a container that exits at
      // once is Ready for a moment between its back-offs, and helm 4's wait may then call the
      // Deployment ready and succeed (seen on a loaded machine).
      valuesFile({
        image,
        args: ['1', ...said],
        realNode: true,
        readinessProbe: { tcpSocket: { port: 1 }, periodSeconds: 1 },
      }),
    );
    expect(run.exitCode, run.stderr).toBe(4);
    expect(run.stderr).toContain(STOPPED_BY_FAIL_FAST);
    const pod = onePod(run, 'shop-app-').metadata.name as string;
    expect(run.stderr).toMatch(new RegExp(`failed fast: Pod/${pod} stayed CrashLoopBackOff for 15s`));
    expect(run.stderr).toMatch(
      new RegExp(`^Pod/${pod}: CrashLoopBackOff: container app exited 1 \\(Error\\), restarted [1-9]\\d* times?$`, 'm'),
    );
    // The container's last log lines, in order, right under it.
    expect(logTail(run.stderr, `Pod/${pod}: CrashLoopBackOff`, '  ')).toEqual(said);
    expect(run.termination).toContain(`Pod/${pod}: CrashLoopBackOff: container app exited 1`);
    expect(run.termination).toContain(`  | ${said[2]}`);
    expect(await history('shop', ns)).toEqual([]);
  });

  it("a hook Job that fails: exit 4, the summary names the Job, its pod's exit code and log tail", async () => {
    const ns = await namespace('wait-hook');
    const image = await sayAndExitImage(registry, tag());
    const said = ['migrating schema 41 -> 42', 'ERROR: relation "orders" already exists'];
    const run = await observedInstall('shop', ns, [
      '-f',
      valuesFile({ image, args: ['0'], realNode: true, hook: { enabled: true, image, args: ['3', ...said] } }),
      '--timeout',
      '120s',
      '--progress-interval',
      '5s',
    ]);
    expect(run.exitCode, run.stderr).toBe(4);
    const pod = onePod(run, 'shop-migrate-').metadata.name as string;
    expect(run.stderr).toMatch(/^ {2}Job\/shop-migrate: BackoffLimitExceeded: /m);
    expect(run.stderr).toMatch(new RegExp(`^ {2}Pod/${pod}: Error: container migrate exited 3$`, 'm'));
    expect(logTail(run.stderr, `  Pod/${pod}: Error`, '    ')).toEqual(said);
    expect(run.termination).toContain(`  | ${said[1]}`);
  });
});
