// The fast reader against the `yaml` library's parser, which is the oracle: for every document
// it accepts, the same values, the same node kinds, styles and source ranges (the rewriter edits
// text at those ranges); everything outside its subset must be handed back (undefined).
import { describe, it, expect } from 'vitest';
import { execa } from 'execa';
import { join } from 'node:path';
import type { Document, Node } from 'yaml';
import { fastParseDocument } from '../../src/rendered/fast-yaml.js';
import { parseWithLibrary, splitManifestStream } from '../../src/rendered/manifest-stream.js';
import { chartDir, helm3, helm4, repoRoot, tempDir } from '../helpers.js';
import { differences } from './yaml-oracle.js';

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

/**
 * The fast reader's document when it takes `text`, after checking it is the library's exactly;
 * undefined when it hands the text back.
 */
function readAlike(text: string): Document.Parsed | undefined {
  const fast = fastParseDocument(text);
  if (!fast) return undefined;
  let lib: Document.Parsed;
  try {
    lib = library(text);
  } catch (error) {
    throw new Error(`the fast reader took what the library refuses: ${JSON.stringify(text)}`, { cause: error });
  }
  expect(differences(fast.contents as Node, lib.contents as Node), JSON.stringify(text)).toEqual([]);
  return fast;
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

  it('multi-line plain scalars, as go-yaml folds long CRD descriptions', () => {
    const doc = expectSame(`spec:
  properties:
    value:
      description: value defines the argument value, e.g. 30s. Can
        be empty for name-only arguments (e.g. --storage.tsdb.no-lockfile)

          and a paragraph, more indented, with 'quotes' "doubles" [brackets] {braces} a:b
      type: string
    list:
    - first item of a list
      continued
    - second
    onItsOwnLine:
      text that starts on
      the next line
  next: 1
`);
    expect(doc.toJS().spec.properties.value.description).toBe(
      `value defines the argument value, e.g. 30s. Can be empty for name-only arguments (e.g. --storage.tsdb.no-lockfile)\nand a paragraph, more indented, with 'quotes' "doubles" [brackets] {braces} a:b`,
    );
  });

  it('every shape of a plain continuation line is read as the library reads it, or handed back', () => {
    // Where the scalar sits (its parent's column decides which lines continue it), what a
    // continuation line holds and how far it is indented, with or without empty lines before it.
    const contexts: [string, string][] = [
      ['k: first', 'z: 1'],
      ['a:\n  k: first', 'z: 1'],
      ['- first', '- z'],
      ['- k: first', '- z'],
      ['a:\n- k: first', 'z: 1'],
      ['k:\n  first', 'z: 1'],
      ['a:\n  - first', 'z: 1'],
      ['k: 2001-12-14', 'z: 1'],
      ['k: first # a comment', 'z: 1'],
    ];
    const lines = ['two', 'two  ', '--flag=x', '- x', '-x', '? x', ': x', '"q"', "'q'", '[x]', '{x}', '&a', '*a', '!t'];
    lines.push(
      '|',
      '>',
      '% x',
      '@x',
      '`x',
      'a:b',
      'a: b',
      'x:',
      'a #c',
      '#c',
      'x\ty',
      '\tx',
      '1',
      'yes',
      '21:59:43.10',
    );
    lines.push('---', '...', 'k: v', 'http://x/#y');
    const gaps = ['', '\n', '\n  \n'];
    let taken = 0;
    let folded = 0;
    let total = 0;
    for (const [head, tail] of contexts)
      for (const line of lines)
        for (let indent = 0; indent <= 6; indent++)
          for (const gap of gaps)
            for (const end of ['', `\n${tail}`]) {
              const text = `${head}\n${gap}${' '.repeat(indent)}${line}${end}\n`;
              // And without its final line break, as the last document of a stream may come.
              for (const variant of [text, text.slice(0, -1)]) {
                total++;
                const fast = readAlike(variant);
                if (!fast) continue;
                taken++;
                if (/first[ \n]/.test(JSON.stringify(fast.toJS()).replaceAll('\\n', '\n'))) folded++;
              }
            }
    // The oracle must have seen many taken cases, not only hand-backs.
    expect(total).toBe(contexts.length * lines.length * 7 * gaps.length * 2 * 2);
    expect(taken).toBeGreaterThan(total / 3);
    expect(folded).toBeGreaterThan(total / 4);
  });

  it('multi-line double-quoted strings with escapes inside their lines, as CRDs written with \\n have them', () => {
    const doc = expectSame(`spec:
  properties:
    roundRobin:
      description: "roundRobin decides how a writer resolves its peers.\\nWhen on:\\n  - each
        write resolves the \\"host\\" name again.\\n  - a tab\\there, a slash \\/ and \\u00e9.

        A paragraph; a backslash \\\\ and \\"quotes\\" at a line's end: \\"
        end"
      type: string
`);
    expect(doc.toJS().spec.properties.roundRobin.description).toBe(
      'roundRobin decides how a writer resolves its peers.\nWhen on:\n  - each write resolves the "host" name again.\n  - a tab\there, a slash / and \u00e9.\nA paragraph; a backslash \\ and "quotes" at a line\'s end: " end',
    );
  });

  it('every shape of a double-quoted continuation line with escapes is read as the library reads it, or handed back', () => {
    const pieces = ['x', '\\n', '\\"', '\\\\', '\\t', '\\u00e9', '\\x41', '\\ ', '\\', ' ', '\t', '"', "'", '#', ': '];
    let taken = 0;
    let total = 0;
    for (const first of pieces)
      for (const second of pieces)
        for (const gap of ['\n', '\n\n', '\n  \n'])
          for (const indent of ['', '  ', '    ']) {
            const text = `a:\n  k: "one${first}${gap}${indent}${second}two${second}"\nz: 1\n`;
            total++;
            if (readAlike(text)) taken++;
          }
    expect(total).toBe(pieces.length ** 2 * 9);
    expect(taken).toBeGreaterThan(total / 3);
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

  it('literal blocks with an indentation indicator, as go-yaml writes text that starts with a blank line', () => {
    const doc = expectSame(`spec:
  containers:
  - args:
    - -ec
    - |2

        indented first line
      echo "done"

    - |2-
       one blank kept
    env:
      script: |-2

        x
`);
    expect(doc.toJS().spec.containers[0].args[1]).toBe('\n  indented first line\necho "done"\n');
  });

  it('every shape of a literal block with an indentation indicator is read as the library reads it, or handed back', () => {
    const contexts: [string, string][] = [
      ['k: |', 'z: 1'],
      ['a:\n  k: |', 'z: 1'],
      ['- |', '- z'],
      ['a:\n- |', 'z: 1'],
      ['a:\n  b:\n    - |', '  c: 1'],
      ['- k: |', '- z'],
      ['- - |', '- z'],
    ];
    const indicators = ['1', '2', '3', '4', '2-', '-2', '2+', '0'];
    const leads = ['', '\n', '   \n', '\n      \n'];
    let taken = 0;
    let total = 0;
    for (const [head, tail] of contexts)
      for (const indicator of indicators)
        for (const lead of leads)
          for (let first = 0; first <= 8; first++)
            for (const second of [0, 2, 4, 6]) {
              const body = `${lead}${' '.repeat(first)}x\n${' '.repeat(second)}y\n\n`;
              // Followed by a less indented line, or the end of the text with or without a line break.
              for (const text of [`${head}${indicator}\n${body}${tail}\n`, `${head}${indicator}\n${body}`]) {
                for (const variant of [text, text.replace(/\n+$/, '')]) {
                  total++;
                  if (readAlike(variant)) taken++;
                }
              }
            }
    expect(total).toBe(contexts.length * indicators.length * leads.length * 9 * 4 * 4);
    expect(taken).toBeGreaterThan(total / 8);
  });

  it('hands everything else to the library', () => {
    const refused = [
      'a: &x 1\nb: *x\n',
      'a: {x: 1}\nb:\n  <<: {y: 2}\n',
      'a: !!str 1\n',
      'a: >\n  folded\n',
      'a: plain # comment\n  continued\n',
      'a: 2001-12-14\n  21:59:43.10\n', // a timestamp again, once folded
      'a: plain\n  # comment\n  continued\n',
      'a: plain\n  continued: key\n',
      'plain\n  root scalar\n',
      'a: [1,\n  2]\n',
      '? complex\n: key\n',
      'a: |+\n  keep\n\n',
      // helm 3's ConfigMaps as public charts write them (helm 4 rewrites the empty one as ""):
      // a keep-chomped config file, and an empty literal block where a value rendered nothing.
      'data:\n  app.conf: |+\n    name = x\n\n  other: 1\n',
      'data:\n  users.acl: |-\n',
      'data:\n  users.acl: |-\n  other: 1\n',
      'a: |0\n    explicit\n',
      // A literal block at the very end without a final line break: the library still ends it
      // with one when clipping ("x\n"), so the fast reader leaves that to it.
      'a: |\n  x',
      'a: |\n  x\n   ',
      'data:\n  script: |2\n\n    x',
      '|2\n  at the root\n',
      'a:\n\tb: 1\n',
      '80: http\n',
      'k: 2001-12-14\n', // a timestamp: the library makes a Date of it
      'yes: 1\n',
      'n: 1\n', // `n` is false in YAML 1.1
      'a: "multi\\\n  line"\n', // an escaped line break joins the lines without a blank
      'a: "multi \\\n  line"\n', // an escaped blank before a line break is kept by the fold
      'a: "multi\n  \\ line"\n',
      'a: "multi\n  line \\x41"\n', // an escape outside JSON's, over several lines
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
  // crd-descriptions: a CRD written as generators write public charts' CRDs (under crds/, which
  // both majors hand on as written) and a script that helm 4 writes back as `|2`: the fast reader
  // must take both, not only survive them.
  const crdChart = join(repoRoot, 'test/fixtures/charts/crd-descriptions');
  const charts = [join(repoRoot, 'test/fixtures/charts/go-yaml-strings'), chartDir, crdChart];

  it.each([
    ['helm 4, as handed to a post-renderer', 4],
    ['helm 3', 3],
  ] as const)('%s: every document is read exactly as the library reads it, or handed back', async (_label, major) => {
    const dir = tempDir('fast-yaml');
    let fast = 0;
    let mustTake = 0;
    for (const chart of charts) {
      const args = ['template', 'r', chart, '--include-crds'];
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
            stripFinalNewline: false,
          })
        ).stdout;
      } else {
        // The stream as a post-renderer reads it, its final line break kept.
        text = (await execa(helm3, args, { stripFinalNewline: false })).stdout;
      }
      for (const piece of splitManifestStream(text)) {
        const doc = fastParseDocument(piece.text);
        if (!doc) continue;
        fast++;
        if (chart === crdChart && /kind: CustomResourceDefinition|provision\.sh/.test(piece.text)) mustTake++;
        const lib = library(piece.text);
        expect(differences(doc.contents as Node, lib.contents as Node), piece.text).toEqual([]);
      }
    }
    expect(fast).toBeGreaterThan(10);
    expect(mustTake).toBe(2);
  });
});
