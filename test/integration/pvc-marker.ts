// The program the real-node tests run in a StatefulSet's pod: it writes a file into its PVC on
// first start and prints what it finds there on every start, so data kept (or left behind) by an
// upgrade is seen from the pod's log.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubectl } from '../cluster/kube.js';
import { pushStaticImage, staticBinary } from '../cluster/static-image.js';
import { repoRoot } from '../helpers.js';
import { kubeconfig } from './cluster-helpers.js';

/** argv[1]: a file under /data; argv[2]: what to write there when it does not exist. Then sleeps until SIGTERM. */
const MARKER_SOURCE = `#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; _exit(0); }
int main(int argc, char **argv) {
  signal(SIGTERM, quit);
  signal(SIGINT, quit);
  if (argc < 3) return 2;
  char path[512], text[512] = {0};
  snprintf(path, sizeof path, "/data/%s", argv[1]);
  FILE *f = fopen(path, "r");
  if (f) {
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    printf("found: %s\\n", text);
  } else {
    f = fopen(path, "w");
    if (!f) { printf("cannot write %s\\n", path); fflush(stdout); return 1; }
    fputs(argv[2], f);
    fclose(f);
    printf("wrote: %s\\n", argv[2]);
  }
  fflush(stdout);
  for (;;) pause();
}
`;

/**
 * The immutable fixture chart's database StatefulSet on the real node, its pod this program in an
 * image of its own: the install arguments (`extra`, such as --helm-bin, after the chart), and the
 * token of this run. On first start the pod writes `written-by-v1-<token>` into its claim.
 */
export async function markerDatabase(
  registry: string,
  extra: string[] = [],
): Promise<{ token: string; base: string[] }> {
  const token = randomBytes(6).toString('hex');
  const image = (await pushStaticImage(registry, 'test/pvc-marker', token, await staticBinary(MARKER_SOURCE)))
    .reference;
  const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'immutable');
  const sets = ['realNode=true', `image=${image}`, `args={marker-${token},written-by-v1-${token}}`];
  return { token, base: ['--chart', chart, ...extra, ...sets.flatMap((s) => ['--set', s])] };
}

/** The log of `pod` once it matches `want` (the program prints one line a start), or as it is after a minute. */
export async function markerLog(ns: string, pod: string, want: RegExp): Promise<string> {
  const opts = { kubeconfig: kubeconfig(), namespace: ns, reject: false };
  for (let i = 0; i < 60; i++) {
    const r = await kubectl(['logs', pod], opts);
    if (want.test(r.stdout)) return r.stdout;
    await sleep(1000);
  }
  return (await kubectl(['logs', pod], opts)).stdout;
}
