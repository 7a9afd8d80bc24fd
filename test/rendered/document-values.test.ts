// A render's documents are read once a run (src/rendered/document-values.ts): the second step to
// ask gets the first one's values, the same text in another stream (another line) gives the same
// values, the values cannot be changed by one step under another, and YAML that does not parse is
// refused every time it is asked, never remembered as read.
import { describe, expect, it } from 'vitest';
import { documentValues } from '../../src/rendered/document-values.js';
import { manifestObjects } from '../../src/drift/manifest-objects.js';
import { InvalidInputError } from '../../src/common/errors.js';
import { widgetCrdYaml } from '../fixtures/widget-crd.js';

const text = widgetCrdYaml({ source: 'app/crds/widgets.yaml', rest: '  names: {kind: Widget, plural: widgets}\n' });

describe('documentValues', () => {
  it('reads a piece once: the same text gives the very same values, wherever it stands', () => {
    const first = documentValues({ index: 0, text, line: 1 });
    expect(first).toEqual([
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' } },
      },
    ]);
    expect(documentValues({ index: 3, text: `${text}`, line: 40 })).toBe(first);
  });

  it("gives frozen values: a step that changes one fails instead of changing the next step's", () => {
    const [crd] = documentValues({ index: 0, text, line: 1 }) as { metadata: { name: string } }[];
    expect(() => {
      crd!.metadata.name = 'changed';
    }).toThrow(TypeError);
    expect(crd!.metadata.name).toBe('widgets.example.com');
  });

  it('is the cache manifestObjects reads: a document of a manifest is the very value the CRD step gets', () => {
    const manifest = `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n${text}`;
    const objects = manifestObjects(manifest);
    expect(objects.map((o) => o.kind)).toEqual(['ConfigMap', 'CustomResourceDefinition']);
    expect(objects[1]).toBe(documentValues({ index: 1, text, line: 6 })[0]);
  });

  it('reads an unquoted date as the text helm sent, as go-yaml does', () => {
    const dated = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  day: 2026-11-24\n';
    expect(documentValues({ index: 0, text: dated, line: 1 })).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd' }, data: { day: '2026-11-24' } },
    ]);
  });

  it('refuses YAML that does not parse each time, naming the stream line', () => {
    const bad = { index: 1, text: `${text}  versions: [v1\n`, line: 12 };
    expect(() => documentValues(bad)).toThrow(InvalidInputError);
    expect(() => documentValues(bad)).toThrow(/document 2, line \d+ of the stream/);
  });
});
