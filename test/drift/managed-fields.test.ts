// Naming who changed a drifted field from the live object's managedFields (fieldsV1), written the
// way the API server writes them after helm's apply and kubectl's changes.
import { describe, expect, it } from 'vitest';
import { fieldManager, itemMatches } from '../../src/drift/managed-fields.js';
import { parsePointer } from '../../src/drift/json-pointer.js';

const live = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    annotations: { 'meta.helm.sh/release-name': 'shop', 'example.com/note': 'x' },
    managedFields: [
      {
        manager: 'helm',
        operation: 'Apply',
        time: '2026-11-24T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:annotations': { 'f:meta.helm.sh/release-name': {} } },
          'f:spec': {
            'f:template': {
              'f:spec': {
                'f:containers': {
                  'k:{"name":"web"}': {
                    '.': {},
                    'f:name': {},
                    'f:env': { 'k:{"name":"MODE"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                  },
                  'k:{"name":"sidecar"}': { '.': {}, 'f:name': {}, 'f:image': {}, 'f:args': {} },
                },
              },
            },
          },
        },
      },
      {
        manager: 'kubectl-set',
        operation: 'Update',
        time: '2026-11-24T10:05:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { 'f:image': {} } } } } },
        },
      },
      {
        manager: 'kubectl',
        operation: 'Update',
        subresource: 'scale',
        time: '2026-11-24T10:06:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      },
      {
        manager: 'kubectl-annotate',
        operation: 'Update',
        time: '2026-11-24T10:07:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:example.com/note': {} } } },
      },
      {
        manager: 'kubectl-edit',
        operation: 'Update',
        time: '2026-11-24T10:08:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            'f:template': {
              'f:spec': {
                'f:containers': { 'k:{"name":"web"}': { 'f:env': { 'k:{"name":"MODE"}': { 'f:value': {} } } } },
              },
            },
          },
        },
      },
    ],
  },
  spec: {
    replicas: 4,
    template: {
      spec: {
        containers: [
          { name: 'sidecar', image: 'busybox', args: ['a', 'b'] },
          { name: 'web', image: 'nginx:1.28', env: [{ name: 'MODE', value: 'debug' }] },
        ],
      },
    },
  },
};

const owner = (pointer: string) => fieldManager(live, parsePointer(pointer));

describe('fieldManager', () => {
  it('finds the manager of a list item by its key, whatever its index', () => {
    expect(owner('/spec/template/spec/containers/1/image')).toBe('kubectl-set');
    expect(owner('/spec/template/spec/containers/0/image')).toBe('helm');
  });
  it('names kubectl for a scale, kubectl-annotate and kubectl-edit', () => {
    expect(owner('/spec/replicas')).toBe('kubectl');
    expect(owner('/metadata/annotations/example.com~1note')).toBe('kubectl-annotate');
    // Shared by helm (Apply) and kubectl-edit: the later writer.
    expect(owner('/spec/template/spec/containers/1/env/0/value')).toBe('kubectl-edit');
  });
  it('an atomic list is owned whole by whoever set it', () => {
    expect(owner('/spec/template/spec/containers/0/args/1')).toBe('helm');
  });
  it('the manager that names a key wins over one left owning its map as a leaf, written in the same second', () => {
    // As the API server left a ConfigMap helm 3 created and `kubectl patch` changed in that second.
    const cm = {
      data: { region: 'us' },
      metadata: {
        managedFields: [
          { manager: 'helm', operation: 'Update', time: '2026-11-27T07:52:08Z', fieldsV1: { 'f:data': {} } },
          {
            manager: 'kubectl-patch',
            operation: 'Update',
            time: '2026-11-27T07:52:08Z',
            fieldsV1: { 'f:data': { 'f:region': {} } },
          },
        ],
      },
    };
    expect(fieldManager(cm, ['data', 'region'])).toBe('kubectl-patch');
  });

  it('no owner for a field the object no longer has, or nobody claims', () => {
    expect(owner('/spec/template/spec/containers/0/env/0/value')).toBeUndefined();
    expect(owner('/spec/template/spec/containers/7/image')).toBeUndefined();
    expect(owner('/spec/paused')).toBeUndefined();
    expect(fieldManager({ metadata: {} }, ['spec'])).toBeUndefined();
  });
  it('matches k:, v: and i: item keys', () => {
    expect(
      itemMatches('k:{"containerPort":80,"protocol":"TCP"}', { containerPort: 80, protocol: 'TCP', name: 'http' }, 3),
    ).toBe(true);
    expect(itemMatches('k:{"containerPort":80,"protocol":"TCP"}', { containerPort: 80, protocol: 'UDP' }, 3)).toBe(
      false,
    );
    expect(itemMatches('v:"example.com/finalizer"', 'example.com/finalizer', 0)).toBe(true);
    expect(itemMatches('v:"a"', 'b', 0)).toBe(false);
    expect(itemMatches('i:2', 'anything', 2)).toBe(true);
    expect(itemMatches('i:2', 'anything', 1)).toBe(false);
    expect(itemMatches('k:{not json', {}, 0)).toBe(false);
  });
});
