// A render's CRDs are read once a run (src/rendered/crd-values.ts): the second step to ask gets
// the first one's values, the same text in another stream (another line) gives the same values,
// and YAML that does not parse is refused every time it is asked, never remembered as read.
import { describe, expect, it } from 'vitest';
import { crdPieceValues } from '../../src/rendered/crd-values.js';
import { InvalidInputError } from '../../src/common/errors.js';
import { widgetCrdYaml } from '../fixtures/widget-crd.js';

const text = widgetCrdYaml({ source: 'app/crds/widgets.yaml', rest: '  names: {kind: Widget, plural: widgets}\n' });

describe('crdPieceValues', () => {
  it('reads a piece once: the same text gives the very same values, wherever it stands', () => {
    const first = crdPieceValues({ index: 0, text, line: 1 });
    expect(first).toEqual([
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' } },
      },
    ]);
    expect(crdPieceValues({ index: 3, text: `${text}`, line: 40 })).toBe(first);
  });

  it('refuses YAML that does not parse each time, naming the stream line', () => {
    const bad = { index: 1, text: `${text}  versions: [v1\n`, line: 12 };
    expect(() => crdPieceValues(bad)).toThrow(InvalidInputError);
    expect(() => crdPieceValues(bad)).toThrow(/document 2, line \d+ of the stream/);
  });
});
