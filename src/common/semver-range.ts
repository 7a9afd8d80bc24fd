// Does a chart version satisfy a dependency's version or range? Helm reads ranges with Go's
// Masterminds semver; node's `semver` reads the same grammar once Masterminds' spellings are
// translated: a comma between comparators means "and" (a space in node's), `=>`/`=<` are `>=`/`<=`.
// Loaded only when the two strings differ: a chart that names its dependency's exact version
// (the common case) costs no module load, and an install's start-up stays as it was.
import { createRequire } from 'node:module';

/** node's semver, loaded on the first call (also for kubeVersion ranges: troubleshoot/preflight-spec.ts). */
type Semver = typeof import('semver');
let semver: Semver | undefined;
// In the bundle (npm run build) esbuild bundles the `require` call and runs semver's code on the
// first call only; tsc's output and the tests from the sources have no `require` in scope, and
// load the package through createRequire.
export const loadSemver = (): Semver =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle's require, see above
  (semver ??= (typeof require === 'function' ? require('semver') : createRequire(import.meta.url)('semver')) as Semver);

/**
 * True when `version` satisfies `range` (an exact version or a range), false when it does not,
 * undefined when the range is one node's semver cannot read (Masterminds' `!=`, a typo): the
 * caller then cannot say, and must not refuse what helm might accept.
 */
export function satisfiesRange(version: string, range: string): boolean | undefined {
  if (version.trim() === range.trim()) return true;
  const s = loadSemver();
  const translated = range
    .split('||')
    .map((part) => part.replace(/,/g, ' ').replace(/=>/g, '>=').replace(/=</g, '<='))
    .join('||');
  if (/!=/.test(translated) || s.validRange(translated, { loose: true }) === null) return undefined;
  const parsed =
    s.parse(version, { loose: true }) ?? (/^v?\d+(\.\d+)?$/.test(version.trim()) ? s.coerce(version) : null);
  // Helm's loader refuses a chart whose version is not SemVer; here it simply matches nothing.
  if (parsed === null) return false;
  return s.satisfies(parsed, translated, { loose: true });
}
