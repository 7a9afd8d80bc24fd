// Renders kots/ the way KOTS does (test/kots-render, a Go program built once per source hash by
// its build.sh), for tests that apply what a customer's cluster would really get.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { repoRoot, tempDir } from '../helpers.js';

let built: Promise<string> | undefined;

/** The renderer binary's path, built on first use (Go from the module proxy). */
function kotsRenderBinary(): Promise<string> {
  built ??= execa(join(repoRoot, 'test', 'kots-render', 'build.sh'), { reject: false }).then((r) => {
    if (r.exitCode !== 0) throw new Error(`test/kots-render/build.sh failed (exit ${r.exitCode}):\n${r.stderr}`);
    const path = r.stdout.trim().split('\n').at(-1);
    if (!path) throw new Error('test/kots-render/build.sh printed no path');
    return path;
  });
  return built;
}

/** A config item's answer, as in a kots.io/v1beta1 ConfigValues file. */
export interface ConfigValue {
  value?: string;
  valuePlaintext?: string;
  filename?: string;
}

export interface KotsRenderOptions {
  /** The customer's answers, by config item name. */
  values?: Record<string, ConfigValue>;
  /** The namespace KOTS runs in (the Namespace function). */
  namespace: string;
  sequence?: number;
  /** The local registry the admin set up (airgap). */
  registry?: { host: string; namespace?: string; username?: string; password?: string };
  airgap?: boolean;
  /** Only KOTS's own kinds (the Preflight and SupportBundle KOTS renders for itself), no manifests. */
  kotsKinds?: boolean;
  /** Online: treat every image as private and proxy it through this host, as KOTS does. */
  proxyPrivateImages?: string;
  /** The app's slug as KOTS keeps it (default: the Application's metadata.name). */
  appSlug?: string;
  /** Files or directories to render; kots/ by default. */
  files?: string[];
}

export interface KotsRenderResult {
  exitCode: number;
  stderr: string;
  /** The documents KOTS would deploy, in order, as text. */
  documents: { source: string; content: string }[];
  /** The documents KOTS would drop (YAML errors after rendering). */
  dropped: { source: string; error: string }[];
  /** The same documents as one stream for `kubectl apply -f -`. */
  yaml: string;
  /** The Application's statusInformers as KOTS renders them (empty ones left out). */
  statusInformers: string[];
}

/** The ConfigValues file kots-render (and `kots install --config-values`) reads. */
function configValuesFile(values: Record<string, ConfigValue>): string {
  const file = join(tempDir('kots-config-values'), 'config-values.yaml');
  // JSON (which YAML reads) with U+2028/U+2029 escaped: go-yaml reads those raw as line breaks.
  const json = JSON.stringify({ apiVersion: 'kots.io/v1beta1', kind: 'ConfigValues', spec: { values } }, null, 2);
  writeFileSync(file, json.replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029'));
  return file;
}

export async function kotsRender(o: KotsRenderOptions): Promise<KotsRenderResult> {
  const bin = await kotsRenderBinary();
  const args = ['-o', 'json', '--namespace', o.namespace, '--sequence', String(o.sequence ?? 1)];
  if (o.values) args.push('--config-values', configValuesFile(o.values));
  if (o.registry) {
    args.push('--registry-host', o.registry.host);
    if (o.registry.namespace) args.push('--registry-namespace', o.registry.namespace);
    if (o.registry.username) args.push('--registry-username', o.registry.username);
    if (o.registry.password) args.push('--registry-password', o.registry.password);
  }
  if (o.appSlug) args.push('--app-slug', o.appSlug);
  if (o.airgap) args.push('--airgap');
  if (o.kotsKinds) args.push('--kots-kinds');
  if (o.proxyPrivateImages) args.push('--proxy-private-images', o.proxyPrivateImages);
  args.push(...(o.files ?? [join(repoRoot, 'kots')]));
  const r = await execa(bin, args, { reject: false });
  if (r.exitCode !== 0)
    return { exitCode: r.exitCode ?? 1, stderr: r.stderr, documents: [], dropped: [], yaml: '', statusInformers: [] };
  const out = JSON.parse(r.stdout) as Pick<KotsRenderResult, 'documents' | 'dropped' | 'statusInformers'>;
  return {
    exitCode: 0,
    stderr: r.stderr,
    ...out,
    yaml: out.documents.map((d) => `${d.content.replace(/\n*$/, '\n')}`).join('---\n'),
  };
}
