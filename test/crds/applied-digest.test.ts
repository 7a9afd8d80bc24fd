// The fast path of an unchanged CRD (src/crds/applied-digest.ts): a CRD is left unread only when
// its annotation is the chart CRD's digest AND the installer's apply is its only writer. Every
// other live CRD (edited by hand, by helm, by a controller, annotation gone or another chart's
// digest) is read whole and compared, as before.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DIGEST_ANNOTATION, recordsDigest, unchangedSinceApplied, withDigest } from '../../src/crds/applied-digest.js';
import { chartCrds } from '../../src/crds/chart-crds.js';

const digest = `sha256:${'a'.repeat(64)}`;
const ours = { manager: 'helm-installer', operation: 'Apply', apiVersion: 'apiextensions.k8s.io/v1', fieldsV1: {} };
const status = { manager: 'kube-apiserver', operation: 'Update', subresource: 'status', fieldsV1: {} };
const meta = (annotation: string | undefined, managedFields: object[]) => ({
  name: 'widgets.example.com',
  ...(annotation ? { annotations: { [DIGEST_ANNOTATION]: annotation, note: 'x' } } : {}),
  managedFields,
});

describe('unchangedSinceApplied', () => {
  it.each([
    ['the same digest, the installer the only writer (the status aside)', meta(digest, [ours, status]), true],
    ['another digest (the chart changed the CRD)', meta(`sha256:${'b'.repeat(64)}`, [ours]), false],
    ['no annotation (helm or an earlier installer applied it)', meta(undefined, [ours]), false],
    [
      'a hand edit (kubectl edit)',
      meta(digest, [ours, { manager: 'kubectl-edit', operation: 'Update', fieldsV1: {} }]),
      false,
    ],
    [
      'another server-side apply (kubectl apply --server-side)',
      meta(digest, [ours, { manager: 'kubectl', operation: 'Apply', fieldsV1: {} }]),
      false,
    ],
    [
      'a controller setting a field (a CA injector)',
      meta(digest, [ours, { manager: 'cainjector', operation: 'Update', fieldsV1: {} }]),
      false,
    ],
    [
      "the installer's own merge patch (an Update, not its apply)",
      meta(digest, [{ ...ours, operation: 'Update' }]),
      false,
    ],
    ['managedFields cleared by a write', meta(digest, []), false],
  ])('%s: %s', (_what, metadata, expected) => {
    expect(unchangedSinceApplied(metadata, digest)).toBe(expected);
  });
});

describe("recordsDigest: a CRD equal to the chart's, applied once more to mark it", () => {
  const helm = { manager: 'helm', operation: 'Apply', fieldsV1: {} };
  it.each([
    ["helm 4's own install of crds/ beside the installer's apply", meta(digest, [ours, helm, status]), true],
    ['no mark yet (helm 3 created it)', meta(undefined, [{ ...helm, operation: 'Update' }]), true],
    [
      'applied by hand with kubectl, as upgrade notes say',
      meta(undefined, [{ manager: 'kubectl-client-side-apply', operation: 'Update' }]),
      true,
    ],
    ['already marked, the installer the only writer', meta(digest, [ours, status]), false],
    // The apply would leave a controller's entry: every run would apply again.
    ['a controller holds a field', meta(digest, [ours, { manager: 'cainjector', operation: 'Update' }]), false],
  ])('%s: %s', (_what, metadata, expected) => {
    expect(recordsDigest(metadata, digest)).toBe(expected);
  });
});

describe("the chart CRD's digest", () => {
  const crd = (description: string) =>
    [
      '# Source: app/crds/widgets.yaml',
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      'metadata:',
      '  name: widgets.example.com',
      'spec:',
      '  group: example.com',
      `  names: {kind: Widget, plural: widgets, description: "${description}"}`,
      '',
    ].join('\n');

  it('is the sha256 of the text it was read from, and changes with it', () => {
    const [a] = chartCrds(`---\n${crd('one')}`);
    const [b] = chartCrds(`---\n${crd('two')}`);
    // sha256 of the piece `---\n<text>`, computed here by hand with node's crypto.
    expect(a!.digest).toBe(
      `sha256:${createHash('sha256')
        .update(`---\n${crd('one')}`)
        .digest('hex')}`,
    );
    expect(b!.digest).not.toBe(a!.digest);
  });

  it("is annotated on what the installer applies, the chart's own annotations kept", () => {
    const body = { apiVersion: 'apiextensions.k8s.io/v1', metadata: { name: 'w', annotations: { keep: 'me' } } };
    expect(withDigest({ body, digest })).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      metadata: { name: 'w', annotations: { keep: 'me', [DIGEST_ANNOTATION]: digest } },
    });
    expect(body.metadata.annotations).toEqual({ keep: 'me' });
  });
});
