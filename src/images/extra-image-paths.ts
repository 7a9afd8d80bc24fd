// --image-path specs (validated as options in config.ts) as the image reader uses them. Apart from
// airgap.ts so that a run without --registry or --image-pull-secret, which rewrites nothing, need
// not load the airgap stage's modules to know that (src/run/render-setup.ts).
import { UsageError } from '../common/errors.js';
import type { ExtraImagePath } from './manifest-images.js';

/** `Kind:path` or `group/version/Kind:path` (README), e.g. `Promotion:spec.image`. */
export function parseImagePath(spec: string): ExtraImagePath {
  const m = /^(?:([^:]+)\/)?([A-Za-z][A-Za-z0-9]*):([A-Za-z0-9_.\-[\]*]+)$/.exec(spec.trim());
  if (!m) {
    throw new UsageError(
      `invalid --image-path "${spec}": expected Kind:path, e.g. Promotion:spec.image or Workflow:spec.templates[].container.image`,
      {
        key: 'image-path',
      },
    );
  }
  return { kind: m[2]!, path: m[3]!, ...(m[1] ? { apiVersion: m[1] } : {}) };
}
