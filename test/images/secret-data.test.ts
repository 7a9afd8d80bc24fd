// A Secret's data read for images: strict base64, text only, values files that parse.
import { describe, expect, it } from 'vitest';
import { decodeSecretValue, encodeSecretValue, valuesFileProblem } from '../../src/images/secret-data.js';
import { findNameTagPairs } from '../../src/images/name-tag-pairs.js';
import { findEmbeddedReferences } from '../../src/images/embedded-images.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('Secret data', () => {
  it('decodes valid base64 text, and says why anything else is left alone', () => {
    expect(decodeSecretValue(b64('image: quay.io/a/b:1\n'))).toEqual({ text: 'image: quay.io/a/b:1\n' });
    expect(decodeSecretValue('not base64!')).toEqual({ problem: 'not valid base64' });
    expect(decodeSecretValue('YWJj\nZGVm')).toEqual({ problem: 'not valid base64' });
    expect(decodeSecretValue(Buffer.from([0xff, 0xfe, 0x00, 0x81]).toString('base64'))).toEqual({ binary: true });
    expect(decodeSecretValue('')).toEqual({ text: '' });
  });

  it('encodes back to the same bytes, UTF-8 included', () => {
    const text = 'greeting: "grüße"\nimage: quay.io/a/b:1\n';
    expect(encodeSecretValue(text)).toBe(b64(text));
  });

  it('a key named like a values file must parse; the problem names no content', () => {
    expect(valuesFileProblem('values.yaml', 'a: [1\n  secret-value\n')).toMatch(
      /^its values file does not parse \([^\n]*[^:]\)$/,
    );
    expect(valuesFileProblem('values.yaml', 'a: 1\n')).toBeUndefined();
    expect(valuesFileProblem('notes', 'a: [1\n')).toBeUndefined();
  });
});

describe('findNameTagPairs', () => {
  it('joins a name (or repository) and a tag key into one reference, ranging over the name only', () => {
    const text = 'singleuser:\n  image:\n    name: quay.io/jupyterhub/k8s-singleuser-sample\n    tag: "4.0.0"\n';
    const [pair] = findNameTagPairs(text);
    expect(pair).toMatchObject({ reference: 'quay.io/jupyterhub/k8s-singleuser-sample:4.0.0', via: 'image.name' });
    expect(text.slice(pair!.start, pair!.end)).toBe('quay.io/jupyterhub/k8s-singleuser-sample');
    const json = '{\n  "proxy": {"repository": "ghcr.io/acme/proxy", "tag": "1.2"}\n}';
    expect(findNameTagPairs(json).map((p) => [p.reference, json.slice(p.start, p.end)])).toEqual([
      ['ghcr.io/acme/proxy:1.2', 'ghcr.io/acme/proxy'],
    ]);
  });

  it('takes no name without a registry host unless its key says image, no tag of its own, and no text that does not parse', () => {
    expect(findNameTagPairs('app:\n  name: web\n  tag: v1\n')).toEqual([]);
    expect(findNameTagPairs('image:\n  name: acme/web\n  tag: v1\n').map((p) => p.reference)).toEqual(['acme/web:v1']);
    expect(findNameTagPairs('image:\n  name: quay.io/a/b:2\n  tag: v1\n')).toEqual([]);
    expect(findNameTagPairs('image:\n  name: [quay.io/a/b\n  tag: v1\n')).toEqual([]);
  });
});

describe("JSON on one line (a template's toJson) in data", () => {
  it('reads its strings under their keys: images, artifacts in a list, name-tag pairs; no URL', () => {
    const found = (value: string) =>
      findEmbeddedReferences(value, { where: 'data', key: 'config.json' }).images.map((r) => [
        r.reference,
        value.slice(r.start, r.end),
        r.via,
      ]);
    expect(found('{"image":"quay.io/jupyterhub/k8s-network-tools:4.0.0","pullPolicy":"IfNotPresent"}')).toEqual([
      ['quay.io/jupyterhub/k8s-network-tools:4.0.0', 'quay.io/jupyterhub/k8s-network-tools:4.0.0', 'image'],
    ]);
    expect(found('{"singleuser":{"image":{"name":"quay.io/jupyterhub/k8s-singleuser-sample","tag":"4.0.0"}}}')).toEqual(
      [['quay.io/jupyterhub/k8s-singleuser-sample:4.0.0', 'quay.io/jupyterhub/k8s-singleuser-sample', 'image.name']],
    );
    expect(found('{"docs":"https://quay.io/a/b:1","selector":"app.kubernetes.io/component:x"}')).toEqual([]);
    expect(found('{"broken":"quay.io/a/b:1"')).toEqual([]);
  });
});
