// What every command needs once: the secret registry, the logger, and the helm adapter bound to
// the detected helm binary.
import { createLogger } from '../common/logger.js';
import { type Logger } from 'pino';
import type { CommonOptions } from '../options/config.js';
import { detectHelm } from '../helm/helm-binary.js';
import { HelmClient } from '../helm/helm-client.js';
import type { SetKind } from '../helm/helm-args.js';
import type { RunState } from './run-state.js';
import type { SecretRegistry } from '../common/secrets.js';
import { maskSetExpression } from '../options/set-expressions.js';

/**
 * Logs go to stdout (fd 1) for `install`; commands whose stdout is data (values, render, images)
 * log to stderr (fd 2).
 */
export function createBaseContext(
  options: Pick<CommonOptions, 'logFormat' | 'logLevel'>,
  destination: 1 | 2,
  state: RunState,
): { secrets: SecretRegistry; logger: Logger } {
  const root = createLogger({
    format: options.logFormat,
    level: options.logLevel,
    secrets: state.secrets,
    destination,
  });
  const logger = state.bindings ? root.child(state.bindings) : root;
  state.logger = logger;
  for (const warning of state.warnings ?? []) logger.warn(warning);
  return { secrets: state.secrets, logger };
}

export async function createHelmClient(
  options: Pick<CommonOptions, 'helmBin'>,
  base: { secrets: SecretRegistry; logger: Logger },
): Promise<HelmClient> {
  const binary = await detectHelm(options.helmBin);
  base.logger.debug({ helm: binary.path, version: binary.version }, 'helm found');
  return new HelmClient({
    binary,
    logger: base.logger,
    maskArgs: (args) => maskHelmArgs(args, base.secrets),
  });
}

/** Masks the value after --set* flags when its key looks secret, and any known secret text. */
export function maskHelmArgs(args: string[], secrets: SecretRegistry): string[] {
  return args.map((arg, i) => {
    const prev = args[i - 1] ?? '';
    const kind = /^--(set|set-string|set-json)$/.exec(prev)?.[1] as SetKind | undefined;
    // `--set=expr` (one argument) is how helm args after `--` may spell it.
    const joined = /^--(set|set-string|set-json)=(.*)$/s.exec(arg);
    const masked = kind
      ? maskSetExpression(arg, secrets, kind)
      : joined
        ? `--${joined[1]}=${maskSetExpression(joined[2]!, secrets, joined[1] as SetKind)}`
        : arg;
    return secrets.maskText(masked);
  });
}
