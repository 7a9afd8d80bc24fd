// A one-line JSON value of about 550 KiB in a ConfigMap and a Secret (a minified dashboard, a
// template's toJson of a large values tree), through the built CLI and the real helm 4 and helm 3:
// `images` lists the images named in it and `render --registry` rewrites them (the Secret decoded
// and encoded again), in bounded time. Before, a value over 256 KiB was not read: its images were
// neither listed nor rewritten, silently. The chart is written by the test (its data is large).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { helm3, helm4, runCli, tempDir } from '../helpers.js';

const dir = tempDir('large-json');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const L = 'registry.local:5000/acme';

/** About 550 KiB of JSON on one line, no white space (as toJson writes it), the images at its end. */
function dashboard(): string {
  const panels = Array.from({ length: 4_000 }, (_, i) => ({
    id: i,
    title: `panel-${i}`,
    targets: [{ expr: 'sum(rate(http_requests_total[5m]))by(code)' }],
    gridPos: { h: 8, w: 12, x: 0, y: i },
  }));
  return JSON.stringify({
    dashboard: { panels },
    sidecar: { image: 'quay.io/acme/dash-sidecar:1.2.3' },
    runner: { image: { registry: 'ghcr.io', repository: 'acme/runner', tag: '2.0.0' } },
  });
}

const chart = join(dir, 'large-json');
mkdirSync(join(chart, 'templates'), { recursive: true });
writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: large-json\nversion: 0.1.0\n');
const json = dashboard();
writeFileSync(join(chart, 'dashboard.json'), json);
writeFileSync(
  join(chart, 'templates', 'dashboard.yaml'),
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dash\ndata:\n  dashboard.json: {{ .Files.Get "dashboard.json" | quote }}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: dash\ndata:\n  dashboard.json: {{ .Files.Get "dashboard.json" | b64enc }}\n',
);

describe.each([
  ['helm 4', helm4],
  ['helm 3', helm3],
])('a one-line JSON value of about 550 KiB, %s', (_name, helmBin) => {
  const env = { HELM_BIN: helmBin };

  it('images lists its images; render --registry rewrites them in the ConfigMap and the Secret, every other byte as rendered', async () => {
    expect(json.length).toBeGreaterThan(512 * 1024);
    const began = Date.now();
    const listed = await runCli(['images', '--chart', chart], { env });
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual(['ghcr.io/acme/runner:2.0.0', 'quay.io/acme/dash-sidecar:1.2.3']);
    const r = await runCli(['render', '--chart', chart, '--registry', L], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    const seconds = (Date.now() - began) / 1000;
    process.stdout.write(
      `figure: images + render --registry of a ${Math.round(json.length / 1024)} KiB one-line JSON value (${_name}): ${seconds.toFixed(1)} s\n`,
    );
    expect(seconds).toBeLessThan(30);
    const expected = json
      .replace('"image":"quay.io/acme/dash-sidecar:1.2.3"', `"image":"${L}/dash-sidecar:1.2.3"`)
      .replace('"registry":"ghcr.io","repository":"acme/runner"', `"registry":"${L}","repository":"runner"`);
    expect(expected).not.toBe(json);
    const objects = parseAllDocuments(r.stdout)
      .map((d) => d.toJS())
      .filter(Boolean);
    const configMap = objects.find((o) => o.kind === 'ConfigMap');
    const secret = objects.find((o) => o.kind === 'Secret');
    expect(configMap.data['dashboard.json']).toBe(expected);
    expect(Buffer.from(secret.data['dashboard.json'], 'base64').toString()).toBe(expected);
  });
});
