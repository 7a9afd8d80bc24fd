// Options that name a file the installer reads later (the registry preflight's pull secret and
// CA bundle): read and checked while the options are resolved, with every other option, so a
// wrong path, a device, an oversized file or content of the wrong kind is a usage error (exit 2)
// naming the flag and its environment variable before any work, not a failure after the render.
// The pull secret's credentials are registered as secrets here, before anything is printed.
import { X509Certificate } from 'node:crypto';
import { parsePath } from './config.js';
import { parseDockerConfigJson } from '../common/docker-config.js';
import { type ParseContext } from './options.js';
import { OptionValueError } from '../common/errors.js';
import { MiB, readInputFile } from '../common/read-input.js';
import { registerPullSecret } from '../common/secrets.js';

function readForOption(path: string, what: string): string {
  try {
    return readInputFile(path, { what, maxBytes: MiB, hint: '' });
  } catch (err) {
    throw new OptionValueError((err as Error).message);
  }
}

/** A `.dockerconfigjson` (what `kubectl create secret docker-registry` stores); returns the path. */
export function parsePullSecretFile(raw: string, ctx: ParseContext): string {
  const path = parsePath(raw);
  const text = readForOption(path, 'pull secret file');
  registerPullSecret(text, ctx.secrets);
  try {
    parseDockerConfigJson(text);
  } catch (err) {
    // Its message names what is wrong, never the content (a secret).
    throw new OptionValueError(
      `${(err as Error).message} (expected {"auths": {"<host>": {"auth": "<base64 of user:password>"}}})`,
    );
  }
  return path;
}

/** A PEM bundle holding at least one certificate; returns the path. */
export function parseCaFile(raw: string, ctx: ParseContext): string {
  void ctx;
  const path = parsePath(raw);
  const text = readForOption(path, 'registry CA file');
  const first = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(text);
  try {
    if (!first) throw new Error('none');
    new X509Certificate(first[0]);
  } catch {
    throw new OptionValueError(
      `the registry CA file ${path} holds no PEM certificate (expected -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)`,
    );
  }
  return path;
}
