// `npm run cluster:up` / `npm run cluster:down`. Progress goes to stderr; `up` prints the
// kubeconfig path as the last line of stdout, so `export KUBECONFIG=$(npm run -s cluster:up | tail -1)` works.
import { ensureCluster, stopCluster } from './control-plane.js';
import { REAL_NODE_KEY, REAL_NODE_NAME } from './real-node.js';

const log = (line: string) => process.stderr.write(`[cluster] ${line}\n`);

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case 'up': {
      const info = await ensureCluster({ log, usage: 'keep' });
      log(`${info.startedNow ? 'started' : 'already running'}: ${info.apiServerUrl}`);
      log(
        `real node ${REAL_NODE_NAME} (pods select and tolerate ${REAL_NODE_KEY}=true); its registry: ${info.registry} (plain HTTP)`,
      );
      log(`use it with: export KUBECONFIG=${info.kubeconfig}`);
      process.stdout.write(`${info.kubeconfig}\n`);
      return 0;
    }
    case 'down':
      await stopCluster({ log });
      log('stopped');
      return 0;
    default:
      process.stderr.write('usage: cli.js up|down\n');
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
