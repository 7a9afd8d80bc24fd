// The render gate against the real pinned helm 4: helm renders, waits at the gate with exactly
// what it will apply, and goes on or fails as the installer says; a helm stopped there prints and
// writes nothing, whether the installer said stop, failed before helm reached it, or died.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { gateScript, prepareRenderGate } from '../../src/helm/render-gate.js';
import { helm4, repoRoot, tempDir } from '../helpers.js';

function chart(templates: Record<string, string>): string {
  const dir = join(tempDir('render-gate'), 'gated');
  mkdirSync(join(dir, 'templates'), { recursive: true });
  writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: gated\nversion: 0.1.0\n');
  writeFileSync(join(dir, 'values.yaml'), 'greeting: hello\n');
  for (const [name, text] of Object.entries(templates)) writeFileSync(join(dir, 'templates', name), text);
  return dir;
}

const CONFIGMAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  greeting: {{ .Values.greeting | quote }}\n';
const HOOK = 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations: {"helm.sh/hook": pre-install}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: busybox:1.36}]\n';

describe('render gate (helm 4)', () => {
  it('helm waits at the gate with what it renders (hooks included); go: its output is exactly what a pass-through post-renderer gives', async () => {
    const dir = chart({ 'cm.yaml': CONFIGMAP, 'hook.yaml': HOOK });
    // Helm 4 re-serialises what it hands a post-renderer (hooks included): the same bytes as
    // through `cat`, not as with no post-renderer at all.
    const plugins = join(tempDir('render-gate-cat'), 'plugins');
    mkdirSync(join(plugins, 'cat'), { recursive: true });
    writeFileSync(join(plugins, 'cat', 'plugin.yaml'), 'apiVersion: v1\nname: cat\nversion: 1.0.0\ntype: postrenderer/v1\nruntime: subprocess\nruntimeConfig:\n  platformCommand:\n    - command: /bin/cat\n');
    const plain = await execa(helm4, ['template', 'rel', dir, '--post-renderer', 'cat'], { env: { HELM_PLUGINS: plugins } });
    const gate = prepareRenderGate(tempDir('render-gate-work'));
    try {
      const run = execa(helm4, ['template', 'rel', dir, ...gate.helmArgs], { env: gate.env, reject: false });
      const seen = await gate.reached;
      expect(seen).toContain('name: rel-cm');
      expect(seen).toContain('greeting: "hello"');
      expect(seen).toContain('name: migrate');
      // Still waiting: helm has not ended before the verdict.
      let ended = false;
      void run.then(() => (ended = true));
      await new Promise((r) => setTimeout(r, 200));
      expect(ended).toBe(false);
      gate.open();
      const r = await run;
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toBe(plain.stdout);
    } finally {
      gate.dispose();
    }
  });

  it('stop: helm fails at its post-render and prints no manifest', async () => {
    const gate = prepareRenderGate(tempDir('render-gate-work'));
    try {
      const run = execa(helm4, ['template', 'rel', chart({ 'cm.yaml': CONFIGMAP }), ...gate.helmArgs], { env: gate.env, reject: false });
      await gate.reached;
      gate.stop();
      const r = await run;
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/post-render/);
    } finally {
      gate.dispose();
    }
  });

  it('a stop said before helm reaches the gate still holds; the first verdict is the one kept', async () => {
    const gate = prepareRenderGate(tempDir('render-gate-work'));
    try {
      const run = execa(helm4, ['template', 'rel', chart({ 'cm.yaml': CONFIGMAP }), ...gate.helmArgs], { env: gate.env, reject: false });
      gate.stop();
      gate.open();
      const r = await run;
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe('');
    } finally {
      gate.dispose();
    }
  });

  it('helm failing before the gate (a template error) never reaches it, and dispose ends the wait', async () => {
    const gate = prepareRenderGate(tempDir('render-gate-work'));
    const r = await execa(helm4, ['template', 'rel', chart({ 'bad.yaml': '{{ fail "no greeting" }}\n' }), ...gate.helmArgs], { env: gate.env, reject: false });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/no greeting/);
    const reached = await Promise.race([gate.reached.then(() => 'reached'), new Promise((res) => setTimeout(() => res('not reached'), 300))]);
    expect(reached).toBe('not reached');
    gate.dispose();
  });

  it('the installer dying while helm waits (SIGKILL): the gate reads end of file, helm fails and prints nothing', async () => {
    const dir = chart({ 'cm.yaml': CONFIGMAP });
    const work = tempDir('render-gate-work');
    const out = join(work, 'helm.out');
    // Kills itself once helm waits at the gate.
    const script = standInInstaller(dir, work, out, [
      // The gate's wait does not keep a process alive on its own (the installer's other work does).
      'const busy = setInterval(() => undefined, 1000);',
      'await gate.reached;',
      "process.kill(process.pid, 'SIGKILL');",
    ]);
    const installer = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let pid = '';
    installer.stdout.on('data', (d: Buffer) => (pid += d.toString()));
    const signal = await new Promise((resolve) => installer.on('exit', (_code, sig) => resolve(sig)));
    expect(signal).toBe('SIGKILL');
    // helm ends on its own, with the post-renderer's failure and no manifest.
    const printed = await endOf(Number(pid.trim()), out);
    expect(printed).toMatch(/post-render/);
    expect(printed).not.toMatch(/kind: ConfigMap/);
  });

  it('the installer gone before helm reaches the gate (it crashed, or ended without a verdict): helm fails at once instead of waiting forever', async () => {
    const dir = chart({ 'cm.yaml': CONFIGMAP });
    const work = tempDir('render-gate-work');
    const out = join(work, 'helm.out');
    // Ends (its FIFOs closed) before helm has rendered.
    const script = standInInstaller(dir, work, out, []);
    const r = await execa(process.execPath, [script]);
    const printed = await endOf(Number(r.stdout.trim()), out);
    expect(printed).toMatch(/post-render/);
    expect(printed).not.toMatch(/kind: ConfigMap/);
  });

  it('refuses a work directory path the sh script could not quote', () => {
    expect(() => gateScript("/tmp/it's/rendered.yaml", '/tmp/r', '/tmp/v')).toThrow(/cannot use the path/);
  });
});

/**
 * A stand-in installer, run from the build as the installer runs: it prepares the gate and starts
 * helm (detached: it outlives its parent), printing helm's pid; `then` is what it does next.
 */
function standInInstaller(dir: string, work: string, out: string, then: string[]): string {
  const script = join(work, 'installer.mjs');
  writeFileSync(
    script,
    [
      `import { prepareRenderGate } from ${JSON.stringify(join(repoRoot, 'dist', 'src', 'helm', 'render-gate.js'))};`,
      "import { spawn } from 'node:child_process';",
      "import { openSync } from 'node:fs';",
      `const gate = prepareRenderGate(${JSON.stringify(work)});`,
      `const fd = openSync(${JSON.stringify(out)}, 'w');`,
      `const helm = spawn(${JSON.stringify(helm4)}, ['template', 'rel', ${JSON.stringify(dir)}, ...gate.helmArgs], { env: { ...process.env, ...gate.env }, stdio: ['ignore', fd, fd], detached: true });`,
      'helm.unref();',
      'process.stdout.write(`${helm.pid}\\n`);',
      ...then,
    ].join('\n'),
  );
  return script;
}

/** Waits (bounded) for helm to end, then returns what it printed. */
async function endOf(helmPid: number, out: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && alive(helmPid)) await new Promise((res) => setTimeout(res, 50));
  expect(alive(helmPid)).toBe(false);
  return readFileSync(out, 'utf8');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
