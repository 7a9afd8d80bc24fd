// One logger for the whole run: pino JSON lines (what log collectors want) or pretty text for
// people. Writes are synchronous so that nothing is lost when the process ends right after a
// failure: the last lines are the ones an admin reads in `kubectl describe`.
import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import type { SecretRegistry } from './secrets.js';

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  format: LogFormat;
  level?: string;
  secrets: SecretRegistry;
  /** Where to write; fd 1 by default. Tests pass a stream. */
  destination?: NodeJS.WritableStream | number;
}

// pino-pretty (some 30 modules) is loaded only for the pretty format: a Job logs JSON, and
// every module loaded is startup time (issue 10). The CLI loads it before the command runs
// (preparePrettyLogs, src/cli/program.ts), by import(): in the bundle that is a chunk of its own. A
// caller that did not (tests, from the sources) gets it by require(), which keeps createLogger
// synchronous.
let pretty: typeof PinoPretty | undefined;
export async function preparePrettyLogs(): Promise<void> {
  pretty ??= (await import('pino-pretty')).default;
}
const loadPretty = () => (pretty ??= createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty);

export function createLogger(options: LoggerOptions): Logger {
  const { secrets } = options;
  const destination =
    options.format === 'pretty'
      ? loadPretty()({ sync: true, colorize: false, destination: options.destination ?? 1, ignore: 'pid,hostname' })
      : typeof options.destination === 'object'
        ? options.destination
        : pino.destination({ dest: options.destination ?? 1, sync: true });
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      hooks: {
        // Every argument, object or message, passes through the mask: helm echoes values in its
        // errors, and a secret in a layer file must not reach the log through that route.
        logMethod(args, method) {
          const masked = args.map((a) => secrets.maskTree(a));
          return method.apply(this, masked as Parameters<typeof method>);
        },
      },
    },
    destination as pino.DestinationStream,
  );
}
