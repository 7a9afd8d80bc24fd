// A fast reader for the YAML that helm emits, building the same `yaml` package nodes (same
// values, types and source ranges) that the library's parser would, or giving up.
//
// Why: measured on the stream helm 4 hands a post-renderer, the library's parser (lexer, CST,
// composer, and a defineProperty per node) made the post-render about 1.7x slower than yq doing
// the same rewrite. Rendered manifests use a small part of YAML: block maps and sequences,
// one-line flow collections, plain and quoted scalars (one-line, or folded over lines as go-yaml
// writes long text, as public charts' CRDs have it), literal block scalars, comments. This reads
// exactly that part in one pass over the text. Anything else (anchors, aliases, tags, merge keys,
// folded `>` or keep-chomped `|+` blocks, empty block scalars, escapes that touch a line break,
// multi-line flow collections, complex keys, tabs, directives, non-string keys, anything it is
// unsure of) makes it return undefined, and the caller parses that document with the library
// instead: the fast path never guesses. test/tools/fast-yaml-charts.ts runs rendered charts
// through both and counts what each took.
import { Document, isScalar, Pair, Scalar, YAMLMap, YAMLSeq, type Node } from 'yaml';

/** Thrown inside, caught at the top: "not in the subset this reader handles". */
class Unsupported extends Error {}
const UNSUPPORTED = new Unsupported('outside the fast subset');

// The library tells nodes apart by a symbol property that its constructors set with
// defineProperty, one call per node; putting it on a prototype makes a node as cheap as an object.
const NODE_TYPE = Symbol.for('yaml.node.type');
function typedPrototype(base: { prototype: object }, type: string): object {
  const proto = Object.create(base.prototype) as object;
  Object.defineProperty(proto, NODE_TYPE, { value: Symbol.for(type) });
  return proto;
}
const MAP_PROTO = typedPrototype(YAMLMap, 'yaml.map');
const SEQ_PROTO = typedPrototype(YAMLSeq, 'yaml.seq');
const PAIR_PROTO = typedPrototype(Pair, 'yaml.pair');
const SCALAR_PROTO = typedPrototype(Scalar, 'yaml.scalar');

const OPTIONS = { version: '1.1', uniqueKeys: false } as const;
const TEMPLATE = new Document(null, OPTIONS);
// Plain scalars resolve as the library's YAML 1.1 schema says (`yes`, `0777`, `12:30`, `~`).
type ScalarTagLike = {
  default?: boolean | 'key';
  test?: RegExp;
  resolve: (s: string, onError: (m: string) => void, o: unknown) => unknown;
};
const IMPLICIT = (TEMPLATE.schema.tags as unknown as ScalarTagLike[]).filter((t) => t.default === true && t.test);
const MAYBE_NOT_STRING = /^[-+.~0-9nNyYtTfFoO<]/;
const failResolve = () => {
  throw UNSUPPORTED;
};

function resolvePlain(source: string): unknown {
  if (source === '') return null;
  if (!MAYBE_NOT_STRING.test(source)) return source;
  if (source === '<<') throw UNSUPPORTED;
  for (const tag of IMPLICIT) {
    if (tag.test!.test(source)) {
      const value = tag.resolve(source, failResolve, TEMPLATE.options);
      // null and booleans come back as Scalar nodes; the library keeps their value.
      if (isScalar(value)) return value.value;
      if (value !== null && typeof value === 'object') throw UNSUPPORTED;
      return value;
    }
  }
  return source;
}

/** Whether `source`, written as a plain scalar, reads back as that string in YAML 1.1. */
export function readsAsString(source: string): boolean {
  try {
    return resolvePlain(source) === source;
  } catch {
    return false;
  }
}

function scalar(value: unknown, type: Scalar.Type, start: number, end: number, source: string): Scalar {
  const node = Object.create(SCALAR_PROTO) as Scalar;
  node.value = value;
  node.type = type;
  node.source = source;
  node.range = [start, end, end];
  return node;
}

function pair(key: Scalar, value: Node | null): Pair {
  const node = Object.create(PAIR_PROTO) as Pair;
  node.key = key;
  node.value = value;
  return node;
}

function collection<T extends YAMLMap | YAMLSeq>(proto: object, start: number, flow: boolean): T {
  const node = Object.create(proto) as T;
  node.items = [];
  node.range = [start, start, start];
  if (flow) node.flow = true;
  return node;
}

const SPACE = 32;
const TAB = 9;
const NL = 10;
const HASH = 35;
const DASH = 45;
const COLON = 58;

/**
 * YAML's line folding of a quoted scalar that spans lines: blanks around each line break go, one
 * break between two lines becomes a space, each empty line a line break. The last line keeps its
 * trailing blanks (they sit before the closing quote).
 */
function foldQuoted(raw: string): string {
  const lines = raw.split('\n');
  const last = lines.length - 1;
  for (const line of lines) {
    // A document marker inside a quoted scalar is an error for go-yaml too.
    if (line.startsWith('---') || line.startsWith('...')) throw UNSUPPORTED;
  }
  let out = lines[0]!.replace(/[ \t]+$/, '');
  for (let i = 1; i <= last;) {
    let j = i;
    while (j < last && /^[ \t]*$/.test(lines[j]!)) j++;
    const empties = j - i;
    out += empties === 0 ? ' ' : '\n'.repeat(empties);
    out += j === last ? lines[j]!.replace(/^[ \t]+/, '') : lines[j]!.replace(/^[ \t]+|[ \t]+$/g, '');
    i = j + 1;
  }
  return out;
}

/** A line of a plain scalar holds no `: `, ` #` or final `:`, which would end it there. */
function plainLineIsText(text: string): boolean {
  return !(
    text.includes(': ') ||
    text.includes(':\t') ||
    text.endsWith(':') ||
    text.includes(' #') ||
    text.includes('\t#')
  );
}

/** The escapes of one line of a double-quoted scalar: JSON's are a subset of YAML's; others are the library's. */
function decodeEscapes(raw: string): string {
  if (/\\[^"/bfnrtu]/.test(raw.replaceAll('\\\\', '')) || /[\x00-\x1f]/.test(raw)) throw UNSUPPORTED;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    throw UNSUPPORTED;
  }
}

/** The document of one piece of the stream, or undefined when it needs the library's parser. */
export function fastParseDocument(text: string): Document.Parsed | undefined {
  if (text.includes('\r') || text.startsWith('\uFEFF')) return undefined;
  try {
    return new Reader(text).document();
  } catch (error) {
    if (error === UNSUPPORTED) return undefined;
    throw error;
  }
}

class Reader {
  private readonly s: string;
  private readonly n: number;
  /** Start of the first line not consumed yet. */
  private pos = 0;

  constructor(text: string) {
    this.s = text;
    this.n = text.length;
  }

  document(): Document.Parsed {
    const { s } = this;
    let from = 0;
    if (s.startsWith('---')) {
      const c = s.charCodeAt(3);
      if (!(Number.isNaN(c) || c === NL || c === SPACE || c === TAB)) throw UNSUPPORTED;
      this.expectLineRest(3);
      from = this.lineAfter(3);
    }
    const first = this.nextContent(from);
    if (first === -1) throw UNSUPPORTED; // only comments: the library's empty document, rare
    let contents: Node | null = null;
    {
      contents = this.blockNode(first, this.indentOf(first), -1);
      if (this.nextContent(this.pos) !== -1) throw UNSUPPORTED; // `...`, a second root node
      contents.range = [contents.range![0], this.n, this.n];
    }
    const doc = Object.create(TEMPLATE) as Document.Parsed;
    doc.contents = contents as Document.Parsed['contents'];
    doc.range = [0, this.n, this.n]; // from the piece start: `# Source:` comments are read from there
    doc.errors = [];
    doc.warnings = [];
    return doc;
  }

  // ---- lines -------------------------------------------------------------------------------

  private lineEnd(p: number): number {
    const e = this.s.indexOf('\n', p);
    return e === -1 ? this.n : e;
  }

  private lineAfter(p: number): number {
    const e = this.s.indexOf('\n', p);
    return e === -1 ? this.n : e + 1;
  }

  private columnOf(p: number): number {
    return p - (this.s.lastIndexOf('\n', p - 1) + 1);
  }

  private indentOf(contentPos: number): number {
    return this.columnOf(contentPos);
  }

  /**
   * The first content character of the next line at or after `lineStart` that holds anything
   * but blanks or a comment; -1 at the end. Refuses tabs in indentation and markers (`---`, `...`).
   */
  private nextContent(lineStart: number): number {
    const { s, n } = this;
    let p = lineStart;
    while (p < n) {
      let q = p;
      while (q < n && s.charCodeAt(q) === SPACE) q++;
      const c = s.charCodeAt(q);
      if (q >= n) return -1;
      if (c === NL) {
        p = q + 1;
        continue;
      }
      if (c === TAB) {
        // A tab before content is not indentation YAML allows; a line of blanks is fine.
        let r = q;
        while (r < n && (s.charCodeAt(r) === TAB || s.charCodeAt(r) === SPACE)) r++;
        if (r >= n) return -1;
        if (s.charCodeAt(r) === NL) {
          p = r + 1;
          continue;
        }
        throw UNSUPPORTED;
      }
      if (c === HASH) {
        p = this.lineAfter(q);
        continue;
      }
      if (q === p && (s.startsWith('---', q) || s.startsWith('...', q))) {
        const d = s.charCodeAt(q + 3);
        if (Number.isNaN(d) || d === NL || d === SPACE || d === TAB) throw UNSUPPORTED;
      }
      return q;
    }
    return -1;
  }

  /** The rest of the line from `p` holds only blanks or a comment. */
  private expectLineRest(p: number): void {
    const { s, n } = this;
    let q = p;
    while (q < n && (s.charCodeAt(q) === SPACE || s.charCodeAt(q) === TAB)) q++;
    if (q >= n || s.charCodeAt(q) === NL) return;
    if (s.charCodeAt(q) === HASH && q > p) return;
    if (s.charCodeAt(q) === HASH && (s.charCodeAt(p - 1) === SPACE || s.charCodeAt(p - 1) === TAB)) return;
    throw UNSUPPORTED;
  }

  private isSeqDash(p: number): boolean {
    if (this.s.charCodeAt(p) !== DASH) return false;
    const c = this.s.charCodeAt(p + 1);
    return Number.isNaN(c) || c === SPACE || c === NL || c === TAB;
  }

  // ---- block structure ---------------------------------------------------------------------

  /** A node that starts at `p` (column `col`) inside a parent indented at `parent`. */
  private blockNode(p: number, col: number, parent: number): Node {
    if (this.isSeqDash(p)) return this.blockSeq(p, col);
    if (this.keyEnd(p) !== -1) return this.blockMap(p, col);
    return this.inlineValue(p, parent);
  }

  private blockMap(p: number, col: number): YAMLMap {
    const map = collection<YAMLMap>(MAP_PROTO, p, false);
    let q = p;
    for (;;) {
      const colon = this.keyEnd(q);
      if (colon === -1) throw UNSUPPORTED;
      const key = this.key(q, colon);
      map.items.push(pair(key, this.mapValue(colon + 1, col)));
      const next = this.nextContent(this.pos);
      if (next === -1) break;
      const indent = this.indentOf(next);
      if (indent < col) break;
      if (indent > col || this.isSeqDash(next)) throw UNSUPPORTED;
      q = next;
    }
    map.range = [p, this.pos, this.pos];
    return map;
  }

  private blockSeq(p: number, col: number): YAMLSeq {
    const seq = collection<YAMLSeq>(SEQ_PROTO, p, false);
    const { s } = this;
    let q = p;
    for (;;) {
      let w = q + 1;
      while (s.charCodeAt(w) === SPACE) w++;
      const c = s.charCodeAt(w);
      let item: Node;
      if (c === TAB) throw UNSUPPORTED;
      if (Number.isNaN(c) || c === NL || c === HASH) {
        if (c === HASH && w === q + 1) throw UNSUPPORTED;
        const next = this.nextContent(this.lineAfter(q));
        if (next !== -1 && this.indentOf(next) > col) item = this.blockNode(next, this.indentOf(next), col);
        else throw UNSUPPORTED; // an empty item
      } else {
        const itemCol = this.columnOf(w);
        if (this.isSeqDash(w)) item = this.blockSeq(w, itemCol);
        else if (this.keyEnd(w) !== -1) item = this.blockMap(w, itemCol);
        else item = this.inlineValue(w, col);
      }
      seq.items.push(item);
      const next = this.nextContent(this.pos);
      if (next === -1) break;
      const indent = this.indentOf(next);
      if (indent < col) break;
      if (indent > col) throw UNSUPPORTED;
      if (!this.isSeqDash(next)) break; // the next key of a map whose value this list was
      q = next;
    }
    seq.range = [p, this.pos, this.pos];
    return seq;
  }

  /** The value after `key:` (from `v`, just past the colon) of a map at column `col`. */
  private mapValue(v: number, col: number): Node {
    const { s } = this;
    let w = v;
    while (s.charCodeAt(w) === SPACE) w++;
    const c = s.charCodeAt(w);
    if (c === TAB) throw UNSUPPORTED;
    if (Number.isNaN(c) || c === NL || c === HASH) {
      const next = this.nextContent(this.lineAfter(v));
      if (next !== -1) {
        const indent = this.indentOf(next);
        if (indent > col) return this.blockNode(next, indent, col);
        if (indent === col && this.isSeqDash(next)) return this.blockSeq(next, col);
      }
      this.pos = this.lineAfter(v);
      // Where the library puts an empty value: after the blanks that follow the colon.
      return scalar(null, 'PLAIN', w, w, '');
    }
    return this.inlineValue(w, col);
  }

  /**
   * The end (the colon) of a map key that starts at `p`, or -1 when the line holds no key there.
   * Keys are plain or one-line quoted strings, followed by `:` and a blank or the line's end.
   */
  private keyEnd(p: number): number {
    const { s } = this;
    const c = s.charCodeAt(p);
    if (c === 39 || c === 34) {
      const close = this.closingQuote(p);
      if (close === -1) return -1;
      const after = close + 1;
      return s.charCodeAt(after) === COLON && this.blankOrEnd(after + 1) ? after : -1;
    }
    if (c === 123 || c === 91) return -1; // `{` or `[`: a flow collection, not a key
    const end = this.lineEnd(p);
    for (let i = p; i < end; i++) {
      const ch = s.charCodeAt(i);
      if (ch === COLON && this.blankOrEnd(i + 1)) return i;
      if (ch === HASH && i > p && (s.charCodeAt(i - 1) === SPACE || s.charCodeAt(i - 1) === TAB)) return -1; // a comment came first
    }
    return -1;
  }

  private blankOrEnd(p: number): boolean {
    const c = this.s.charCodeAt(p);
    return Number.isNaN(c) || c === SPACE || c === NL || c === TAB;
  }

  private key(p: number, colon: number): Scalar {
    const { s } = this;
    const c = s.charCodeAt(p);
    if (c === 39 || c === 34) return this.quoted(p);
    // Indicators that start something other than a plain key.
    if ('[]{},#&*!|>%@`?:-'.includes(s[p]!) && !(s[p] === '-' && !this.blankOrEnd(p + 1))) throw UNSUPPORTED;
    let end = colon;
    while (end > p && (s.charCodeAt(end - 1) === SPACE || s.charCodeAt(end - 1) === TAB)) end--;
    const source = s.slice(p, end);
    if (typeof resolvePlain(source) !== 'string') throw UNSUPPORTED; // `80:`, `yes:`, `~:`
    return scalar(source, 'PLAIN', p, end, source);
  }

  /** A value that starts on the line at `w`: scalar, one-line flow collection, literal block. */
  private inlineValue(w: number, parent: number): Node {
    const { s } = this;
    const c = s[w]!;
    let node: Node;
    switch (c) {
      case "'":
      case '"':
        node = this.quoted(w);
        this.expectLineRest(node.range![1]);
        this.pos = this.lineAfter(node.range![1]);
        this.noContinuation(parent);
        return node;
      case '{':
      case '[':
        node = this.flow(w);
        this.expectLineRest(node.range![1]);
        this.pos = this.lineAfter(node.range![1]);
        this.noContinuation(parent);
        return node;
      case '|':
        return this.literal(w, parent);
      case '>':
      case '&':
      case '*':
      case '!':
      case '%':
      case '@':
      case '`':
      case ',':
      case ']':
      case '}':
      case '#':
        throw UNSUPPORTED;
      case '-':
      case '?':
      case ':':
        if (this.blankOrEnd(w + 1)) throw UNSUPPORTED;
    }
    const lineEnd = this.lineEnd(w);
    let end = lineEnd;
    // A comment starts at a `#` after a blank. Scan this line only: indexOf('#') would run on
    // through the rest of a large document for every value (quadratic on big CRDs).
    for (let h = w + 1; h < lineEnd; h++) {
      if (s.charCodeAt(h) === HASH) {
        const before = s.charCodeAt(h - 1);
        if (before === SPACE || before === TAB) {
          end = h;
          break;
        }
      }
    }
    const commented = end < lineEnd;
    while (end > w && (s.charCodeAt(end - 1) === SPACE || s.charCodeAt(end - 1) === TAB)) end--;
    const source = s.slice(w, end);
    if (!plainLineIsText(source)) throw UNSUPPORTED;
    this.pos = lineEnd === this.n ? this.n : lineEnd + 1;
    // After a comment, a more indented line is the library's error; at the root, its business.
    if (commented || parent < 0) this.noContinuation(parent);
    else {
      const last = this.plainContinuation(parent);
      if (last !== -1) {
        const folded = foldQuoted(s.slice(w, last));
        return scalar(resolvePlain(folded), 'PLAIN', w, last, folded);
      }
    }
    return scalar(resolvePlain(source), 'PLAIN', w, end, source);
  }

  /**
   * The lines that continue a plain scalar, as go-yaml folds long text (controller-gen's CRD
   * descriptions): each more indented than the parent, empty lines between them. Returns the end
   * of the last one's text and moves past it, or -1 when no line continues the scalar. A comment,
   * a tab, or text that could start a key or a comment there is left to the library.
   */
  private plainContinuation(parent: number): number {
    const { s, n } = this;
    let last = -1;
    for (let p = this.pos; p < n;) {
      let q = p;
      while (q < n && s.charCodeAt(q) === SPACE) q++;
      const e = this.lineEnd(q);
      if (q === e) {
        p = e < n ? e + 1 : n; // an empty line: a line break in the value if text follows
        continue;
      }
      const c = s.charCodeAt(q);
      if (c === TAB) throw UNSUPPORTED;
      if (q - p <= parent) break;
      if (c === HASH || ((c === DASH || c === 63 || c === COLON) && this.blankOrEnd(q + 1))) throw UNSUPPORTED;
      let k = e;
      while (k > q && s.charCodeAt(k - 1) === SPACE) k--;
      const text = s.slice(q, k);
      if (text.includes('\t') || !plainLineIsText(text)) throw UNSUPPORTED;
      last = k;
      p = e < n ? e + 1 : n;
      this.pos = p;
    }
    return last;
  }

  /**
   * After a one-line value inside a parent at column `parent`, a more indented line would continue
   * it (a multi-line plain scalar) or be an error: either way, the library's business.
   */
  private noContinuation(parent: number): void {
    const next = this.nextContent(this.pos);
    if (next !== -1 && this.indentOf(next) > parent) throw UNSUPPORTED;
  }

  /** A `|` literal block scalar; its content is indented more than `parent`. */
  private literal(w: number, parent: number): Scalar {
    const { s, n } = this;
    const { chomp, explicit } = this.literalHeader(w, parent);
    let p = this.lineAfter(w);
    // Content indentation: that of the first line with anything but spaces.
    let indent = -1;
    for (let q = p; q < n;) {
      let r = q;
      while (r < n && s.charCodeAt(r) === SPACE) r++;
      if (r < n && s.charCodeAt(r) !== NL) {
        indent = r - q;
        break;
      }
      q = r + 1;
    }
    if (indent <= parent || indent <= 0) throw UNSUPPORTED; // empty literal: rare, leave it to the library
    if (explicit > 0) {
      // The text is indented by the indicator from its parent; the first line may hold more blanks.
      if (indent < parent + explicit) throw UNSUPPORTED;
      indent = parent + explicit;
    }
    const lines: string[] = [];
    let lastContentEnd = p; // end (after its line break) of the last line with content
    let trailingBreaks = 0;
    let endsWithBreak = false;
    while (p < n) {
      const e = this.lineEnd(p);
      let r = p;
      while (r < e && s.charCodeAt(r) === SPACE) r++;
      if (r === e) {
        // An empty line (spaces beyond the indentation are content).
        if (e - p > indent) lines.push(s.slice(p + indent, e));
        else lines.push('');
        if (e - p > indent) {
          lastContentEnd = e < n ? e + 1 : e;
          trailingBreaks = 0;
        } else trailingBreaks++;
        endsWithBreak = e < n;
        p = e < n ? e + 1 : n;
        continue;
      }
      if (r - p < indent) break;
      lines.push(s.slice(p + indent, e));
      trailingBreaks = 0;
      endsWithBreak = e < n;
      lastContentEnd = e < n ? e + 1 : e;
      p = e < n ? e + 1 : n;
    }
    // At the very end of the text with no line break, the library still clips one onto the value.
    if (p === n && s.charCodeAt(n - 1) !== NL) throw UNSUPPORTED;
    this.pos = p;
    // Lines after the last content line are empty lines: chomping decides what they give.
    const content = lines.slice(0, lines.length - trailingBreaks);
    let value = content.join('\n');
    if (chomp === 'strip') {
      // no final line break
    } else if (chomp === 'clip') {
      if (content.length > 0 && (trailingBreaks > 0 || endsWithBreak)) value += '\n';
    } else {
      if (content.length > 0 && (trailingBreaks > 0 || endsWithBreak)) value += '\n';
      value += '\n'.repeat(trailingBreaks);
      throw UNSUPPORTED; // keep chomping: rare in manifests, its range rules are the library's
    }
    return scalar(value, 'BLOCK_LITERAL', w, lastContentEnd, value);
  }

  /**
   * The header of a literal block at `w`: its chomping and its explicit indentation indicator
   * (`|2`, `|2-`, `|-2`; 0 when none), which go-yaml writes when the text starts with a blank or an
   * empty line (helm 4 re-serialising a chart's script). Only a comment may follow on the line.
   */
  private literalHeader(w: number, parent: number): { chomp: 'clip' | 'strip' | 'keep'; explicit: number } {
    const { s } = this;
    let h = w + 1;
    const chompAt = (c: string | undefined): 'clip' | 'strip' | 'keep' =>
      c === '-' ? 'strip' : c === '+' ? 'keep' : 'clip';
    let chomp = chompAt(s[h]);
    if (chomp !== 'clip') h++;
    let explicit = 0;
    const d = s.charCodeAt(h);
    if (d === 48) throw UNSUPPORTED; // `|0` is not YAML
    if (d >= 49 && d <= 57) {
      if (parent < 0) throw UNSUPPORTED; // at a document's root, the base indentation is the library's business
      explicit = d - 48;
      h++;
      if (chomp === 'clip') {
        chomp = chompAt(s[h]);
        if (chomp !== 'clip') h++;
      }
    }
    this.expectLineRest(h);
    return { chomp, explicit };
  }

  // ---- scalars and flow collections ---------------------------------------------------------

  /** The closing quote of a quoted scalar opened at `p`, on the same line; -1 if none. */
  private closingQuote(p: number): number {
    const { s } = this;
    const end = this.lineEnd(p);
    if (s[p] === "'") {
      for (let i = s.indexOf("'", p + 1); i !== -1 && i < end; i = s.indexOf("'", i + 2)) {
        if (s[i + 1] !== "'") return i;
      }
      return -1;
    }
    for (let i = s.indexOf('"', p + 1); i !== -1 && i < end; i = s.indexOf('"', i + 1)) {
      let backslashes = 0;
      while (s[i - 1 - backslashes] === '\\') backslashes++;
      if (backslashes % 2 === 0) return i;
    }
    return -1;
  }

  private quoted(p: number): Scalar {
    const { s } = this;
    let close = this.closingQuote(p);
    if (close === -1) {
      // go-yaml's rule: a quoted scalar runs to its closing quote, whatever the indentation of its
      // continuation lines (helm 4 writes the closing quote at column 0).
      if (s[p] === '"') return this.multiLineDoubleQuoted(p);
      for (close = s.indexOf("'", p + 1); close !== -1 && s[close + 1] === "'"; close = s.indexOf("'", close + 2));
      if (close === -1) throw UNSUPPORTED;
      const value = foldQuoted(s.slice(p + 1, close)).replaceAll("''", "'");
      return scalar(value, 'QUOTE_SINGLE', p, close + 1, value);
    }
    const raw = s.slice(p + 1, close);
    if (s[p] === "'") {
      const value = raw.includes("''") ? raw.replaceAll("''", "'") : raw;
      return scalar(value, 'QUOTE_SINGLE', p, close + 1, value);
    }
    const value = raw.includes('\\') ? decodeEscapes(raw) : raw;
    return scalar(value, 'QUOTE_DOUBLE', p, close + 1, value);
  }

  /**
   * A double-quoted scalar over several lines (long descriptions, as CRDs have them): folded as a
   * single-quoted one is, then its escapes read line by line. An escape that touches the folding
   * (a `\` before a line break or a blank, which joins lines or keeps a blank the fold would drop)
   * is left to the library.
   */
  private multiLineDoubleQuoted(p: number): Scalar {
    const { s } = this;
    let close = s.indexOf('"', p + 1);
    for (; close !== -1; close = s.indexOf('"', close + 1)) {
      let backslashes = 0;
      while (s[close - 1 - backslashes] === '\\') backslashes++;
      if (backslashes % 2 === 0) break;
    }
    if (close === -1) throw UNSUPPORTED;
    const raw = s.slice(p + 1, close);
    let value = foldQuoted(raw);
    if (raw.includes('\\')) {
      if (/\\[ \t\n]/.test(raw.replaceAll('\\\\', ''))) throw UNSUPPORTED; // an escaped backslash is no escape
      value = value.split('\n').map(decodeEscapes).join('\n');
    }
    return scalar(value, 'QUOTE_DOUBLE', p, close + 1, value);
  }

  /** A flow collection that opens at `p` and closes on the same line. */
  private flow(p: number): YAMLMap | YAMLSeq {
    const { s } = this;
    const isMap = s[p] === '{';
    const close = isMap ? '}' : ']';
    const node = isMap ? collection<YAMLMap>(MAP_PROTO, p, true) : collection<YAMLSeq>(SEQ_PROTO, p, true);
    let q = p + 1;
    for (;;) {
      q = this.skipFlowBlanks(q);
      if (s[q] === close) {
        q++;
        break;
      }
      if (isMap) {
        const key = this.flowScalarOrCollection(q, true);
        if (!(key instanceof Object) || !('value' in key) || typeof (key as Scalar).value !== 'string')
          throw UNSUPPORTED;
        q = this.skipFlowBlanks(key.range![1]);
        if (s[q] !== ':') throw UNSUPPORTED;
        q = this.skipFlowBlanks(q + 1);
        if (s[q] === ',' || s[q] === '}') throw UNSUPPORTED; // a key without a value
        const value = this.flowScalarOrCollection(q, false);
        (node as YAMLMap).items.push(pair(key as Scalar, value));
        q = value.range![1];
      } else {
        const value = this.flowScalarOrCollection(q, false);
        (node as YAMLSeq).items.push(value);
        q = value.range![1];
      }
      q = this.skipFlowBlanks(q);
      if (s[q] === ',') {
        q++;
        continue;
      }
      if (s[q] === close) {
        q++;
        break;
      }
      throw UNSUPPORTED; // `key: value` inside a list, or anything unexpected
    }
    node.range = [p, q, q];
    return node;
  }

  private skipFlowBlanks(q: number): number {
    const { s } = this;
    while (s.charCodeAt(q) === SPACE || s.charCodeAt(q) === TAB) q++;
    const c = s.charCodeAt(q);
    if (Number.isNaN(c) || c === NL || c === HASH) throw UNSUPPORTED; // runs over lines
    return q;
  }

  private flowScalarOrCollection(q: number, asKey: boolean): Node {
    const { s } = this;
    const c = s[q]!;
    if (c === '{' || c === '[') {
      if (asKey) throw UNSUPPORTED;
      return this.flow(q);
    }
    if (c === "'" || c === '"') return this.quoted(q);
    if ('&*!|>%@`,]}#'.includes(c)) throw UNSUPPORTED;
    if ((c === '-' || c === '?' || c === ':') && this.blankOrEnd(q + 1)) throw UNSUPPORTED;
    // A plain scalar in a flow collection ends at `,`, `]`, `}`, `: ` (or `:` before an indicator).
    let e = q;
    const end = this.lineEnd(q);
    for (; e < end; e++) {
      const ch = s[e]!;
      if (ch === ',' || ch === ']' || ch === '}' || ch === '[' || ch === '{') break;
      if (ch === ':') {
        const after = s[e + 1];
        if (after === ' ' || after === ',' || after === ']' || after === '}' || after === '\t') break;
        if (asKey) throw UNSUPPORTED; // `a:b` in a flow map: the library's rules differ by version
      }
      if (ch === '#' && (s[e - 1] === ' ' || s[e - 1] === '\t')) throw UNSUPPORTED;
    }
    let valueEnd = e;
    while (valueEnd > q && (s.charCodeAt(valueEnd - 1) === SPACE || s.charCodeAt(valueEnd - 1) === TAB)) valueEnd--;
    if (valueEnd === q) throw UNSUPPORTED;
    const source = s.slice(q, valueEnd);
    const value = resolvePlain(source);
    if (asKey && typeof value !== 'string') throw UNSUPPORTED;
    return scalar(value, 'PLAIN', q, valueEnd, source);
  }
}
