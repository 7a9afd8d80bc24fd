// The fast reader against the `yaml` library's parser, which is the oracle: for every document
// it accepts, the same values, the same node kinds, styles and source ranges (the rewriter edits
// text at those ranges); everything outside its subset must be handed back (undefined).
import { describe, it, expect } from 'vitest';
import { execa } from 'execa';
import { join } from 'node:path';
import { isMap, isPair, isScalar, isSeq, type Document, type Node } from 'yaml';
import { fastParseDocument } from '../../src/rendered/fast-yaml.js';
import { parseWithLibrary, splitManifestStream } from '../../src/rendered/manifest-stream.js';
import { chartDir, helm3, helm4, repoRoot, tempDir } from '../helpers.js';

/** Every difference between two trees that the rewriter or a finder could notice. */
function differences(a: unknown, b: unknown, path = '$', out: string[] = []): string[] {
  if (a === null || a === undefined || b === null || b === undefined) {
    if ((a ?? null) !== (b ?? null)) out.push(`${path}: ${String(a)} vs ${String(b)}`);
    return out;
  }
  if (isScalar(a)) {
    if (!isScalar(b)) return [...out, `${path}: scalar vs ${String(b)}`];
    if (a.type !== b.type) out.push(`${path}: type ${a.type} vs ${b.type}`);
    if (a.range![0] !== b.range![0] || a.range![1] !== b.range![1]) out.push(`${path}: range ${a.range} vs ${b.range}`);
    if (!Object.is(a.value, b.value))
      out.push(`${path}: value ${JSON.stringify(a.value)} vs ${JSON.stringify(b.value)}`);
    if (a.source !== b.source) out.push(`${path}: source ${JSON.stringify(a.source)} vs ${JSON.stringify(b.source)}`);
    return out;
  }
  if (isMap(a) || isSeq(a)) {
    if (isMap(a) !== isMap(b) || isSeq(a) !== isSeq(b)) return [...out, `${path}: collection kind`];
    const other = b as typeof a;
    if (a.range![0] !== other.range![0]) out.push(`${path}: starts at ${a.range![0]} vs ${other.range![0]}`);
    if (Boolean(a.flow) !== Boolean(other.flow)) out.push(`${path}: flow ${a.flow} vs ${other.flow}`);
    if (a.items.length !== other.items.length)
      return [...out, `${path}: ${a.items.length} vs ${other.items.length} items`];
    a.items.forEach((item: unknown, i: number) => {
      const twin = other.items[i] as unknown;
      if (isPair(item) && isPair(twin)) {
        differences(item.key, twin.key, `${path}.<key ${i}>`, out);
        differences(item.value, twin.value, `${path}.${String((item.key as { value?: unknown }).value)}`, out);
      } else differences(item, twin, `${path}[${i}]`, out);
    });
    return out;
  }
  return [...out, `${path}: unexpected node`];
}

function library(text: string): Document.Parsed {
  const { docs } = parseWithLibrary({ index: 0, text, line: 1 });
  expect(docs).toHaveLength(1);
  return docs[0]!;
}

/** Asserts the fast reader takes the document and reads it exactly as the library does. */
function expectSame(text: string): Document.Parsed {
  const fast = fastParseDocument(text);
  expect(fast, `fast reader refused:\n${text}`).toBeDefined();
  const lib = library(text);
  expect(differences(fast!.contents as Node, lib.contents as Node)).toEqual([]);
  expect(fast!.toJS()).toEqual(lib.toJS());
  return fast!;
}

describe('fastParseDocument reads what helm emits exactly as the library does', () => {
  it('block maps and lists, lists at their key indentation, nested and compact', () => {
    expectSame(`---
# Source: demo/templates/x.yaml
apiVersion: apps/v1   # trailing comment
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
spec:
  template:
    spec:
      containers:
      - name: a
        image: nginx:1.27
        args:
          - --flag=x
          - - nested
            - list
      -   name: b
          image: "quay.io/x/y@sha256:${'e'.repeat(64)}"

      # a comment between items
      - name: c
        env:
        - {name: A, value: "1"}
        - name: B
          value:
        - name: C
          value:   
        - name: D
          value:  # a comment
      initContainers: []
`);
  });

  it('scalars: YAML 1.1 look-alikes, quotes, escapes, empty values, comments', () => {
    const doc = expectSame(`ka: yes
kb: no
kc: on
kd: ~
ke: null
kf: 0777
kg: 0x1F
kh: 1e3
ki: 12:30
kj: .inf
kl: -1
km: +2.5
kn: 'it''s: # not a comment'
ko: "tab\\tquote\\" slash\\/ unicode\\u00e9"
kp: plain with 'quotes' and "doubles" and a # comment
kq: http://example.com/#anchor
kr:
ks: ""
kt: ''
ku: -not-a-list
"quoted key": 1
'single key': 2
kv: [1, "two", 'three', {x: y}, []]
kw: {a: 1, "b": [c, d], e: {}}
`);
    expect(doc.toJS()).toMatchObject({
      ka: true,
      kb: false,
      kd: null,
      kf: 511,
      kg: 31,
      ki: 750,
      kn: "it's: # not a comment",
      kr: null,
    });
  });

  it("go-yaml's multi-line single-quoted strings, closing quote at column 0", () => {
    expectSame(`spec:
  groups:
  - name: g
    rules:
    - alert: A
      annotations:
        description: 'first: line

          it''s # second

'
        summary: 'two trailing


'
      expr: vector(1)
`);
  });

  it('multi-line double-quoted strings without escapes, as long CRD descriptions are written', () => {
    const doc = expectSame(`spec:
  properties:
    field0:
      type: string
      description: "A field as real operators document theirs, with a description long
        enough to weigh what theirs weigh.

        A second paragraph: # not a comment, it's text
          more indented   
"
    field1:
      description: "one
  two"
`);
    expect(doc.toJS().spec.properties.field0.description).toBe(
      "A field as real operators document theirs, with a description long enough to weigh what theirs weigh.\nA second paragraph: # not a comment, it's text more indented ",
    );
  });

  it('literal block scalars with clip and strip, indented lines and blank lines inside', () => {
    expectSame(`data:
  script: |
    #!/bin/sh
      indented

    echo "done"
  strip: |-
    no final break
  after: x
  inList:
  - |
    in a list
  - last
`);
  });

  it('hands everything else to the library', () => {
    const refused = [
      'a: &x 1\nb: *x\n',
      'a: {x: 1}\nb:\n  <<: {y: 2}\n',
      'a: !!str 1\n',
      'a: >\n  folded\n',
      'a: plain\n  continued\n',
      'a: [1,\n  2]\n',
      '? complex\n: key\n',
      'a: |+\n  keep\n\n',
      'a: |2\n    explicit\n',
      'a:\n\tb: 1\n',
      '80: http\n',
      'k: 2001-12-14\n', // a timestamp: the library makes a Date of it
      'yes: 1\n',
      'n: 1\n', // `n` is false in YAML 1.1
      'a: "multi\\\n  line"\n', // an escaped line break joins the lines without a blank
      'a: "multi\n  line \\"quoted\\""\n', // escapes over several lines
      'a: "\\x41"\n',
      'a: 1\n...\n',
      'a: 1\r\nb: 2\r\n',
      '\uFEFFa: 1\n',
      'a: b: c\n',
      '---\n# Source: only/comments.yaml\n',
    ];
    for (const text of refused) expect(fastParseDocument(text), JSON.stringify(text)).toBeUndefined();
  });
});

describe('on real helm output', () => {
  const charts = [join(repoRoot, 'test/fixtures/charts/go-yaml-strings'), chartDir];

  it.each([
    ['helm 4, as handed to a post-renderer', 4],
    ['helm 3', 3],
  ] as const)('%s: every document is read exactly as the library reads it, or handed back', async (_label, major) => {
    const dir = tempDir('fast-yaml');
    let fast = 0;
    for (const chart of charts) {
      const args = ['template', 'r', chart];
      let text: string;
      if (major === 4) {
        // What helm 4 hands a post-renderer is what it prints after a `cat` post-renderer.
        const plugins = join(dir, 'plugins');
        await execa('mkdir', ['-p', join(plugins, 'cat')]);
        await execa('sh', [
          '-c',
          `printf 'apiVersion: v1\\nname: cat\\nversion: 1.0.0\\ntype: postrenderer/v1\\nruntime: subprocess\\nruntimeConfig:\\n  platformCommand:\\n    - command: /bin/cat\\n' > '${join(plugins, 'cat', 'plugin.yaml')}'`,
        ]);
        text = (
          await execa(helm4, [...args, '--post-renderer', 'cat'], {
            env: { HELM_PLUGINS: plugins, HELM_CACHE_HOME: join(dir, 'cache') },
          })
        ).stdout;
      } else {
        text = (await execa(helm3, args)).stdout;
      }
      for (const piece of splitManifestStream(text)) {
        const doc = fastParseDocument(piece.text);
        if (!doc) continue;
        fast++;
        const lib = library(piece.text);
        expect(differences(doc.contents as Node, lib.contents as Node), piece.text).toEqual([]);
      }
    }
    expect(fast).toBeGreaterThan(10);
  });
});
