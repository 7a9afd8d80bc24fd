// The parsers of `export --source git`'s options, pure: a repository URL Flux's GitRepository
// accepts, a branch name git accepts, a path inside the repository. Each throws
// OptionValueError, which options.ts turns into exit 2 naming the flag and its variable, before
// anything is rendered or written.
import { OptionValueError } from '../common/errors.js';

/**
 * Flux's GitRepository takes http, https and ssh URLs (its CRD: `^(http|https|ssh)://`). A
 * password or token in the URL would sit in clear in flux/source.yaml and in git: refused, the
 * credentials belong in a Secret the GitRepository references (`spec.secretRef`).
 */
export function parseGitUrl(raw: string): string {
  const v = raw.trim();
  if (/^[\w.-]+@[\w.-]+:(?!\/\/)/.test(v))
    throw new OptionValueError(
      `expected a URL Flux can clone; "${v}" is scp-like syntax, which Flux does not read: write it ssh://${v.replace(':', '/')}`,
    );
  if (v === '' || /[\s\0-\x1f\x7f]/.test(v))
    throw new OptionValueError(
      'expected a repository URL (http://, https:// or ssh://HOST/PATH), without spaces or control characters',
    );
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new OptionValueError(
      `expected a repository URL (http://, https:// or ssh://HOST/PATH); "${maskGitUrl(v)}" is not a URL`,
    );
  }
  if (!['http:', 'https:', 'ssh:'].includes(url.protocol))
    throw new OptionValueError(
      `expected an http://, https:// or ssh:// URL (what Flux's GitRepository clones); got ${url.protocol}//`,
    );
  if (url.hostname === '') throw new OptionValueError('expected a repository URL with a host');
  if (url.pathname === '' || url.pathname === '/')
    throw new OptionValueError(
      "expected a repository URL with the repository's path, e.g. https://git.example.com/acme/fleet.git",
    );
  if (url.password !== '')
    throw new OptionValueError(
      'the URL carries a password or token, which would be written in clear into flux/source.yaml: give the URL without it and the credentials as a Secret the GitRepository references (spec.secretRef)',
    );
  if (url.search !== '' || url.hash !== '')
    throw new OptionValueError('expected a repository URL without a query (?) or fragment (#)');
  return v;
}

/** Parts git refuses in a branch name (git check-ref-format --branch, git-check-ref-format(1)). */
const REFUSED = [
  /[\0-\x20\x7f~^:?*[\\]/, // control characters, space, ~ ^ : ? * [ and backslash
  /\.\./, // two dots
  /@\{/, // the reflog syntax
  /(^|\/)\./, // a component starting with a dot
  /\.lock(\/|$)/, // a component ending with .lock
  /\/\//, // an empty component
  /^\/|\/$|\.$/, // a leading or trailing slash, a trailing dot
  /^-/, // an option, to git
];

export function parseGitBranch(raw: string): string {
  const v = raw.trim();
  // `@` and HEAD are names of what is checked out, not a branch Flux can follow.
  if (v === '' || v === '@' || v === 'HEAD' || v.length > 255 || REFUSED.some((r) => r.test(v))) {
    throw new OptionValueError(
      `expected a branch name git accepts (git check-ref-format --branch), e.g. main or release/1.2; "${v}" is not one`,
    );
  }
  return v;
}

/**
 * A folder inside the repository, relative to its root, `.` for the root itself; `./a/b/` is
 * `a/b`. Absolute paths and `..` would point outside the repository Flux clones.
 */
export function parseGitPath(raw: string): string {
  const v = raw.trim();
  if (v.startsWith('/'))
    throw new OptionValueError(
      `expected a path inside the repository, relative to its root (e.g. clusters/prod, or . for the root); "${v}" is absolute`,
    );
  if (/[\0-\x1f\x7f\\]/.test(v))
    throw new OptionValueError('expected a path inside the repository without control characters or backslashes');
  const parts = v.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..'))
    throw new OptionValueError(`expected a path inside the repository; "${v}" climbs out of it with ..`);
  if (parts.includes('.git'))
    throw new OptionValueError("expected a path inside the repository's files, not in its .git folder");
  return parts.length === 0 ? '.' : parts.join('/');
}

/** `./<path>/<rest>` as Flux's Kustomization wants it (`./<rest>` at the root). */
export function inRepository(path: string, rest: string): string {
  return path === '.' ? `./${rest}` : `./${path}/${rest}`;
}

/** The URL as an error may echo it: a password or token in it masked (it is refused, never printed). */
export function maskGitUrl(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*:)[^@/]*@/i, '$1***@');
}
