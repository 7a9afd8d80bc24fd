// The stream reader on its own: where documents are cut (whole stream or chunk by chunk), and
// go-yaml's quoted scalars read the way go-yaml reads them. Expected values are written by hand.
import { describe, it, expect } from 'vitest';
import {
  isCustomResourceDefinition,
  ManifestSplitter,
  parsePiece,
  splitManifestStream,
} from '../../src/rendered/manifest-stream.js';
import { InvalidInputError } from '../../src/common/errors.js';

const STREAM = `# leading comment
apiVersion: v1
kind: A
---
# Source: c/templates/b.yaml
kind: B
note: |
  --- not a marker: indented inside a block scalar
---   # a marker with a comment
kind: C
----
--- !!map
kind: D
`;

describe('splitManifestStream', () => {
  it('cuts at every --- line and nowhere else, keeping every byte', () => {
    const pieces = splitManifestStream(STREAM);
    expect(pieces.map((p) => p.text)).toEqual([
      '# leading comment\napiVersion: v1\nkind: A\n',
      '---\n# Source: c/templates/b.yaml\nkind: B\nnote: |\n  --- not a marker: indented inside a block scalar\n',
      '---   # a marker with a comment\nkind: C\n----\n',
      '--- !!map\nkind: D\n',
    ]);
    expect(pieces.map((p) => [p.index, p.line])).toEqual([
      [0, 1],
      [1, 4],
      [2, 9],
      [3, 12],
    ]);
    expect(pieces.map((p) => p.text).join('')).toBe(STREAM);
  });

  it('cuts the same wherever the chunks end', () => {
    const whole = splitManifestStream(STREAM);
    for (const size of [1, 2, 3, 5, 7, 64]) {
      const splitter = new ManifestSplitter();
      const pieces = [];
      for (let i = 0; i < STREAM.length; i += size) pieces.push(...splitter.push(STREAM.slice(i, i + size)));
      pieces.push(...splitter.end());
      expect(pieces, `chunks of ${size}`).toEqual(whole);
    }
  });

  it('handles CRLF, a stream that starts with a marker, and an empty stream', () => {
    expect(splitManifestStream('---\r\na: 1\r\n---\r\nb: 2\r\n').map((p) => p.text)).toEqual([
      '---\r\na: 1\r\n',
      '---\r\nb: 2\r\n',
    ]);
    expect(splitManifestStream('')).toEqual([]);
  });
});

describe('parsePiece', () => {
  const value = (text: string) => parsePiece({ index: 0, text, line: 1 }).docs[0]!.toJS();

  it("reads go-yaml's single-quoted strings whose closing quote sits at column 0", () => {
    const text =
      "spec:\n  groups:\n  - rules:\n    - description: 'first: line\n\n        it''s # second\n\n'\n      next: ok\n";
    expect(value(text)).toEqual({
      spec: { groups: [{ rules: [{ description: "first: line\nit's # second\n", next: 'ok' }] }] },
    });
  });

  it('reads continuation lines at column 0 and in flow collections the same way (PyYAML agrees)', () => {
    expect(value("a:\n  b: 'x\n\ny\n\n'\n  c: {d: 'p\n\nq\n', e: [ 'r\n\n' ]}\n")).toEqual({
      a: { b: 'x\ny\n', c: { d: 'p\nq ', e: ['r\n'] } },
    });
    expect(value('a:\n  b: "x \\"q\\" \\\\\n\n"\n  c: 1\n')).toEqual({ a: { b: 'x "q" \\\n', c: 1 } });
  });

  it('still refuses what go-yaml refuses, naming the document and the stream line', () => {
    let error: unknown;
    try {
      parsePiece({ index: 4, text: '---\n# Source: c/templates/x.yaml\nkind: X\nspec: [1, 2\nother: 1\n', line: 20 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).message).toMatch(
      /^The rendered manifests are not valid YAML \(document 5, line 2[0-9] of the stream\)/,
    );
    expect((error as InvalidInputError).file).toBe('c/templates/x.yaml');
  });
});

describe('isCustomResourceDefinition', () => {
  // What helm 4 hands a post-renderer for a CRD: keys sorted, descriptions as block scalars and as
  // single-quoted strings whose continuation lines and closing quote sit at column 0.
  const CRD = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    postrenderer.helm.sh/postrender-filename: 'op/crds/widgets.yaml'
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: 'A widget.

It has a spec: read it.

'
        properties:
          spec:
            description: |-
              kind: Pod
              apiVersion: v1
            properties:
              image: {type: string, default: 'quay.io/example/widget:1.0'}
`;

  it('tells a CRD from its head, whatever its indented strings and block scalars hold', () => {
    expect(isCustomResourceDefinition(CRD)).toBe(true);
    expect(isCustomResourceDefinition(CRD.replace('apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'))).toBe(
      true,
    );
    // The lexer reads past a block scalar and a quoted string before the keys.
    expect(
      isCustomResourceDefinition(
        "note: |\n  kind: Pod\nother: 'a\n\nb'\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n",
      ),
    ).toBe(true);
    // A line at column 0 inside a string that names either key: not told apart without a parse, so parsed.
    expect(isCustomResourceDefinition(CRD.replace('It has a spec', 'Its kind has a spec'))).toBe(false);
    expect(
      isCustomResourceDefinition(
        '# Source: op/crds/w.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition # the schema\nspec: {}\n',
      ),
    ).toBe(true);
  });

  it('answers false for anything else, and whenever the head is not plainly read', () => {
    const no = [
      // Another kind, or the name in another group.
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: CustomResourceDefinition}\n',
      'apiVersion: example.com/v1\nkind: CustomResourceDefinition\n',
      // A Deployment whose quoted annotation holds CRD-looking lines at column 0.
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  annotations:\n    a: 'x\n\napiVersion: apiextensions.k8s.io/v1\n\nkind: CustomResourceDefinition\n\n'\nspec: {}\n",
      // No keys of its own: CRD-looking lines inside a string are not keys.
      "metadata:\n  a: 'x\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n'\n",
      // The CRD's kind given again further down (go-yaml keeps the last one).
      `${CRD}kind: Deployment\n`,
      // Quoted or flow-style keys, a List of CRDs, two documents in one piece.
      '"apiVersion": apiextensions.k8s.io/v1\n"kind": CustomResourceDefinition\n',
      '{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition}\n',
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n',
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n...\napiVersion: apps/v1\nkind: Deployment\n',
      // A value that is not a plain scalar, or none.
      "apiVersion: apiextensions.k8s.io/v1\nkind: 'CustomResourceDefinition'\n",
      'apiVersion: apiextensions.k8s.io/v1\nkind:\n  CustomResourceDefinition\n',
      '',
    ];
    for (const text of no) expect(isCustomResourceDefinition(text), text).toBe(false);
  });
});
