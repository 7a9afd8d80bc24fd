// The app slug annotation (src/post-render/annotate.ts) through the post-render's own rewrite, on
// streams written by hand: each expected text is the input with exactly the lines we mean to add.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { prepareRewrite, rewriteManifests } from '../../src/post-render/rewrite-manifests.js';
import { splitManifestStream } from '../../src/rendered/manifest-stream.js';

const annotate = (text: string, appSlug = 'storefront') => rewriteManifests(text, { extraPaths: [], appSlug }).output;

/** What go-yaml-like readers see: the annotations of each object, List items included. */
function annotationsOf(text: string): unknown[] {
  return parseAllDocuments(text, { version: '1.1', merge: true })
    .map(
      (d) =>
        d.toJS() as {
          kind?: string;
          items?: { metadata?: { annotations?: unknown } }[];
          metadata?: { annotations?: unknown };
        } | null,
    )
    .filter((o) => o !== null)
    .flatMap((o) =>
      o.kind?.endsWith('List') ? o.items!.map((i) => i.metadata?.annotations) : [o.metadata?.annotations],
    );
}

describe('the kots.io/app-slug annotation', () => {
  it('is added to a block annotations map as its first key, and nothing else changes', () => {
    const input = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: web  # the web config',
      '  annotations:',
      '    note: "keep"',
      'data:',
      '  a: "0777"',
      '',
    ].join('\n');
    expect(annotate(input)).toBe(
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata:',
        '  name: web  # the web config',
        '  annotations:',
        '    kots.io/app-slug: "storefront"',
        '    note: "keep"',
        'data:',
        '  a: "0777"',
        '',
      ].join('\n'),
    );
  });

  it('adds an annotations map to metadata without one', () => {
    const input = [
      'apiVersion: v1',
      'kind: Service',
      'metadata:',
      '  name: web',
      '  labels: {app: web}',
      'spec:',
      '  ports: [{port: 80}]',
      '',
    ].join('\n');
    expect(annotate(input)).toBe(
      [
        'apiVersion: v1',
        'kind: Service',
        'metadata:',
        '  annotations: {kots.io/app-slug: "storefront"}',
        '  name: web',
        '  labels: {app: web}',
        'spec:',
        '  ports: [{port: 80}]',
        '',
      ].join('\n'),
    );
  });

  it('fills annotations that are empty, ~, null or {}', () => {
    const head = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n';
    expect(annotate(`${head}  annotations:\ntype: Opaque\n`)).toBe(
      `${head}  annotations: {"kots.io/app-slug": "storefront"}\ntype: Opaque\n`,
    );
    expect(annotate(`${head}  annotations: ~\n`)).toBe(`${head}  annotations: {"kots.io/app-slug": "storefront"}\n`);
    expect(annotate(`${head}  annotations: null\n`)).toBe(`${head}  annotations: {"kots.io/app-slug": "storefront"}\n`);
    expect(annotate(`${head}  annotations: {}\n`)).toBe(`${head}  annotations: {kots.io/app-slug: "storefront"}\n`);
    expect(annotate(`${head}  annotations: # none\n`)).toBe(
      `${head}  annotations: {"kots.io/app-slug": "storefront"} # none\n`,
    );
  });

  it('edits flow metadata and flow annotations in place', () => {
    expect(annotate('kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n')).toBe(
      'kind: ConfigMap\napiVersion: v1\nmetadata: {annotations: {kots.io/app-slug: "storefront"}, name: a}\n',
    );
    expect(annotate('kind: ConfigMap\napiVersion: v1\nmetadata: {name: a, annotations: {x: "1"}}\n')).toBe(
      'kind: ConfigMap\napiVersion: v1\nmetadata: {name: a, annotations: {kots.io/app-slug: "storefront", x: "1"}}\n',
    );
  });

  it('leaves an equal value alone and replaces another slug', () => {
    const same = 'kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    kots.io/app-slug: storefront\n';
    expect(annotate(same)).toBe(same);
    expect(annotate('kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    kots.io/app-slug: other\n')).toBe(
      'kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    kots.io/app-slug: "storefront"\n',
    );
  });

  it('quotes a slug that YAML 1.1 would read as a number or a boolean', () => {
    const out = annotate('kind: ConfigMap\nmetadata:\n  name: a\n', '1234');
    expect(out).toBe('kind: ConfigMap\nmetadata:\n  annotations: {kots.io/app-slug: "1234"}\n  name: a\n');
    expect(annotationsOf(out)).toEqual([{ 'kots.io/app-slug': '1234' }]);
  });

  it('annotates each item of a List, not the List', () => {
    const input = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '  - apiVersion: v1',
      '    kind: ConfigMap',
      '    metadata:',
      '      name: a',
      '  - apiVersion: v1',
      '    kind: ConfigMap',
      '    metadata:',
      '      name: b',
      '      annotations:',
      '        x: "1"',
      '',
    ].join('\n');
    const out = annotate(input);
    expect(out).toBe(
      input
        .replace('      name: a\n', '      annotations: {kots.io/app-slug: "storefront"}\n      name: a\n')
        .replace('        x: "1"\n', '        kots.io/app-slug: "storefront"\n        x: "1"\n'),
    );
    expect(annotationsOf(out)).toEqual([
      { 'kots.io/app-slug': 'storefront' },
      { 'kots.io/app-slug': 'storefront', x: '1' },
    ]);
  });

  it('never touches a pod template nor volumeClaimTemplates (immutable: an upgrade would fail)', () => {
    const input = [
      'apiVersion: apps/v1',
      'kind: StatefulSet',
      'metadata:',
      '  name: db',
      'spec:',
      '  serviceName: db',
      '  selector: {matchLabels: {app: db}}',
      '  template:',
      '    metadata:',
      '      labels: {app: db}',
      '    spec:',
      '      containers: [{name: db, image: postgres:16}]',
      '  volumeClaimTemplates:',
      '    - metadata:',
      '        name: data',
      '      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}',
      '',
    ].join('\n');
    expect(annotate(input)).toBe(
      input.replace(
        'metadata:\n  name: db\n',
        'metadata:\n  annotations: {kots.io/app-slug: "storefront"}\n  name: db\n',
      ),
    );
  });

  it('passes a CustomResourceDefinition through unchanged (cluster-scoped: KOTS never deletes it)', () => {
    const crd =
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\nspec:\n  group: example.com\n';
    const cm = '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n';
    const prepared = prepareRewrite(splitManifestStream(crd + cm), { extraPaths: [], appSlug: 's' });
    expect([...prepared.output()].join('')).toBe(
      crd + '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations: {kots.io/app-slug: "s"}\n  name: a\n',
    );
    expect(prepared.summary.annotated).toBe(1);
  });

  it('annotates hooks like any object (helm 4 post-renders them)', () => {
    const hook =
      'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-install\nspec: {}\n';
    expect(annotate(hook)).toBe(
      'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    kots.io/app-slug: "storefront"\n    helm.sh/hook: pre-install\nspec: {}\n',
    );
  });

  it('writes an explicit copy where metadata or annotations come from an anchor, leaving the anchor alone', () => {
    const viaAlias = 'kind: ConfigMap\nx-shared: &ann {team: a}\nmetadata:\n  name: a\n  annotations: *ann\n';
    const out = annotate(viaAlias);
    expect(out).toBe(
      'kind: ConfigMap\nx-shared: &ann {team: a}\nmetadata:\n  name: a\n  annotations: {"team":"a","kots.io/app-slug":"storefront"}\n',
    );
    const viaMerge = 'kind: ConfigMap\nx-base: &base\n  annotations: {team: a}\nmetadata:\n  <<: *base\n  name: a\n';
    const merged = annotate(viaMerge);
    expect(merged).toBe(
      'kind: ConfigMap\nx-base: &base\n  annotations: {team: a}\nmetadata:\n  annotations: {"team":"a","kots.io/app-slug":"storefront"}\n  <<: *base\n  name: a\n',
    );
    expect(annotationsOf(merged)).toEqual([{ team: 'a', 'kots.io/app-slug': 'storefront' }]);
  });

  it("reads helm 4's re-serialised stream (its filename annotation is kept)", () => {
    const helm4 =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    postrenderer.helm.sh/postrender-filename: 'storefront/templates/cm.yaml'\n  name: a\n";
    expect(annotate(helm4)).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    kots.io/app-slug: "storefront"\n    postrenderer.helm.sh/postrender-filename: \'storefront/templates/cm.yaml\'\n  name: a\n',
    );
  });

  it('changes nothing without a slug', () => {
    const input = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n';
    expect(rewriteManifests(input, { extraPaths: [] }).output).toBe(input);
  });
});
