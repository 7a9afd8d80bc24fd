// Stage "values": resolve the layers a user gave into the exact -f/--set arguments helm gets,
// lowest first: vendor base values < customer files (the mounted ConfigMap) < --set*. Helm itself
// merges them (maps deep, lists and scalars replace, null deletes): re-implementing its YAML
// dialect (yes/on/0777/12:30) would be the bug. Each file is checked here first so that a typo
// is reported with its file and line before any helm call.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMap, Lexer, parseAllDocuments } from 'yaml';
import { InvalidInputError } from '../common/errors.js';
import type { SetArgument, ValuesArguments } from '../helm/helm-args.js';
import type { SecretRegistry } from '../common/secrets.js';
import { isSecretKey } from '../common/secrets.js';
import { maskSetExpression } from '../options/set-expressions.js';
import { kindOf, MiB, readInputFile } from '../common/read-input.js';

/** A ConfigMap holds at most 1 MiB; vendor base values get room, but parsing stays well inside the Job's memory. */
const MAX_VALUES_FILE_BYTES = 4 * MiB;
/** Files read from one values directory (a ConfigMap mount). */
const MAX_VALUES_FILES = 200;
/** YAML aliases expanded per file: enough for real anchors, not for a "billion laughs". */
export const MAX_ALIAS_COUNT = 1000;
/** Nesting deeper than this is refused before parsing (a depth bomb exhausts the parser's stack). */
const MAX_VALUES_DEPTH = 256;
/**
 * YAML tokens per file. The yaml library's document model costs about 2 KB per node (100k list
 * items peak near 300 MB), so the node count is bounded by counting tokens with its lexer first,
 * which costs next to nothing. Real values files are far below (a 5000-line values.yaml is about
 * 20k tokens); a long block scalar (an embedded dashboard) is a single token.
 */
const MAX_YAML_TOKENS = 100_000;

const VALUES_HINT =
  'Check --values (HELM_INSTALLER_VALUES) / --base-values, and that the ConfigMap or Secret mounted there exists and has that key (kubectl describe pod: Volumes).';

type LayerSource = 'vendor' | 'customer' | 'generated';

interface ValueLayer {
  file: string;
  source: LayerSource;
}

export interface ValuesInput {
  /** Vendor base values shipped with the app (files or directories). */
  baseValues: string[];
  /** Customer values: the mounted ConfigMap, files or directories, in order. */
  customerValues: string[];
  sets: SetArgument[];
}

export interface ResolvedValues {
  layers: ValueLayer[];
  sets: SetArgument[];
}

export function resolveValues(input: ValuesInput, secrets: SecretRegistry): ResolvedValues {
  const layers: ValueLayer[] = [
    ...input.baseValues.flatMap((p) => expandValuesPath(p).map((file) => ({ file, source: 'vendor' as const }))),
    ...input.customerValues.flatMap((p) => expandValuesPath(p).map((file) => ({ file, source: 'customer' as const }))),
  ];
  if (layers.length > MAX_VALUES_FILES) {
    throw new InvalidInputError(`${layers.length} values files given; at most ${MAX_VALUES_FILES} are read`, {
      hint: 'Merge the values into fewer files.',
    });
  }
  for (const layer of layers) secrets.collectFrom(readValuesFile(layer.file, secrets));
  for (const s of input.sets) maskSetExpression(s.expression, secrets, s.kind);
  return { layers, sets: input.sets };
}

export function toValuesArguments(values: ResolvedValues, generated: string[] = []): ValuesArguments {
  return { files: [...values.layers.map((l) => l.file), ...generated], sets: values.sets };
}

/** A file is itself; a directory is its *.yaml / *.yml files in lexical order (a ConfigMap mount). */
export function expandValuesPath(path: string): string[] {
  const full = resolve(path);
  if (!existsSync(full)) {
    throw new InvalidInputError(`values path not found: ${full}`, { file: full, hint: VALUES_HINT });
  }
  const st = statSync(full);
  if (st.isFile()) return [full];
  if (!st.isDirectory()) {
    throw new InvalidInputError(`the values path ${full} is ${kindOf(st)}, not a file or directory`, {
      file: full,
      hint: VALUES_HINT,
    });
  }
  const names = readdirSync(full).filter((name) => !name.startsWith('.') && /\.ya?ml$/.test(name));
  if (names.length > MAX_VALUES_FILES) {
    throw new InvalidInputError(
      `the values directory ${full} holds ${names.length} *.yaml files; at most ${MAX_VALUES_FILES} are read`,
      {
        file: full,
        hint: 'Point --values at the directory the ConfigMap is mounted at, or merge the files.',
      },
    );
  }
  return names
    .sort()
    .map((name) => join(full, name))
    .filter((file) => statSync(file).isFile());
}

/**
 * Parses one values file as helm would accept it: one YAML document whose top level is a map (or
 * empty). Returns its data for secret collection; throws with the file and line otherwise.
 */
export function readValuesFile(file: string, secrets?: SecretRegistry): Record<string, unknown> {
  const text = readInputFile(file, { what: 'values file', maxBytes: MAX_VALUES_FILE_BYTES, hint: VALUES_HINT });
  // Before parsing: a file that does not parse must not have its secrets echoed by an error.
  if (secrets) collectSecretLines(text, secrets);
  return parseValuesText(text, file);
}

/** Refuses YAML whose nesting or node count would exhaust the stack or the memory limit. */
export function checkYamlBounds(text: string, file: string): void {
  const depth = nestingDepth(text);
  if (depth > MAX_VALUES_DEPTH) {
    throw new InvalidInputError(`${file}: values nested ${depth} levels deep (limit ${MAX_VALUES_DEPTH})`, {
      file,
      hint: 'Values files are configuration: flatten the structure.',
    });
  }
  let tokens = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '') continue;
    tokens += 1;
    if (tokens > MAX_YAML_TOKENS) {
      throw new InvalidInputError(
        `${file}: more than ${MAX_YAML_TOKENS} YAML tokens (list items, keys, documents); too many to read safely`,
        {
          file,
          hint: 'Split the values over fewer keys (a large text belongs in one block scalar `key: |`), or remove the repetition.',
        },
      );
    }
  }
}

export function parseValuesText(text: string, file: string): Record<string, unknown> {
  checkYamlBounds(text, file);
  try {
    return parseValuesDocument(text, file);
  } catch (err) {
    if (err instanceof InvalidInputError) throw err;
    // The yaml library's own limits (alias expansion, stack depth) end up here.
    const message = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    const what = /alias/i.test(message)
      ? `more than ${MAX_ALIAS_COUNT} YAML aliases expanded (an alias bomb?)`
      : `cannot be parsed (${message.slice(0, 120)})`;
    throw new InvalidInputError(`${file}: ${what}`, {
      file,
      hint: 'Write the values out without deep anchors/aliases or nesting.',
    });
  }
}

function parseValuesDocument(text: string, file: string): Record<string, unknown> {
  // YAML 1.1 is go-yaml's dialect; duplicate keys are accepted by helm (the last wins).
  const docs = parseAllDocuments(text, { version: '1.1', uniqueKeys: false, prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [];
  if (!Array.isArray(docs)) return {};
  for (const doc of list) {
    const err = doc.errors[0];
    if (err) {
      const line = err.linePos?.[0].line;
      throw new InvalidInputError(`${file}${line ? `:${line}` : ''}: invalid YAML: ${err.message.split('\n')[0]}`, {
        file,
        line,
        hint: 'Fix the YAML syntax at that line (indentation, a missing colon, an unclosed quote).',
      });
    }
  }
  const content = list.filter((d) => d.contents !== null);
  if (content.length > 1) {
    throw new InvalidInputError(`${file} holds ${content.length} YAML documents; a values file is one map`, {
      file,
      hint: 'Split the documents into separate values files, or remove the extra `---`.',
    });
  }
  const doc = content[0];
  if (!doc) return {};
  if (!isMap(doc.contents)) {
    const line = doc.contents?.range ? lineOf(text, doc.contents.range[0]) : 1;
    throw new InvalidInputError(
      `${file}:${line}: the top level of a values file must be a map of keys, not a ${describe(doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }))}`,
      {
        file,
        line,
        hint: 'Write values as `key: value` pairs at the top level.',
      },
    );
  }
  return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as Record<string, unknown>;
}

/**
 * Deepest flow nesting ([ and {), counted without parsing: a depth bomb is refused before the
 * parser's recursion meets it. Brackets inside quoted strings count too; the count restarts at
 * each top-level key, so a stray bracket in one value cannot add up over a file.
 */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      const next = text.charCodeAt(i + 1);
      if ((next >= 65 && next <= 90) || (next >= 97 && next <= 122)) depth = 0;
    } else if (c === 91 || c === 123) max = Math.max(max, ++depth);
    else if ((c === 93 || c === 125) && depth > 0) depth -= 1;
  }
  return max;
}

/** `password: x` lines, found textually so that a file that fails to parse still has its secrets masked. */
function collectSecretLines(text: string, secrets: SecretRegistry): void {
  for (const m of text.matchAll(/^[ \t-]*["']?([A-Za-z0-9_.-]+)["']?[ \t]*:[ \t]*(.+?)[ \t]*$/gm)) {
    if (!isSecretKey(m[1]!)) continue;
    const raw = m[2]!.replace(/[ \t]+#.*$/, '');
    if (/^[|>&*!]/.test(raw)) continue;
    secrets.add(raw);
    secrets.add(raw.replace(/^(["'])(.*)\1$/, '$2'));
  }
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  return typeof v;
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
