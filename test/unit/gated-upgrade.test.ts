// When install may start helm before its checks (the render gate): helm 4, nothing rewritten, no
// post-renderer of the user's, a release that is new or deployed; a first install only when its
// crds/ are known from files, and then with --skip-crds and a check that each CRD exists.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChartInfo } from '../../src/chart.js';
import { gateEligibility } from '../../src/commands/gated-upgrade.js';
import { chartDir, tempDir } from '../helpers.js';
import { mkdirSync, writeFileSync } from 'node:fs';

const bundled: ChartInfo = { path: chartDir, format: 'directory', name: 'storefront', version: '1.4.0', defaultValues: {}, annotatedImages: [] };
const crdText = readFileSync(join(chartDir, 'crds', 'promotions.storefront.example.com.yaml'), 'utf8');
const deployed = { revision: 3, status: 'deployed', labels: {} };
const base = { helmMajor: 4 as const, rewriting: false, helmArgs: [] as string[], chart: bundled, last: undefined };

describe('gateEligibility', () => {
  it('a first install of the bundled chart: its crds/ must exist (helm starts with --skip-crds), and the RBAC preflight sees them', () => {
    expect(gateEligibility(base)).toEqual({ crdTexts: [crdText], crdsMustExist: true });
  });

  it('an upgrade of a deployed release: helm creates nothing from crds/, which the RBAC preflight still sees', () => {
    expect(gateEligibility({ ...base, last: deployed })).toEqual({ crdTexts: [crdText], crdsMustExist: false });
  });

  it('a first install of a chart without crds/: nothing to check first', () => {
    const dir = join(tempDir('gate-eligibility'), 'plain');
    mkdirSync(join(dir, 'templates'), { recursive: true });
    writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: plain\nversion: 0.1.0\n');
    expect(gateEligibility({ ...base, chart: { ...bundled, path: dir } })).toEqual({ crdTexts: [], crdsMustExist: false });
  });

  it('the usual way: helm 3, an image rewrite, a post-renderer of the user\'s, a release not deployed, a first install of an archive', () => {
    expect(gateEligibility({ ...base, helmMajor: 3 })).toBeUndefined();
    expect(gateEligibility({ ...base, rewriting: true })).toBeUndefined();
    expect(gateEligibility({ ...base, helmArgs: ['--post-renderer', 'mine'] })).toBeUndefined();
    expect(gateEligibility({ ...base, helmArgs: ['--post-renderer=mine'] })).toBeUndefined();
    expect(gateEligibility({ ...base, helmArgs: ['--post-renderer-args=x'] })).toBeUndefined();
    for (const status of ['failed', 'pending-install', 'pending-upgrade', 'pending-rollback', 'uninstalled']) {
      expect(gateEligibility({ ...base, last: { ...deployed, status } }), status).toBeUndefined();
    }
    expect(gateEligibility({ ...base, chart: { ...bundled, format: 'archive', path: join(tempDir('gate-eligibility'), 'x.tgz') } })).toBeUndefined();
  });

  it('an upgrade of an archived chart: eligible, with no crds/ for the RBAC preflight (helm upgrade creates none)', () => {
    expect(gateEligibility({ ...base, last: deployed, chart: { ...bundled, format: 'archive', path: join(tempDir('gate-eligibility'), 'x.tgz') } })).toEqual({ crdTexts: [], crdsMustExist: false });
  });
});
