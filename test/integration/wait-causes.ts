// For the tests of what the installer says while helm waits: the wait-causes fixture chart, a
// static program image for the real node, and a run of the built CLI during which the test reads
// the namespace's pods itself (their names and states, to compare the installer's words with).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { getJson } from '../cluster/kube.js';
import { pushStaticImage, staticBinary } from '../cluster/static-image.js';
import { repoRoot, runCli, tempDir } from '../helpers.js';
import { kubeconfig } from './cluster-helpers.js';

const WAIT_CAUSES_CHART = join(repoRoot, 'test/fixtures/charts/wait-causes');

/** Prints its arguments after the first, one per line, then exits with the first (a number). */
const SAY_AND_EXIT_SOURCE = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  for (int i = 2; i < argc; i++) { printf("%s\\n", argv[i]); fflush(stdout); }
  return argc > 1 ? atoi(argv[1]) : 0;
}
`;

/** `registry/test/say-and-exit:<tag>` pushed to the real node's loopback registry. */
export async function sayAndExitImage(registry: string, tag: string): Promise<string> {
  return (await pushStaticImage(registry, 'test/say-and-exit', tag, await staticBinary(SAY_AND_EXIT_SOURCE))).reference;
}

export function valuesFile(values: object): string {
  const file = join(tempDir('wait-causes'), 'values.yaml');
  writeFileSync(file, stringify(values));
  return file;
}

export interface ObservedRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** What the termination-log file holds afterwards. */
  termination: string;
  seconds: number;
  /** Every pod of the namespace the test saw while the installer ran, by name: its last state. */
  pods: Map<string, any>;
  /** The JSON log lines the installer printed. */
  logs: { msg: string; time: number; [key: string]: unknown }[];
}

/** Runs `install` of the fixture chart, reading the namespace's pods every 500 ms meanwhile. */
export async function observedInstall(release: string, namespace: string, args: string[]): Promise<ObservedRun> {
  const dir = tempDir('wait-causes-run');
  const termination = join(dir, 'termination-log');
  writeFileSync(termination, '');
  const started = Date.now();
  const child = runCli(
    ['install', '--chart', WAIT_CAUSES_CHART, '--release', release, '--namespace', namespace, ...args],
    {
      env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_TERMINATION_LOG: termination },
      timeoutMs: 900_000,
    },
  );
  const pods = new Map<string, any>();
  let running = true;
  const watching = (async () => {
    while (running) {
      const list = await getJson<{ items: any[] }>(['get', 'pods'], { kubeconfig: kubeconfig(), namespace }).catch(
        () => ({ items: [] }),
      );
      for (const p of list.items) pods.set(p.metadata.name, p);
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  const r = await child;
  const seconds = (Date.now() - started) / 1000;
  running = false;
  await watching;
  const { stdout } = r;
  const logs = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as ObservedRun['logs'][number]);
  return {
    exitCode: r.exitCode,
    stdout,
    stderr: r.stderr,
    termination: readFileSync(termination, 'utf8'),
    seconds,
    pods,
    logs,
  };
}

/** The pods seen whose name starts with `prefix`. */
export function seenPods(run: ObservedRun, prefix: string): any[] {
  return [...run.pods.values()].filter((p) => p.metadata.name.startsWith(prefix));
}
