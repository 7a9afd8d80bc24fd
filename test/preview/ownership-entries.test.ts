// What `plan` shows of the owners step (issue 36): each existing object helm would adopt marked
// with its owner and what install does about it, the refusal said above the objects, in text,
// JSON and Markdown. Expected text written by hand.
import { describe, expect, it } from 'vitest';
import { markOwnership } from '../../src/preview/ownership-entries.js';
import { formatText } from '../../src/preview/format-text.js';
import { planJson } from '../../src/preview/format-json.js';
import { formatMarkdown } from '../../src/preview/format-markdown.js';
import type { PlanEntry, PlanObjectInput, PlanReport } from '../../src/preview/plan-types.js';

const owned = (release: string) => ({
  metadata: {
    name: 'x',
    annotations: { 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': 'shop' },
  },
});
const input = (kind: string, name: string, live?: Record<string, unknown>): PlanObjectInput => ({
  apiVersion: 'v1',
  kind,
  name,
  namespace: 'shop',
  desired: { kind },
  ...(live ? { live } : {}),
});
const entry = (kind: string, name: string, action: PlanEntry['action']): PlanEntry => ({
  apiVersion: 'v1',
  kind,
  name,
  namespace: 'shop',
  action,
  fields: [],
  changedBy: [],
  diff: '',
});

const objects = [
  input('ConfigMap', 'settings', owned('billing')),
  input('Service', 'web', { metadata: { name: 'web' } }),
  input('Secret', 'db', owned('shop')),
  input('Deployment', 'web'),
];
const entries = [
  entry('ConfigMap', 'settings', 'unchanged'),
  entry('Service', 'web', 'unchanged'),
  entry('Secret', 'db', 'unchanged'),
  entry('Deployment', 'web', 'create'),
];
const ours = { release: 'shop', namespace: 'shop' };

describe('markOwnership', () => {
  it("first install: another release's object refused, an unowned one adopted, ours and new ones unmarked", () => {
    expect(markOwnership(entries, objects, ours, 'first-install').map((e) => [e.kind, e.ownership])).toEqual([
      ['ConfigMap', { outcome: 'refused', owner: { release: 'billing', namespace: 'shop' } }],
      ['Service', { outcome: 'adopted' }],
      ['Secret', undefined],
      ['Deployment', undefined],
    ]);
  });

  it('always: taken; no adoption (an upgrade with first-install): nothing marked', () => {
    expect(markOwnership(entries, objects, ours, 'always')[0]!.ownership).toEqual({
      outcome: 'taken',
      owner: { release: 'billing', namespace: 'shop' },
    });
    expect(markOwnership(entries, objects, ours, undefined)).toBe(entries);
  });

  it('text, JSON and Markdown show it', () => {
    const marked = markOwnership(entries, objects, ours, 'first-install');
    const report: PlanReport = {
      release: 'shop',
      namespace: 'shop',
      chart: 'shop-1.0.0',
      decision: { action: 'install', reason: 'no release yet' },
      entries: marked,
      hooks: [],
    };
    const text = formatText(report, { color: false });
    expect(text).toContain(
      'Install would be refused (exit 4): 1 object(s) belong to another release (marked below); nothing would change.\n',
    );
    // Unchanged objects are counted, not listed: an adopted or refused one is listed by its mark.
    expect(text).toContain(
      '  unchanged ConfigMap shop/settings\n    owned by release billing in namespace shop: install refuses it (exit 4, nothing changed); uninstall it there, or --take-ownership always takes it\n',
    );
    expect(text).toContain(
      '  unchanged Service shop/web\n    no release owns it: adopted by this release (--take-ownership)\n',
    );
    expect(planJson(report).objects[0]!.ownership).toEqual({
      outcome: 'refused',
      owner: { release: 'billing', namespace: 'shop' },
    });
    expect(formatMarkdown(report)).toContain(
      'owned by release billing in namespace shop: install refuses it (exit 4, nothing changed); uninstall it there, or --take-ownership always takes it.',
    );
  });
});
