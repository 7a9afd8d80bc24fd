// Helm 4.1's post-render round trip drops the final newline of a block scalar that ends a
// template file's output (helm issue 31948, fixed in 4.2.0): shown on the real pinned helm 4, and
// found in the stream helm hands its post-renderer, where the render gate must not let it through.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { filesThatMayHaveLostANewline, keepsValuesThroughPostRender } from '../../src/helm/post-render-roundtrip.js';
import { openRenderGate, type RenderGate } from '../../src/render-gate.js';
import { helm4, tempDir } from '../helpers.js';

const chart = join(tempDir('roundtrip'), 'c');
mkdirSync(join(chart, 'templates'), { recursive: true });
writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: c\nversion: 0.1.0\n');
// Ends with a block scalar and no line break (as `{{- end }}` leaves it): the case helm 4.1 changes.
writeFileSync(join(chart, 'templates', 'script.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: script\ndata:\n  run.sh: |\n    echo hi');
// The same block scalar followed by another document, a chart's own `|-` mid-file, a plain ending.
writeFileSync(join(chart, 'templates', 'mid.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mid\ndata:\n  a: |\n    x\n  b: |-\n    y\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tail\ndata:\n  c: plain');
// Metadata last (helm adds its annotation there, after the chart's own last scalar): not named.
writeFileSync(join(chart, 'templates', 'meta-last.yaml'), 'apiVersion: v1\nkind: ConfigMap\ndata:\n  d: |\n    z\nmetadata:\n  name: meta-last');

let gates: RenderGate[] = [];
afterEach(() => {
  for (const g of gates) g.dispose();
  gates = [];
});

/** What helm hands its post-renderer, and what it applies (its output) with and without one. */
async function render(): Promise<{ stream: string; gated: Record<string, unknown>; plain: Record<string, unknown>; gate: RenderGate }> {
  let stream = '';
  const gate = await openRenderGate({ workDir: tempDir('roundtrip-gate'), check: async (m) => void (stream = m), proceed: async () => true, keepsValues: true });
  gates.push(gate);
  const data = (out: string) => Object.fromEntries(parseAllDocuments(out).map((d) => d.toJS()).filter(Boolean).map((o) => [o.metadata.name, o.data]));
  const gated = await execa(helm4, ['template', 'r', chart, ...gate.helmArgs], { env: { ...process.env, ...gate.env } });
  const plain = await execa(helm4, ['template', 'r', chart]);
  return { stream, gated: data(gated.stdout), plain: data(plain.stdout), gate };
}

describe('helm 4 post-render round trip', () => {
  it('the pinned helm drops the newline through a post-renderer; only the file that ends with the block scalar is named', async () => {
    const { stream, gated, plain } = await render();
    expect(plain['script']).toEqual({ 'run.sh': 'echo hi\n' });
    expect(gated['script']).toEqual({ 'run.sh': 'echo hi' });
    expect(gated['mid']).toEqual(plain['mid']);
    expect(filesThatMayHaveLostANewline(stream)).toEqual(['c/templates/script.yaml']);
  });

  it('a chart\'s own `|-` ending a file counts too (it cannot be told apart); a `|` with its newline does not', () => {
    const doc = (file: string, body: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    postrenderer.helm.sh/postrender-filename: '${file}'\n${body}`;
    expect(filesThatMayHaveLostANewline(`${doc('t/a.yaml', 'data:\n  k: |-\n    v\n')}---\n${doc('t/b.yaml', 'data:\n  k: |\n    v\n')}`)).toEqual(['t/a.yaml']);
    // Only a file's last document matters: helm separates the others with a line break.
    expect(filesThatMayHaveLostANewline(`${doc('t/a.yaml', 'data:\n  k: |-\n    v\n')}---\n${doc('t/a.yaml', 'data:\n  k: v\n')}`)).toEqual([]);
  });

  it('4.2.0 and later keep every value', () => {
    expect(keepsValuesThroughPostRender('v4.1.4')).toBe(false);
    expect(keepsValuesThroughPostRender('v4.2.0')).toBe(true);
    expect(keepsValuesThroughPostRender('v5.0.1')).toBe(true);
    expect(keepsValuesThroughPostRender('v3.17.3')).toBe(false);
  });
});
