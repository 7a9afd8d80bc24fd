// Helm 4 before 4.2.0 changes a value on its way through any post-renderer: it parses each
// template file's output with kyaml to add its filename annotation, and a file whose output does
// not end with a line break loses the final newline of a block scalar ending it (`data: |` at the
// end of a ConfigMap template becomes `|-`: "x\n" becomes "x"; helm issue 31948, fixed in 4.2.0
// by helm PR 31952). Plain `helm upgrade` applies "x\n". The image rewrite has to live with that
// (it needs the post-renderer); install's render gate does not, so it lets helm go on only when
// no value can have been changed, and otherwise starts over without a post-renderer.
import { isMap, isScalar, isSeq, parseDocument, type Node, type Pair, type Scalar } from 'yaml';

/** The annotation helm 4 adds to every document it hands a post-renderer. */
export const FILENAME_ANNOTATION = 'postrenderer.helm.sh/postrender-filename';
const FILENAME_LINE = /^\s*postrenderer\.helm\.sh\/postrender-filename:\s*['"]?([^'"\n]+)/m;

/** Whether this helm's post-render round trip keeps every value: 4.2.0 and later. */
export function keepsValuesThroughPostRender(version: string): boolean {
  const m = /^v?(\d+)\.(\d+)\./.exec(version);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 4 || (major === 4 && minor >= 2);
}

/**
 * Pure. The template files (by helm's filename annotation) whose last document ends with a block
 * scalar without a final newline, in the stream helm 4 hands its post-renderer: exactly where an
 * older helm may have dropped one (a `|-` written so by the chart looks the same, and counts too).
 */
export function filesThatMayHaveLostANewline(stream: string): string[] {
  const last = new Map<string, string>();
  for (const doc of stream.split(/^---[ \t]*$/m)) {
    const file = FILENAME_LINE.exec(doc)?.[1];
    if (file) last.set(file, doc);
  }
  const found: string[] = [];
  for (const [file, doc] of last) {
    const end = lastScalar(parseDocument(doc).contents as Node | null);
    if (end && (end.type === 'BLOCK_LITERAL' || end.type === 'BLOCK_FOLDED') && !String(end.value).endsWith('\n')) found.push(file);
  }
  return found;
}

/** The scalar that ends the document in source order, helm's own filename annotation aside. */
function lastScalar(node: Node | null | undefined): Scalar | undefined {
  if (node === null || node === undefined) return undefined;
  if (isScalar(node)) return node;
  if (isSeq(node)) return lastScalar(node.items.at(-1) as Node | undefined);
  if (isMap(node)) return lastOfPairs(node.items as Pair[]);
  return undefined;
}

function lastOfPairs(pairs: Pair[]): Scalar | undefined {
  const items = pairs.filter((p) => !(isScalar(p.key) && p.key.value === FILENAME_ANNOTATION));
  const pair = items.at(-1);
  if (!pair) return undefined;
  if (pair.value === null || pair.value === undefined) return isScalar(pair.key) ? pair.key : undefined;
  // A map that held only helm's annotation (`annotations` at the end): the scalar before it.
  if (isMap(pair.value) && lastOfPairs(pair.value.items as Pair[]) === undefined) return lastOfPairs(items.slice(0, -1));
  return lastScalar(pair.value as Node);
}
