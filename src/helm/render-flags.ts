// The helm flags `render` and `images` pass to every `helm template` they run (after `--`, or
// HELM_INSTALLER_HELM_ARGS): only those that change WHAT the chart renders to, the way the
// cluster helm installs into would (.Capabilities, .Release.IsUpgrade, test hooks). A flag that
// would bypass the installer (a second post-renderer, values outside its layering, output
// written elsewhere, a partial render that hides images) is refused, naming it. Pure.
import { OptionValueError } from '../common/errors.js';

/** Flags that take a value (`--flag v`, `--flag=v`, `-a v`, `-av`). */
const VALUE_FLAGS: Record<string, (v: string) => string | undefined> = {
  '--kube-version': (v) =>
    /^v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.+-]*)?$/.test(v) && v.length <= 64
      ? undefined
      : 'expected a Kubernetes version such as 1.31 or v1.31.4',
  '--api-versions': (v) =>
    v.length <= 65536 && v.split(',').every((s) => /^[A-Za-z0-9.-]+(\/[A-Za-z0-9.-]+){0,2}$/.test(s))
      ? undefined
      : 'expected group/version[/Kind] entries, e.g. monitoring.coreos.com/v1 (comma-separated or repeated)',
};
const SHORT: Record<string, string> = { '-a': '--api-versions' };

/** Switches; `--flag=true|false` is accepted as helm does. */
const SWITCHES = new Set([
  '--skip-tests',
  '--is-upgrade',
  '--skip-schema-validation',
  '--enable-dns',
  '--include-crds',
]);

const SKIP_CRDS_REFUSED =
  'images and render must see every manifest install applies (a partial render hides images from the plan); filter the output of render instead';

/** Flags that cannot work here, with what to do instead. */
const REFUSED: [RegExp, string][] = [
  [
    /^--post-renderer(-args)?$/,
    "the installer runs its own post-renderer (the image rewrite) and a second one cannot be chained: it would bypass the rewrite; rewrite the manifests after render's output instead",
  ],
  [
    /^--output-dir$|^--release-name$/,
    "render and images read helm's output from stdout; redirect the output of `helm-installer render` instead",
  ],
  [
    /^(-f|--values|--set|--set-string|--set-json|--set-file|--set-literal)$/,
    "values after -- would bypass the installer's layering and registry hints: use helm-installer's own -f/--values, --set, --set-string, --set-json",
  ],
  [/^(-n|--namespace)$/, 'use helm-installer -n/--namespace'],
  [/^(-g|--generate-name|--name-template)$/, 'use helm-installer --release'],
  [/^(-s|--show-only|--no-hooks|--skip-crds)$/, SKIP_CRDS_REFUSED],
  [
    /^(--validate|--dry-run)$/,
    "render and images need no cluster: give the cluster's version and APIs with --kube-version and --api-versions (install renders with the cluster's own)",
  ],
  [
    /^(--version|--repo|--devel|--verify|--keyring|--dependency-update|--username|--password|--ca-file|--cert-file|--key-file|--plain-http|--pass-credentials|--insecure-skip-tls-verify)$/,
    'the chart comes from --chart (a directory or .tgz), not from a repository',
  ],
];

const RENDER_FLAGS_ALLOWED =
  '--kube-version, --api-versions (-a), --skip-tests, --is-upgrade, --skip-schema-validation, --enable-dns, --include-crds (always on)';

/**
 * Checks the helm arguments given to render or images and returns them as helm template takes
 * them (`--flag=value` form). Throws OptionValueError naming the first flag that cannot be used.
 */
export function parseRenderFlags(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    let name = eq > 0 ? arg.slice(0, eq) : arg;
    let inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    // `-a v1`, `-av1`, `-a=v1` (pflag's shorthand forms).
    if (/^-[A-Za-z]/.test(arg) && !arg.startsWith('--')) {
      name = arg.slice(0, 2);
      if (arg.length > 2) inline = arg.slice(arg[2] === '=' ? 3 : 2);
    }
    if (!name.startsWith('-'))
      throw new OptionValueError(
        `unexpected argument "${clip(arg)}": helm template takes the chart from --chart; after -- only helm flags (${RENDER_FLAGS_ALLOWED})`,
      );
    const long = SHORT[name] ?? name;
    const check = VALUE_FLAGS[long];
    if (check) {
      const value = inline ?? args[++i];
      if (value === undefined || value === '') throw new OptionValueError(`${name} needs a value`);
      const problem = check(value);
      if (problem) throw new OptionValueError(`${name} ${JSON.stringify(clip(value))}: ${problem}`);
      out.push(`${long}=${value}`);
      continue;
    }
    if (SWITCHES.has(long)) {
      if (inline !== undefined && inline !== 'true' && inline !== 'false')
        throw new OptionValueError(`${name}=${clip(inline)}: expected true or false`);
      if (long === '--include-crds') {
        // Every render already includes crds/ (install creates them too), so it is not passed
        // twice; turned off it would be --skip-crds by another name, a render that hides images.
        if (inline === 'false')
          throw new OptionValueError(
            `helm flag ${name}=false cannot be used with render or images: ${SKIP_CRDS_REFUSED}`,
          );
        continue;
      }
      out.push(inline === undefined ? long : `${long}=${inline}`);
      continue;
    }
    const refused = REFUSED.find(([pattern]) => pattern.test(long));
    if (refused) throw new OptionValueError(`helm flag ${name} cannot be used with render or images: ${refused[1]}`);
    throw new OptionValueError(
      `helm flag ${clip(name)} is not passed to helm template by render or images; allowed: ${RENDER_FLAGS_ALLOWED}`,
    );
  }
  return out;
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/**
 * install's helm arguments go to `helm upgrade` verbatim, but not those that cannot mean there
 * what the user wants: the Capabilities flags (helm upgrade has none; install renders with the
 * cluster's own), and a post-renderer when the installer's own rewrites images (helm keeps only
 * the last --post-renderer: the user's would silently replace the rewrite).
 */
export function checkInstallHelmArgs(args: string[], rewriting: boolean): string | undefined {
  for (const arg of args) {
    const name = arg.startsWith('--') ? arg.split('=')[0]! : /^-a/.test(arg) ? '-a' : '';
    if (name === '--kube-version' || name === '--api-versions' || name === '-a') {
      return `helm flag ${name} cannot be passed to install: helm upgrade has no such flag, and install renders with the cluster's own Kubernetes version and API list (render and images take it after --)`;
    }
    if (rewriting && (name === '--post-renderer' || name === '--post-renderer-args')) {
      return `helm flag ${name} cannot be passed to install with --registry or --image-pull-secret: helm keeps only the last --post-renderer, so it would replace the installer's image rewrite (run install without them to use your own post-renderer)`;
    }
  }
  return undefined;
}
