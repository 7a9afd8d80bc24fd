// Stage "values": resolve the layers a user gave into the exact -f/--set arguments helm gets,
// lowest first: vendor base values < customer files (the mounted ConfigMap) < --set*. Helm itself
// merges them (maps deep, lists and scalars replace, null deletes): re-implementing its YAML
// dialect (yes/on/0777/12:30) would be the bug. Each file is checked here first so that a typo
// is reported with its file and line before any helm call.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMap, parseAllDocuments } from 'yaml';
import { InvalidInputError } from './errors.js';
import type { SetArgument, ValuesArguments } from './helm/helm-args.js';
import type { SecretRegistry } from './secrets.js';
import { maskSetExpression } from './secrets.js';

export type LayerSource = 'vendor' | 'customer' | 'generated';

export interface ValueLayer {
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
  for (const layer of layers) secrets.collectFrom(readValuesFile(layer.file));
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
    throw new InvalidInputError(`values path not found: ${full}`, {
      file: full,
      hint: 'Check --values (HELM_INSTALLER_VALUES) and that the ConfigMap is mounted at that path.',
    });
  }
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full)
    .filter((name) => !name.startsWith('.') && /\.ya?ml$/.test(name))
    .sort()
    .map((name) => join(full, name))
    .filter((file) => statSync(file).isFile());
}

/**
 * Parses one values file as helm would accept it: one YAML document whose top level is a map (or
 * empty). Returns its data for secret collection; throws with the file and line otherwise.
 */
export function readValuesFile(file: string): Record<string, unknown> {
  const text = readFileSync(file, 'utf8');
  return parseValuesText(text, file);
}

export function parseValuesText(text: string, file: string): Record<string, unknown> {
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
    throw new InvalidInputError(`${file}:${line}: the top level of a values file must be a map of keys, not a ${describe(doc.toJS())}`, {
      file,
      line,
      hint: 'Write values as `key: value` pairs at the top level.',
    });
  }
  return doc.toJS({ maxAliasCount: 1000 }) as Record<string, unknown>;
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  return typeof v;
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
