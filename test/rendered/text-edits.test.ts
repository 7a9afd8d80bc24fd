// scalarEdit: a scalar gets a new value in its own style where that style can hold it; every
// other byte stays. Checked twice: the exact text (written by hand) and the value read back.
import { describe, it, expect } from 'vitest';
import { isMap, isScalar, parseDocument, type Scalar } from 'yaml';
import { applyEdits, scalarEdit } from '../../src/rendered/text-edits.js';

function edit(text: string, key: string, value: string): string {
  const doc = parseDocument(text, { version: '1.1' });
  const node = isMap(doc.contents) ? doc.contents.get(key, true) : undefined;
  if (!isScalar(node)) throw new Error(`no scalar at ${key}`);
  const out = applyEdits(text, [scalarEdit(node as Scalar, value, text)]);
  expect((parseDocument(out, { version: '1.1' }).toJS() as Record<string, unknown>)[key]).toBe(value);
  return out;
}

describe('scalarEdit', () => {
  it('keeps plain, single and double quotes, quoting a plain value only when it must', () => {
    expect(edit('a: nginx:1.27 # c\nb: 1\n', 'a', 'reg.local/x/nginx:1.27')).toBe(
      'a: reg.local/x/nginx:1.27 # c\nb: 1\n',
    );
    expect(edit('a: x\n', 'a', 'yes')).toBe('a: "yes"\n');
    expect(edit("a: 'x'\n", 'a', "it's")).toBe("a: 'it''s'\n");
    expect(edit('a: "x"\n', 'a', 'q"uote')).toBe('a: "q\\"uote"\n');
  });

  it('writes a value with line breaks as a JSON string, never inside single quotes', () => {
    expect(edit("a: 'x'\n", 'a', 'one\ntwo')).toBe('a: "one\\ntwo"\n');
  });

  it('keeps a literal block with its indentation and chomping', () => {
    const text = 'data:\n  x: 1\nconf: |\n  image: quay.io/a/b:1\n  other: 2\nafter: 3\n';
    expect(edit(text, 'conf', 'image: reg.local/x/b:1\nother: 2\n')).toBe(
      'data:\n  x: 1\nconf: |\n  image: reg.local/x/b:1\n  other: 2\nafter: 3\n',
    );
    expect(edit('conf: |-\n    a\n    b\nafter: 3\n', 'conf', 'A\n\nB')).toBe('conf: |-\n    A\n\n    B\nafter: 3\n');
    // A folded block becomes a literal holding exactly the value.
    expect(edit('conf: >\n  a\n  b\nafter: 3\n', 'conf', 'x y\n')).toBe('conf: |\n  x y\nafter: 3\n');
  });

  it('falls back to a JSON string where a literal would change the value', () => {
    expect(edit('conf: |\n  a\nafter: 3\n', 'conf', '  leading blanks\n')).toBe(
      'conf: "  leading blanks\\n"\nafter: 3\n',
    );
    expect(edit('conf: |\n  a\nafter: 3\n', 'conf', 'a\n   \nb\n')).toBe('conf: "a\\n   \\nb\\n"\nafter: 3\n');
  });
});
