// Startup stays light (issue 10: `--version` within 2x `helm version`): `--version` and `--help`
// load no command module and none of the heavy libraries; a command's own help loads that command
// only. Checked by the files node really loads (a load hook), not by timing, which is noisy: the
// CLI is a bundle (test/tools/bundle-cli.mjs), so each file loaded stands for the sources and
// packages esbuild put in it, as its metafile (dist/bundle-meta.json) lists them.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { commandCatalog, namedCommand } from '../../src/cli/commands/catalog.js';
import { chartDir, repoRoot, runCli, tempDir } from '../helpers.js';

const hook = join(tempDir('startup'), 'record-loads.mjs');
writeFileSync(
  hook,
  `import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on('exit', () => process.stderr.write('LOADED ' + JSON.stringify(loaded) + '\\n'));
`,
);

async function loadedModules(args: string[]): Promise<{ exitCode: number; stdout: string; modules: string[] }> {
  const r = await runCli(args, { nodeArgs: ['--import', hook], env: { HELM_INSTALLER_CHART: chartDir } });
  const line = r.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`no module list in stderr: ${r.stderr}`);
  return {
    exitCode: r.exitCode,
    stdout: r.stdout,
    modules: JSON.parse(line.slice('LOADED '.length)) as string[],
  };
}

interface Metafile {
  outputs: Record<string, { entryPoint?: string; inputs: Record<string, unknown> }>;
}
const meta = JSON.parse(readFileSync(join(repoRoot, 'dist', 'bundle-meta.json'), 'utf8')) as Metafile;
/** The sources and packages in the bundle's files among the URLs loaded, as `/src/x.ts`, `/node_modules/y/z.js`. */
const sourcesOf = (urls: string[]): string[] =>
  urls
    .filter((u) => u.startsWith('file:'))
    .flatMap((u) => Object.keys(meta.outputs[relative(repoRoot, fileURLToPath(u))]?.inputs ?? {}).map((i) => `/${i}`));
/** The bundle's file that holds a lazily loaded source (a chunk of its own: the `import()` of it). */
const chunkOf = (source: string): string =>
  join(repoRoot, Object.entries(meta.outputs).find(([, o]) => o.entryPoint === source)![0]);

const HEAVY = [
  '/node_modules/pino/',
  '/node_modules/pino-pretty/',
  '/node_modules/yaml/',
  '/node_modules/execa/',
  '/node_modules/tar/',
];
const heavyIn = (modules: string[]) => sourcesOf(modules).filter((m) => HEAVY.some((h) => m.includes(h)));
const commandModulesIn = (modules: string[]) =>
  sourcesOf(modules)
    .filter((m) => /^\/src\/cli\/commands\/(?!catalog\.ts)/.test(m))
    .map((m) => m.replace(/^\/src\/cli\//, '').replace(/\.ts$/, '.js'));

describe('startup', () => {
  it('--version prints the package version and loads no command module or heavy library', async () => {
    const { exitCode, stdout, modules } = await loadedModules(['--version']);
    expect(exitCode).toBe(0);
    expect(stdout.trim()).toBe('0.1.0');
    expect(commandModulesIn(modules)).toEqual([]);
    expect(heavyIn(modules)).toEqual([]);
  });

  it('--help lists every command and loads none of them', async () => {
    const { exitCode, stdout, modules } = await loadedModules(['--help']);
    expect(exitCode).toBe(0);
    for (const name of ['install', 'values', 'render', 'images'])
      expect(stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    expect(commandModulesIn(modules)).toEqual([]);
    expect(heavyIn(modules)).toEqual([]);
  });

  it("a command's help loads that command and shows its options", async () => {
    const { exitCode, stdout, modules } = await loadedModules(['install', '--help']);
    expect(exitCode).toBe(0);
    expect(stdout).toContain('--history-max <n>');
    expect(commandModulesIn(modules)).toContain('commands/install-command.js');
    expect(commandModulesIn(modules)).not.toContain('commands/values-command.js');
  });

  it("a run's own modules leave out node's bundled undici (an ES import of node:http loads it) and, with JSON logs, pino-pretty", async () => {
    const installModule = chunkOf('src/cli/commands/install-command.ts');
    const r = await execa(process.execPath, [
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(installModule)}); console.log(JSON.stringify(process.moduleLoadList))`,
    ]);
    const builtins = JSON.parse(String(r.stdout)) as string[];
    expect(builtins.filter((m) => /undici/.test(m))).toEqual([]);
    const { modules } = await loadedModules(['values', '--log-level', 'debug']);
    expect(sourcesOf(modules).filter((m) => m.includes('/node_modules/pino/'))).not.toEqual([]);
    expect(sourcesOf(modules).filter((m) => m.includes('/node_modules/pino-pretty/'))).toEqual([]);
  });

  it("the Kubernetes client's bundle leaves out node's bundled undici too (its built-ins are required, not imported) and still works", async () => {
    const bundle = join(repoRoot, 'dist', 'bundle', 'kubernetes-client.js');
    const script = `const k8s = await import(${JSON.stringify(bundle)});
const loaded = process.moduleLoadList.filter((m) => /undici/.test(m));
const config = new k8s.KubeConfig();
config.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://192.0.2.10:6443', skipTLSVerify: false }],
  users: [{ name: 'u', token: 't' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u', namespace: 'ns1' }],
  currentContext: 'x',
});
const core = config.makeApiClient(k8s.CoreV1Api);
const https = (await import('node:https')).default;
const options = {};
await config.applyToHTTPSOptions(options);
console.log(JSON.stringify({ loaded, core: typeof core.listNamespacedSecret, agent: options.agent instanceof https.Agent, server: config.getCurrentCluster().server }));`;
    const r = await execa(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(String(r.stdout))).toEqual({
      loaded: [],
      core: 'function',
      agent: true,
      server: 'https://192.0.2.10:6443',
    });
  });

  it('--log-format pretty still loads pino-pretty and prints readable lines', async () => {
    const r = await runCli(['values', '--log-format', 'pretty', '--log-level', 'debug'], {
      env: { HELM_INSTALLER_CHART: chartDir },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] DEBUG: helm found$/m);
  });

  it('the catalog lists each command with the description its definition declares', async () => {
    for (const entry of commandCatalog) {
      const definition = await entry.load();
      expect({ name: definition.name, description: definition.description }).toEqual({
        name: entry.name,
        description: entry.description,
      });
    }
  });

  it('finds the command argv names', () => {
    expect(namedCommand(['--version'])).toBeUndefined();
    expect(namedCommand(['install', '--namespace', 'x'])).toBe('install');
    expect(namedCommand(['help', 'render'])).toBe('render');
    expect(namedCommand(['--', 'install'])).toBeUndefined();
  });
});
