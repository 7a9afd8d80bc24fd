// JSON written on one line (`{"image":"quay.io/a/b:1","pullPolicy":"IfNotPresent"}`, what a
// template's `toJson` writes into a ConfigMap or a Secret): the line readers see one word, so its
// strings are read here, each with the key it sits under and its place in the text. Pure; text
// that does not parse yields nothing (the callers read it as before).
//
// One pass of one regex over the text (strings, the six structural characters, anything else),
// after JSON.parse said it is JSON: linear, so a minified dashboard or a one-line values file of
// megabytes is read whole. A YAML parse of it (what this used before) took seconds and hundreds
// of MB from a few hundred KiB, so anything over 256 KiB was left to the line readers, which see
// one word: the images in it were neither listed nor rewritten.

export interface JsonString {
  value: string;
  /** The key it sits under (for a list item, the list's key; '' at the top). */
  key: string;
  /** The value's character range in the text (inside its quotes). */
  start: number;
  end: number;
}

/** Over what any ConfigMap or Secret can hold (the API server's limit is about 1 MiB): a bound for hostile input. */
const MAX_JSON = 8 * 1024 * 1024;
const MAX_DEPTH = 32;
const TOKEN = /"((?:[^"\\]|\\.)*)"|([{}[\]:,])|[^\s{}[\]:,"]+/g;

export function isOneLineJson(text: string): boolean {
  if (text.length > MAX_JSON) return false;
  const t = text.trim();
  return (t.startsWith('{') || t.startsWith('[')) && !t.includes('\n');
}

interface Frame {
  array: boolean;
  /** An object's current key (a list's: the key it sits under). */
  key: string;
  /** The key the object or list itself sits under. */
  parent: string;
  /** In an object: the next string is a key. */
  expectKey: boolean;
  start: number;
  /** An object's members so far, when jsonObjects collects them. */
  members?: Map<string, JsonMember>;
}

/** One member of an object: a string (its content as written, inside the quotes) or another value's token. */
export interface JsonMember {
  text: string;
  quoted: boolean;
  /** The member's range in the text (for a string, inside its quotes). */
  start: number;
  end: number;
}

type OnValue = (key: string, member: JsonMember, top: Frame | undefined) => void;

/** Reads the tokens once; each scalar value goes to onValue, each closed object to onObject. */
function walk(text: string, onValue: OnValue, onObject?: (frame: Frame) => void): boolean {
  try {
    JSON.parse(text);
  } catch {
    return false;
  }
  const stack: Frame[] = [];
  const keyHere = () => stack.at(-1)?.key ?? '';
  for (const m of text.matchAll(TOKEN)) {
    const top = stack.at(-1);
    if (m[2] === '{' || m[2] === '[') {
      const key = keyHere();
      stack.push({
        array: m[2] === '[',
        key,
        parent: key,
        expectKey: m[2] === '{',
        start: m.index,
        ...(onObject && m[2] === '{' ? { members: new Map() } : {}),
      });
    } else if (m[2] === '}' || m[2] === ']') {
      const closed = stack.pop();
      if (closed && !closed.array && onObject) onObject(closed);
    } else if (m[2] !== undefined) {
      if (top && !top.array) top.expectKey = m[2] === ',';
    } else if (top && !top.array && top.expectKey && m[1] !== undefined) {
      top.key = m[1];
    } else if (stack.length <= MAX_DEPTH) {
      const quoted = m[1] !== undefined;
      const start = quoted ? m.index + 1 : m.index;
      const member = { text: quoted ? m[1]! : m[0], quoted, start, end: start + (quoted ? m[1]! : m[0]).length };
      top?.members?.set(top.key, member);
      onValue(keyHere(), member, top);
    }
  }
  return true;
}

export function jsonStrings(text: string): JsonString[] {
  const found: JsonString[] = [];
  const ok = walk(text, (key, m) => {
    // Only a string written as it reads (no escapes): its range is then exactly its value.
    if (m.quoted && !m.text.includes('\\')) found.push({ value: m.text, key, start: m.start, end: m.end });
  });
  return ok ? found : [];
}

/** The objects of one-line JSON that `keep` selects by their members, in the order they open, each with the key it sits under. */
export function jsonObjects(
  text: string,
  keep: (members: Map<string, JsonMember>) => boolean,
): { key: string; members: Map<string, JsonMember> }[] {
  const found: { key: string; start: number; members: Map<string, JsonMember> }[] = [];
  const ok = walk(
    text,
    () => {},
    (frame) => {
      if (frame.members && keep(frame.members))
        found.push({ key: frame.parent, start: frame.start, members: frame.members });
    },
  );
  return ok ? found.sort((a, b) => a.start - b.start).map(({ key, members }) => ({ key, members })) : [];
}
