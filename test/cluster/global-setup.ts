// vitest globalSetup: one cluster for the whole run, reused if one is already running.
// Teardown stops it only if a test run started it and no other test run still uses it;
// a cluster started by `npm run cluster:up` is left running.
// Tests get the kubeconfig from `inject('kubeconfig')` or $KUBECONFIG, the real node's registry
// from `inject('registry')`.
import type { TestProject } from 'vitest/node';
import { ensureCluster, releaseCluster } from './control-plane.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    /** `127.0.0.1:PORT` of the loopback registry the real node pulls from. */
    registry: string;
    apiServerPort: number;
  }
}

const log = (line: string) => process.stderr.write(`[cluster] ${line}\n`);

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const info = await ensureCluster({ log, usage: 'test-run' });
  process.env.KUBECONFIG = info.kubeconfig;
  project.provide('kubeconfig', info.kubeconfig);
  project.provide('registry', info.registry);
  project.provide('apiServerPort', info.apiServerPort);
  return async () => {
    if (await releaseCluster({ log })) log('stopped: a test run started this cluster and no other test run uses it');
  };
}
