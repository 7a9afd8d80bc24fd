// `render` with the app slug: what install applies, shown before it does. The expected output is
// helm's own render with one line more per object (the annotation, or the annotations map holding
// it), so it is built by removing those lines again, not by our code.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { helm3, helm4, repoRoot, runCli } from '../helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'app-slug');

async function render(bin: string, env: Record<string, string> = {}): Promise<string> {
  const r = await runCli(['render', '--chart', chart, '--release', 'shop', '--namespace', 'shop', '--helm-bin', bin], {
    env,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
}

describe.each([
  ['helm 4', helm4],
  ['helm 3', helm3],
])('render with HELM_INSTALLER_APP_SLUG (%s)', (_label, bin) => {
  it('adds kots.io/app-slug to every object, hooks included, and changes nothing else', async () => {
    const plain = await render(bin);
    const annotated = await render(bin, { HELM_INSTALLER_APP_SLUG: 'acme-shop' });
    expect(
      annotated
        .split('\n')
        .filter((l) => !l.includes('kots.io/app-slug'))
        .join('\n'),
    ).toBe(plain);
    const objects = parseAllDocuments(annotated)
      .map((d) => d.toJS())
      .filter(Boolean);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/shop-config',
      'Deployment/shop-web',
      'Job/shop-setup',
      'Secret/shop-secret',
      'Service/shop-web',
      'StatefulSet/shop-db',
    ]);
    for (const o of objects) expect(o.metadata.annotations?.['kots.io/app-slug'], o.kind).toBe('acme-shop');
    const secret = objects.find((o) => o.kind === 'Secret');
    expect(secret.metadata.annotations).toEqual({ 'kots.io/app-slug': 'acme-shop', 'example.com/owner': 'team-a' });
    // Immutable once created: an annotation there would make every upgrade of an older install fail.
    const db = objects.find((o) => o.kind === 'StatefulSet');
    expect(db.spec.volumeClaimTemplates[0].metadata).toEqual({ name: 'data' });
    expect(db.spec.template.metadata).toEqual({ labels: { app: 'shop-db' } });
  });
});
