// The pull secret edit of the rewrite: adds the image pull secret to one pod spec's
// imagePullSecrets, as a text edit that keeps the rest of the document as helm wrote it.
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import { InstallerError, InvalidInputError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import type { ManifestStream, PodSpecLocation } from '../images/manifest-images.js';
import { get, resolve } from '../rendered/yaml-nodes.js';
import { rangeOf, type TextEdit } from '../rendered/text-edits.js';

/** The edit that lists `secret` in the pod spec's imagePullSecrets; undefined when it is already there. */
export function addPullSecret(stream: ManifestStream, spec: PodSpecLocation, secret: string): TextEdit | undefined {
  const { text } = stream;
  const doc = spec.doc;
  const entry = `{name: ${JSON.stringify(secret)}}`;
  const existing = get(spec.node, 'imagePullSecrets', doc);
  const pair = spec.node.items.findLast((p) => isScalar(p.key) && p.key.value === 'imagePullSecrets');
  const hasPair = pair !== undefined;

  if (hasPair && isSeq(existing)) {
    const named = existing.items.some((item) => {
      const entryNode = resolve(item, doc);
      return isMap(entryNode) && get(entryNode, 'name', doc)?.toJSON() === secret;
    });
    if (named) return undefined;
    const [start] = rangeOf(existing);
    if (existing.flow) {
      expectChar(text, start, '[', spec);
      return { start: start + 1, end: start + 1, text: existing.items.length > 0 ? `${entry}, ` : entry };
    }
    expectChar(text, start, '-', spec);
    return { start, end: start, text: `- name: ${JSON.stringify(secret)}\n${' '.repeat(columnOf(text, start))}` };
  }
  if (hasPair && (existing === undefined || (isScalar(existing) && existing.value === null))) {
    // `imagePullSecrets:` with nothing after it (an empty range) or an explicit `~`/`null`.
    const [start, end] = existing ? rangeOf(existing) : [rangeOf(pair.key as Node)[1], rangeOf(pair.key as Node)[1]];
    if (start !== end) return { start, end, text: `[${entry}]` };
    // Inserted into `key:` or `key: # comment`: keep a blank before the list and before a `#`.
    const before = /\s/.test(text[start - 1] ?? '') ? '' : ' ';
    const after = text[start] === '#' ? ' ' : '';
    return { start, end, text: `${before}[${entry}]${after}` };
  }
  if (hasPair) {
    throw new InvalidInputError(`imagePullSecrets of ${spec.kind} "${spec.name}" (${spec.path}) is not a list`, {
      file: spec.source,
      key: `${spec.path}.imagePullSecrets`,
      hint: 'Render imagePullSecrets as a list of {name: <secret>} entries.',
    });
  }
  if (existing !== undefined) return undefined; // came in through a `<<` merge: leave the shared map alone

  const [start] = rangeOf(spec.node);
  if (spec.node.flow) {
    expectChar(text, start, '{', spec);
    return {
      start: start + 1,
      end: start + 1,
      text: `imagePullSecrets: [${entry}]${spec.node.items.length > 0 ? ', ' : ''}`,
    };
  }
  // Block map: a new first pair, at the column of the current first key.
  const [keyStart] = rangeOf(keyOf(spec.node));
  const indent = ' '.repeat(columnOf(text, keyStart));
  return {
    start: keyStart,
    end: keyStart,
    text: `imagePullSecrets:\n${indent}- name: ${JSON.stringify(secret)}\n${indent}`,
  };
}

function keyOf(map: YAMLMap): Node {
  const key = map.items[0]?.key;
  if (!key || !isScalar(key))
    throw new InstallerError(ExitCode.internal, 'Internal error: a pod spec map without a plain first key');
  return key;
}

function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

function expectChar(text: string, offset: number, char: string, spec: PodSpecLocation): void {
  if (text[offset] !== char) {
    throw new InstallerError(
      ExitCode.internal,
      `Internal error: expected "${char}" at line ${spec.line} of ${spec.kind} "${spec.name}"`,
    );
  }
}
