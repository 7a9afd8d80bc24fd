// What a CRD's structural schema prunes from an object written in a version (the survey before a
// storage migration), and what a server dry run removed. Expected paths written out by hand.
import { describe, expect, it } from 'vitest';
import { prunedFields, removedPaths, versionSchema } from '../../src/crds/pruned-fields.js';

const str = { type: 'string' };
const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: str,
        ports: { type: 'array', items: { type: 'object', properties: { name: str } } },
        labels: { type: 'object', additionalProperties: str },
        raw: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { known: { type: 'object', properties: { a: str } } },
        },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
        count: { type: 'integer' },
      },
    },
    status: { type: 'object', properties: { phase: str } },
  },
};

describe('prunedFields', () => {
  it.each([
    ['nothing unknown', { spec: { size: 's', ports: [{ name: 'http' }], labels: { a: 'b' } } }, []],
    [
      'root apiVersion, kind, metadata are never pruned',
      { apiVersion: 'g/v1', kind: 'W', metadata: { name: 'a', labels: { x: 'y' } }, spec: {} },
      [],
    ],
    ['a field the schema lacks', { spec: { size: 's', old: 'x' } }, ['spec.old']],
    ['an unknown root field', { spec: {}, legacy: { a: 1 } }, ['legacy']],
    [
      'inside list items, by index',
      { spec: { ports: [{ name: 'a' }, { name: 'b', proto: 'TCP' }] } },
      ['spec.ports[1].proto'],
    ],
    ['additionalProperties keep every key, their values checked', { spec: { labels: { a: 'b', c: 'd' } } }, []],
    [
      'preserve-unknown-fields keeps unknown keys; known ones still checked',
      { spec: { raw: { anything: 1, known: { a: 'x', b: 'y' } } } },
      ['spec.raw.known.b'],
    ],
    [
      'an embedded resource keeps apiVersion, kind, metadata',
      { spec: { template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 1 }, other: 1 } } },
      ['spec.template.other'],
    ],
    ['status too', { spec: {}, status: { phase: 'Ready', legacyPhase: 'ok' } }, ['status.legacyPhase']],
    ['a scalar where an object is declared is not pruning', { spec: { count: 3, size: 's' } }, []],
  ])('%s', (_name, object, expected) => {
    expect(prunedFields(object as Record<string, unknown>, schema)).toEqual(expected);
  });

  it('no schema: nothing to check', () => {
    expect(prunedFields({ spec: { x: 1 } }, undefined)).toEqual([]);
  });

  it("reads a version's schema from a CRD", () => {
    const crd = {
      spec: {
        versions: [
          { name: 'v1alpha1', schema: { openAPIV3Schema: { type: 'object' } } },
          { name: 'v1', schema: { openAPIV3Schema: schema } },
        ],
      },
    };
    expect(versionSchema(crd, 'v1')).toBe(schema);
    expect(versionSchema(crd, 'v2')).toBeUndefined();
  });
});

describe('removedPaths', () => {
  it('names what the dry run dropped, nothing it added or changed', () => {
    const before = {
      spec: { size: 's', old: 'x', ports: [{ name: 'a', proto: 'TCP' }], n: null },
      status: { phase: 'Ready' },
    };
    const after = { spec: { size: 'm', ports: [{ name: 'a' }], n: null, defaulted: true }, status: { phase: 'Ready' } };
    expect(removedPaths(before, after)).toEqual(['spec.old', 'spec.ports[0].proto']);
    expect(removedPaths(before, before)).toEqual([]);
  });
});
