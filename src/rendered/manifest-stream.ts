// How helm's rendered manifest stream is read: split into documents at `---` lines, each document
// parsed on its own with the `yaml` package, lenient where go-yaml is. One document's tree is alive
// at a time, so memory follows the largest document, not the stream.
//
// Why a lexer override: helm 4 re-serialises every manifest with go-yaml before the post-renderer
// sees it, and go-yaml writes a single-quoted string that ends in a line break with its closing
// quote (and any trailing empty lines) at column 0, even deep inside a block:
//
//       description: 'first line
//
//         second line
//
//   '
//
// go-yaml, PyYAML and js-yaml read that; the `yaml` package's lexer ends the scalar at the
// unindented line and reports "Missing closing 'quote" (a popular monitoring chart's alert rules
// gave 78 errors). go-yaml's rule is simply "a quoted scalar runs to its closing quote", and the
// indentation of its continuation lines never changes its value (leading blanks are folded away),
// so reading it that way is exact. Only the quoted-scalar step of the lexer is replaced; the rest of
// YAML stays the library's.
import { Composer, LineCounter, Lexer, Parser, type Document } from 'yaml';
import { InstallerError, InvalidInputError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import { fastParseDocument } from './fast-yaml.js';

/** One document's text, cut from the stream; the stream is the concatenation of these, in order. */
export interface ManifestPiece {
  /** 0-based index of the piece (the document) in the stream. */
  index: number;
  /** The text, from its `---` line (when it has one) up to the next `---` line. */
  text: string;
  /** 1-based line of the stream where `text` starts. */
  line: number;
}

/**
 * The documents of a stream by index, for the passes that read them: an array of pieces, or the
 * post-renderer's spill file (spilled-pieces.ts) that keeps them out of the heap.
 */
export interface PieceSource {
  readonly length: number;
  at(index: number): ManifestPiece | undefined;
  /**
   * isCustomResourceDefinition of piece `index`, decided when the piece arrived (the spill file),
   * so a pass that skips CRDs need not read one back: they are most of the bytes of public charts.
   */
  isCustomResourceDefinition?(index: number): boolean;
  /** Piece `index`'s bytes in small chunks, never all of it at once (the spill file). */
  chunksOf?(index: number): Iterable<Uint8Array>;
}

/** One parsed piece. Node ranges index into `text`. */
export interface ParsedPiece extends ManifestPiece {
  /** Usually one; a `...` end marker followed by content makes more. */
  docs: Document.Parsed[];
  /** 1-based line in the whole stream of an offset into `text`. */
  lineAt(offset: number): number;
}

// YAML's document start marker: `---` at column 0, then a blank, a line end or the end.
const DOCUMENT_START = /^---(?=[ \t\r\n]|$)/gm;

/** Cuts the stream at every `---` line. Text before the first marker is a piece of its own. */
export function splitManifestStream(text: string): ManifestPiece[] {
  const splitter = new ManifestSplitter();
  const pieces = splitter.push(text);
  pieces.push(...splitter.end());
  return pieces;
}

/**
 * The same cut for a stream that arrives in chunks (the post-renderer's stdin): complete pieces
 * come out as soon as the next `---` line is seen, so no second copy of the stream is needed.
 * The current piece is kept as the chunks' whole lines, joined once when it is cut: appending
 * to one string and searching it after every chunk copied the piece again each time (a 1.4 MB
 * CRD read in 64 KB chunks left about 15 MB of copies for the garbage collector).
 */
export class ManifestSplitter {
  /** The current piece's complete lines, in chunks as they came. */
  private parts: string[] = [];
  private partsLength = 0;
  /** The last line seen, still without its line break. */
  private partial = '';
  private index = 0;
  private line = 1;

  push(chunk: string): ManifestPiece[] {
    const out: ManifestPiece[] = [];
    const text = this.partial + chunk;
    // Only whole lines can be judged: a chunk may end inside `--`.
    const lastBreak = text.lastIndexOf('\n');
    if (lastBreak === -1) {
      this.partial = text;
      return out;
    }
    const lines = text.slice(0, lastBreak + 1);
    this.partial = text.slice(lastBreak + 1);
    // `lines` starts at a line start, so every match is a marker line.
    let start = 0;
    DOCUMENT_START.lastIndex = 0;
    for (let m = DOCUMENT_START.exec(lines); m; m = DOCUMENT_START.exec(lines)) {
      // A marker at the start of the current piece starts it; any other one cuts it.
      if (this.partsLength + m.index - start > 0) {
        this.add(lines.slice(start, m.index));
        out.push(this.cut());
        start = m.index;
      }
      DOCUMENT_START.lastIndex = m.index + 3;
    }
    this.add(start === 0 ? lines : lines.slice(start));
    return out;
  }

  end(): ManifestPiece[] {
    this.add(this.partial);
    this.partial = '';
    return this.partsLength === 0 ? [] : [this.cut()];
  }

  private add(text: string): void {
    if (text === '') return;
    this.parts.push(text);
    this.partsLength += text.length;
  }

  private cut(): ManifestPiece {
    const text = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.parts = [];
    this.partsLength = 0;
    const piece = { index: this.index++, text, line: this.line };
    this.line += countLines(text);
    return piece;
  }
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Parses one piece as YAML 1.1 (what helm's go-yaml speaks, merge keys included). A syntax error
 * stops everything: rewriting a half-understood stream could ship an unrewritten image.
 */
export function parsePiece(piece: ManifestPiece): ParsedPiece {
  const fast = fastParseDocument(piece.text);
  if (fast) return { ...piece, docs: [fast], lineAt: lineAtFn(piece) };
  return parseWithLibrary(piece);
}

/** Line numbers are rarely asked for (reports, errors): count them only then. */
function lineAtFn(piece: ManifestPiece): (offset: number) => number {
  let counter: LineCounter | undefined;
  return (offset) => {
    if (!counter) {
      counter = new LineCounter();
      counter.addNewLine(0);
      for (let i = piece.text.indexOf('\n'); i !== -1; i = piece.text.indexOf('\n', i + 1)) counter.addNewLine(i + 1);
    }
    return piece.line - 1 + counter.linePos(offset).line;
  };
}

/** The library's parser, with go-yaml's quoted scalars: for what the fast reader leaves. */
export function parseWithLibrary(piece: ManifestPiece): ParsedPiece {
  const lineCounter = new LineCounter();
  const parser = new Parser(lineCounter.addNewLine);
  (parser as unknown as { lexer: Lexer }).lexer = new GoYamlLexer();
  // uniqueKeys off: go-yaml v2 (sigs.k8s.io/yaml, what the Kubernetes client decodes with)
  // accepts a repeated key and keeps the last one.
  const composer = new Composer({ version: '1.1', uniqueKeys: false, prettyErrors: false });
  const docs = Array.from(composer.compose(parser.parse(piece.text)));
  for (const doc of docs) {
    const error = doc.errors[0];
    if (error) {
      const line = piece.line - 1 + lineCounter.linePos(error.pos[0]).line;
      throw new InvalidInputError(
        `The rendered manifests are not valid YAML (document ${piece.index + 1}, line ${line} of the stream): ${error.message.split('\n')[0]}`,
        { file: sourceComment(piece.text), hint: 'Render the chart with `helm template` and fix the template named.' },
      );
    }
  }
  return { ...piece, docs, lineAt: (offset) => piece.line - 1 + lineCounter.linePos(offset).line };
}

/** Helm 3 starts every document with `# Source: <chart>/templates/<file>`. */
export function sourceComment(text: string, end = text.length): string | undefined {
  const head = text.slice(0, Math.min(end, 4096));
  const match = /^#\s*Source:\s*(\S.*?)\s*$/m.exec(head);
  return match?.[1];
}

// The library's lexer, with go-yaml's rule for quoted scalars (see the top of this file). The
// members used are private in the library's typings, so they are reached through a cast; the
// guard below turns a library change into a clear internal error instead of a silent misread,
// and the tests run real helm 4 output through it.
type LexerInternals = {
  buffer: string;
  pos: number;
  atEnd: boolean;
  flowLevel: number;
  charAt(n: number): string | undefined;
  setNext(state: string): string;
  pushToIndex(i: number, allowEmpty: boolean): Generator<string, number>;
};

class GoYamlLexer extends Lexer {}

function* parseQuotedScalar(this: LexerInternals): Generator<string, string> {
  const buffer = this.buffer;
  const quote = this.charAt(0)!;
  let end = buffer.indexOf(quote, this.pos + 1);
  if (quote === "'") {
    while (end !== -1 && buffer[end + 1] === "'") end = buffer.indexOf("'", end + 2);
  } else {
    while (end !== -1) {
      let backslashes = 0;
      while (buffer[end - 1 - backslashes] === '\\') backslashes += 1;
      if (backslashes % 2 === 0) break;
      end = buffer.indexOf('"', end + 1);
    }
  }
  if (end === -1) {
    if (!this.atEnd) return this.setNext('quoted-scalar');
    end = buffer.length;
  }
  yield* this.pushToIndex(end + 1, false);
  return this.flowLevel ? 'flow' : 'doc';
}
Object.defineProperty(GoYamlLexer.prototype, 'parseQuotedScalar', { value: parseQuotedScalar });

const internals = Lexer.prototype as unknown as Record<string, unknown>;
for (const member of ['parseQuotedScalar', 'charAt', 'setNext', 'pushToIndex']) {
  if (typeof internals[member] !== 'function') {
    throw new InstallerError(
      ExitCode.internal,
      `Internal error: the yaml package's Lexer has no ${member}(); the go-yaml quoted-scalar rule needs updating`,
    );
  }
}

// The lexer's marks (the `yaml` package's CST token constants): a document start and a plain scalar.
const DOCUMENT_MARK = '\x02';
const SCALAR_MARK = '\x1f';
// Lines at column 0 that name a key, whatever else they hold (a comment line does not count).
const KIND_LINES = /^(?![ \t\r\n#])[^\r\n]*\bkind\b/gm;
const API_VERSION_LINES = /^(?![ \t\r\n#])[^\r\n]*\bapiVersion\b/gm;

/**
 * Whether a piece is exactly one CustomResourceDefinition, told from its top-level `apiVersion`
 * and `kind` without building a tree.
 *
 * Why: a CRD is a schema; it deploys nothing, and the image search never finds an image in one.
 * But CRDs are most of the bytes public charts render (72% of 31 charts rendered by helm 4; one is
 * 1.4 MB), and they are written in what the fast reader leaves to the library (multi-line and
 * folded text), whose tree costs about 30x the document: parsing them set the post-renderer's
 * peak memory and most of its time.
 *
 * Sure or false, never a guess. The library's lexer reads the head: the two keys must be plain
 * keys at column 0 with plain values, before anything at column 0 it does not plainly understand
 * (a quoted, complex, anchored or tagged key, a flow collection, a sequence, a second document).
 * It reads quoted and block scalars whole (go-yaml's quoted continuation lines at column 0
 * included), so a `kind:` line inside a string is not taken for the key. And no other line at
 * column 0 may mention either key, so no later key repeats them (go-yaml keeps the last one).
 */
export function isCustomResourceDefinition(text: string): boolean {
  if (!text.includes('CustomResourceDefinition')) return false;
  if (countMatches(text, KIND_LINES) !== 1 || countMatches(text, API_VERSION_LINES) !== 1) return false;
  const keys = headKeys(text);
  return (
    keys !== undefined &&
    keys.get('kind') === 'CustomResourceDefinition' &&
    /^apiextensions\.k8s\.io\/[^/\s]+$/.test(keys.get('apiVersion') ?? '')
  );
}

/** Where the head's lexer tokens are: at a line's start, in a block scalar's text, past content. */
interface HeadLine {
  lineStart: boolean;
  /** A key at column 0 was read (a `---` after it starts a second document). */
  content: boolean;
  blockHeader: boolean;
  blockContent: boolean;
}

/**
 * The plain values of `kind` and `apiVersion` at column 0, read from the lexer's tokens up to
 * both; undefined when the head holds anything at column 0 that is not plainly understood.
 */
function headKeys(text: string): Map<string, string> | undefined {
  const keys = new Map<string, string>();
  const at: HeadLine = { lineStart: true, content: false, blockHeader: false, blockContent: false };
  let key: string | undefined;
  let expect: 'key' | 'colon' | 'value' | 'rest' = 'rest';
  for (const token of new GoYamlLexer().lex(text)) {
    if (token === '\n' || token === '\r\n') {
      if (expect !== 'rest') return undefined; // a key without a plain value on its line
      at.lineStart = true;
      at.blockContent = at.blockHeader;
      at.blockHeader = false;
      continue;
    }
    if (at.blockContent) {
      // A block scalar's text comes as one plain token (its indentation included), and the next
      // line's tokens follow it without a line break.
      at.blockContent = token === SCALAR_MARK;
      if (!at.blockContent) at.lineStart = true;
      continue;
    }
    if (at.lineStart) {
      const line = lineStartToken(at, token);
      if (line === 'refuse') return undefined;
      if (line === 'key') expect = 'key';
      continue;
    }
    if (token[0] === '|' || token[0] === '>') at.blockHeader = true;
    if (expect === 'key') {
      key = token;
      expect = 'colon';
    } else if (expect === 'colon') {
      if (token !== ':') return undefined;
      expect = key === 'kind' || key === 'apiVersion' ? 'value' : 'rest';
    } else if (expect === 'value') {
      if (token === ' ' || token === SCALAR_MARK) continue;
      keys.set(key!, token);
      expect = 'rest';
      if (keys.size === 2) break;
    }
  }
  return keys;
}

/** A line's first token: skipped (a mark, a comment, an indented line), a plain key's start, or a refusal. */
function lineStartToken(at: HeadLine, token: string): 'skip' | 'key' | 'refuse' {
  at.lineStart = false;
  if (token === DOCUMENT_MARK || token === '\ufeff') {
    at.lineStart = true;
    return 'skip';
  }
  if (token === '---') return at.content ? 'refuse' : 'skip';
  const c = token[0];
  if (c === '#' || c === ' ' || c === '\t') return 'skip'; // a comment, or an indented line
  if (token !== SCALAR_MARK) return 'refuse'; // `...`, `-`, `?`, `{`, `[`, `&`, `!`, a quoted key
  at.content = true;
  return 'key';
}

function countMatches(text: string, re: RegExp): number {
  re.lastIndex = 0;
  let n = 0;
  while (re.exec(text) && n < 2) n++;
  return n;
}
