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
import type { Document, Node, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import { closingQuote, flow, quoted } from './fast-yaml-flow.js';
import {
  blankOrEnd,
  collection,
  COLON,
  DASH,
  foldQuoted,
  HASH,
  lineEnd,
  MAP_PROTO,
  NL,
  pair,
  plainLineIsText,
  resolvePlain,
  scalar,
  SEQ_PROTO,
  SPACE,
  TAB,
  TEMPLATE,
  UNSUPPORTED,
} from './fast-yaml-nodes.js';

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
      const close = closingQuote(this.s, p);
      if (close === -1) return -1;
      const after = close + 1;
      return s.charCodeAt(after) === COLON && blankOrEnd(this.s, after + 1) ? after : -1;
    }
    if (c === 123 || c === 91) return -1; // `{` or `[`: a flow collection, not a key
    const end = lineEnd(this.s, p);
    for (let i = p; i < end; i++) {
      const ch = s.charCodeAt(i);
      if (ch === COLON && blankOrEnd(this.s, i + 1)) return i;
      if (ch === HASH && i > p && (s.charCodeAt(i - 1) === SPACE || s.charCodeAt(i - 1) === TAB)) return -1; // a comment came first
    }
    return -1;
  }

  private key(p: number, colon: number): Scalar {
    const { s } = this;
    const c = s.charCodeAt(p);
    if (c === 39 || c === 34) return quoted(this.s, p);
    // Indicators that start something other than a plain key.
    if ('[]{},#&*!|>%@`?:-'.includes(s[p]!) && !(s[p] === '-' && !blankOrEnd(this.s, p + 1))) throw UNSUPPORTED;
    let end = colon;
    while (end > p && (s.charCodeAt(end - 1) === SPACE || s.charCodeAt(end - 1) === TAB)) end--;
    const source = s.slice(p, end);
    if (typeof resolvePlain(source) !== 'string') throw UNSUPPORTED; // `80:`, `yes:`, `~:`
    return scalar(source, 'PLAIN', p, end, source);
  }

  /** A value that starts on the line at `w`: scalar, one-line flow collection, literal block. */
  private inlineValue(w: number, parent: number): Node {
    switch (this.s[w]!) {
      case "'":
      case '"':
        return this.oneLine(quoted(this.s, w), parent);
      case '{':
      case '[':
        return this.oneLine(flow(this.s, w), parent);
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
        if (blankOrEnd(this.s, w + 1)) throw UNSUPPORTED;
    }
    return this.plain(w, parent);
  }

  /** A quoted scalar or flow collection: nothing but a comment may follow it, on its line or under it. */
  private oneLine(node: Node, parent: number): Node {
    this.expectLineRest(node.range![1]);
    this.pos = this.lineAfter(node.range![1]);
    this.noContinuation(parent);
    return node;
  }

  /** A plain scalar at `w`, with the lines that continue it (go-yaml folds long text over lines). */
  private plain(w: number, parent: number): Scalar {
    const { s } = this;
    const eol = lineEnd(this.s, w);
    let end = eol;
    // A comment starts at a `#` after a blank. Scan this line only: indexOf('#') would run on
    // through the rest of a large document for every value (quadratic on big CRDs).
    for (let h = w + 1; h < eol; h++) {
      if (s.charCodeAt(h) === HASH) {
        const before = s.charCodeAt(h - 1);
        if (before === SPACE || before === TAB) {
          end = h;
          break;
        }
      }
    }
    const commented = end < eol;
    while (end > w && (s.charCodeAt(end - 1) === SPACE || s.charCodeAt(end - 1) === TAB)) end--;
    const source = s.slice(w, end);
    if (!plainLineIsText(source)) throw UNSUPPORTED;
    this.pos = eol === this.n ? this.n : eol + 1;
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
      const e = lineEnd(this.s, q);
      if (q === e) {
        p = e < n ? e + 1 : n; // an empty line: a line break in the value if text follows
        continue;
      }
      const c = s.charCodeAt(q);
      if (c === TAB) throw UNSUPPORTED;
      if (q - p <= parent) break;
      if (c === HASH || ((c === DASH || c === 63 || c === COLON) && blankOrEnd(this.s, q + 1))) throw UNSUPPORTED;
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
      const e = lineEnd(this.s, p);
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
}
