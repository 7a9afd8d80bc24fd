// JSON pointers (RFC 6901), the path syntax of ignore rules and of drift reports: Flux's
// ignore rules use it, and a report path can be pasted into a rule as it is.

/** `/spec/template/metadata/annotations/a~1b` -> ['spec', 'template', 'metadata', 'annotations', 'a/b']. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`a JSON pointer starts with "/": ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function formatPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** Whether `path` is `prefix` or lies under it (segment-wise: /a/b is not under /a/bc). */
export function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
}

type Tree = Record<string, unknown> | unknown[];

const isTree = (v: unknown): v is Tree => v !== null && typeof v === 'object';

/** The value at the pointer, or undefined when any step is missing. */
export function getAt(root: unknown, segments: readonly string[]): unknown {
  let node: unknown = root;
  for (const s of segments) {
    if (!isTree(node)) return undefined;
    node = Array.isArray(node) ? node[arrayIndex(s) ?? -1] : Object.hasOwn(node, s) ? node[s] : undefined;
  }
  return node;
}

/** Sets the value at the pointer, creating maps on the way; false when an array step is missing. */
export function setAt(root: Record<string, unknown>, segments: readonly string[], value: unknown): boolean {
  let node: Tree = root;
  for (const [i, s] of segments.entries()) {
    const last = i === segments.length - 1;
    if (Array.isArray(node)) {
      const at = arrayIndex(s);
      if (at === undefined || at >= node.length) return false;
      if (last) node[at] = value;
      else if (isTree(node[at])) node = node[at] as Tree;
      else return false;
    } else if (last) {
      node[s] = value;
    } else {
      if (!isTree(node[s])) node[s] = {};
      node = node[s] as Tree;
    }
  }
  return true;
}

/** Removes the value at the pointer (an array item is spliced out); no-op when absent. */
export function removeAt(root: unknown, segments: readonly string[]): void {
  if (segments.length === 0) return;
  const parent = getAt(root, segments.slice(0, -1));
  const key = segments.at(-1)!;
  if (Array.isArray(parent)) {
    const at = arrayIndex(key);
    if (at !== undefined && at < parent.length) parent.splice(at, 1);
  } else if (isTree(parent)) {
    delete (parent as Record<string, unknown>)[key];
  }
}

function arrayIndex(s: string): number | undefined {
  return /^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : undefined;
}
