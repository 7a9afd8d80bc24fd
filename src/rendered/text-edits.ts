// Edits to a manifest's text at the source ranges of parsed nodes. Why text edits instead of
// Document.toString(): the `yaml` printer re-renders every scalar from its value (0x1F -> 0x1f,
// 1e3 -> 1e+3, folded `>` blocks refolded, sequences re-indented, comment placement shifted).
// Helm's consumers read YAML 1.1 through go-yaml, so a re-rendered `0777`, `yes` or `12:30` could
// change meaning. Every byte we did not mean to change stays as helm wrote it.
//
// The interface between "where" (manifest-images.ts finds the nodes) and "how" (this file): a
// finder hands a scalar node and the value it should have; `scalarEdit` writes that value in the
// scalar's own style where the style can hold it, and `applyEdits` splices the edits in.
import type { Scalar } from 'yaml';
import { InstallerError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import { readsAsString } from './fast-yaml-nodes.js';

export interface TextEdit {
  /** Offsets into the text the node ranges index (one document's text). */
  start: number;
  end: number;
  text: string;
}

// Values that can stay plain scalars in block and flow context alike.
const SAFE_PLAIN = /^[a-z0-9][a-zA-Z0-9._\-/:@+]*$/;
// What a block literal can hold verbatim: printable text and tabs (YAML's c-printable, minus CR).
const LITERAL_SAFE = /^[\t\n\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;

/**
 * The edit that gives `node` the string `value`. `text` is the text `node.range` indexes. Single
 * quotes and block literals keep their style when the value fits it; otherwise the value is
 * written as a JSON string, which is a valid YAML double-quoted scalar.
 */
export function scalarEdit(node: Pick<Scalar, 'type' | 'range'>, value: string, text: string): TextEdit {
  const [start, end] = rangeOf(node);
  let out: string;
  switch (node.type) {
    case 'QUOTE_SINGLE':
      // A line break inside single quotes would be folded into a space: keep those in JSON form.
      out = /[\n\r]/.test(value) ? JSON.stringify(value) : `'${value.replaceAll("'", "''")}'`;
      break;
    case 'PLAIN':
      // `yes`, `0777` or `12:30` would come back as a boolean or a number in YAML 1.1.
      out = SAFE_PLAIN.test(value) && readsAsString(value) ? value : JSON.stringify(value);
      break;
    case 'BLOCK_FOLDED':
    case 'BLOCK_LITERAL':
      // A block scalar's range runs through its final line break; keep one.
      out = blockLiteral(text.slice(start, end), value) ?? `${JSON.stringify(value)}\n`;
      break;
    default:
      out = JSON.stringify(value);
  }
  return { start, end, text: out };
}

/**
 * Rewrites a block scalar as a literal with the same indentation and chomping, or undefined when
 * the value cannot be written that way without changing it (then the caller quotes it).
 */
function blockLiteral(source: string, value: string): string | undefined {
  const header = /^[|>]([1-9]?)([-+]?)([1-9]?)([ \t]+#[^\n]*)?[ \t]*\r?\n/.exec(source);
  if (!header || header[1] || header[3] || !LITERAL_SAFE.test(value)) return undefined;
  const indent = /^(?:[ \t]*\r?\n)*( +)\S/.exec(source.slice(header[0].length))?.[1];
  if (!indent) return undefined;
  const chomp = value.endsWith('\n') ? (/\n\n$/.test(value) ? '+' : '') : '-';
  const body = chomp === '-' ? value : value.slice(0, -1);
  const lines = body.split('\n');
  // Leading blanks on the first line would be read as indentation; blank-only lines as empty ones.
  if (/^[ \t]/.test(lines[0] ?? '') || lines.some((l) => l !== '' && /^[ \t]*$/.test(l)) || body === '')
    return undefined;
  return `|${chomp}${header[4] ?? ''}\n${lines.map((l) => (l === '' ? '' : indent + l)).join('\n')}\n`;
}

export function applyEdits(text: string, edits: TextEdit[]): string {
  if (edits.length === 0) return text;
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  const parts: string[] = [];
  let cursor = 0;
  for (const edit of sorted) {
    if (edit.start < cursor) throw new InstallerError(ExitCode.internal, 'Internal error: overlapping manifest edits');
    parts.push(text.slice(cursor, edit.start), edit.text);
    cursor = edit.end;
  }
  parts.push(text.slice(cursor));
  return parts.join('');
}

export function rangeOf(node: { range?: [number, number, number] | null }): [number, number] {
  if (!node.range)
    throw new InstallerError(ExitCode.internal, 'Internal error: a parsed YAML node without a source range');
  return [node.range[0], node.range[1]];
}
