// The render gate against the real pinned helm 4, through `helm template` (helm runs the
// post-renderer the same way for template and upgrade): the check sees exactly what helm rendered,
// hooks included; a failed check or a restart stops helm; what passes comes out byte for byte.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { sameRevisions } from '../../src/commands/install-command.js';
import { PreflightError, TransientError } from '../../src/errors.js';
import { openRenderGate, RENDER_GATE_PLUGIN, type RenderGate } from '../../src/render-gate.js';
import { helm4, tempDir } from '../helpers.js';

const dir = tempDir('render-gate');
const chart = join(dir, 'gated');
mkdirSync(join(chart, 'templates'), { recursive: true });
writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: gated\nversion: 0.1.0\n');
writeFileSync(join(chart, 'values.yaml'), 'replicas: 2\n');
writeFileSync(
  join(chart, 'templates', 'deployment.yaml'),
  '{{- if .Values.fail }}{{ fail "asked to fail" }}{{ end }}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {{ .Values.replicas }}\n',
);
writeFileSync(
  join(chart, 'templates', 'hook.yaml'),
  'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    "helm.sh/hook": pre-install\nspec: {}\n',
);

const template = (gate?: RenderGate, extra: string[] = []) =>
  execa(helm4, ['template', 'rel', chart, ...extra, ...(gate?.helmArgs ?? [])], { env: { ...process.env, ...gate?.env }, reject: false });

let open: RenderGate[] = [];
afterEach(() => {
  for (const g of open) g.dispose();
  open = [];
});

async function gate(check: (m: string) => Promise<void>, proceed: () => Promise<boolean> = async () => true): Promise<RenderGate> {
  const g = await openRenderGate({ workDir: tempDir('render-gate-run'), check, proceed, keepsValues: false });
  open.push(g);
  return g;
}

describe('render gate (helm 4)', () => {
  it('the check gets the whole render, hooks included, and helm prints it unchanged', async () => {
    const seen: string[] = [];
    const g = await gate(async (m) => void seen.push(m));
    expect(g.helmArgs).toEqual(['--post-renderer', RENDER_GATE_PLUGIN]);
    const gated = await template(g);
    expect(gated.exitCode, gated.stderr).toBe(0);
    await expect(g.checked).resolves.toBeUndefined();
    expect(g.stoppedBy()).toBeUndefined();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('kind: Job');
    expect(seen[0]).toContain('name: migrate');
    expect(seen[0]).toContain('replicas: 2');
    const plain = await template();
    expect(gated.stdout).toBe(plain.stdout);
  });

  it("a failed check stops helm before it goes on: exit 1, the check's own error kept", async () => {
    const denied = new PreflightError('RBAC: this identity lacks 1 permission(s) the chart needs');
    const g = await gate(async () => {
      throw denied;
    });
    const r = await template(g);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(g.stoppedBy()).toBe(denied);
    await expect(g.checked).rejects.toBe(denied);
  });

  it('proceed false, or a restart asked while helm waits at the gate: helm stops, the run starts over', async () => {
    const refused = await gate(async () => undefined, async () => false);
    expect((await template(refused)).exitCode).toBe(1);
    expect(refused.stoppedBy()).toBe('restart');

    let waiting!: () => void;
    const atGate = new Promise<void>((resolve) => (waiting = resolve));
    const held = await gate(async () => undefined, async () => {
      waiting();
      return new Promise<boolean>(() => undefined); // the Lease never comes
    });
    const run = template(held);
    await atGate;
    held.restart();
    const r = await run;
    expect(r.exitCode).toBe(1);
    expect(held.stoppedBy()).toBe('restart');
  });

  it("proceed failing (the Lease lost, a SIGTERM while helm waited): helm stops, that failure is the run's", async () => {
    const interrupted = new TransientError('interrupted (SIGTERM/SIGINT) during install; nothing was changed');
    const g = await gate(async () => undefined, async () => {
      throw interrupted;
    });
    const r = await template(g);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(g.stoppedBy()).toBe(interrupted);
    await expect(g.checked).resolves.toBeUndefined();
  });

  it('a render that fails before the gate: helmEnded rejects `checked` with helm\'s failure', async () => {
    const g = await gate(async () => undefined);
    const r = await template(g, ['--set', 'fail=true']);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('asked to fail');
    const failure = new Error(r.stderr);
    g.helmEnded(failure);
    await expect(g.checked).rejects.toBe(failure);
    expect(g.stoppedBy()).toBeUndefined();
  });
});

describe('sameRevisions (the release under the Lease as the run read it)', () => {
  const r = (revision: number, status: string) => ({ revision, status, labels: {} });
  it('the same revisions with the same statuses, in order; anything else is a change', () => {
    expect(sameRevisions([], [])).toBe(true);
    expect(sameRevisions([r(3, 'deployed')], [r(3, 'deployed')])).toBe(true);
    expect(sameRevisions([r(3, 'deployed'), r(4, 'pending-upgrade')], [r(3, 'deployed')])).toBe(false);
    expect(sameRevisions([r(3, 'superseded')], [r(3, 'deployed')])).toBe(false);
    expect(sameRevisions([r(4, 'deployed')], [r(3, 'deployed')])).toBe(false);
    expect(sameRevisions([], [r(1, 'deployed')])).toBe(false);
  });
});
