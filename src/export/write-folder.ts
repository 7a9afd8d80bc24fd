// Writing the export without ever leaving half of one: every file goes to a temporary folder
// beside --out (same filesystem, so the rename is atomic), which replaces --out only once it is
// complete (write-export.ts decides whether it may). A non-empty --out is kept unless --force.
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../common/errors.js';

const FORCE_HINT =
  'Choose an empty or new folder for --out (HELM_INSTALLER_OUT), or add --force (HELM_INSTALLER_FORCE=true) to replace it.';

/** Refuses a --out that holds something (unless force) or cannot be made, before any rendering. */
export function checkOut(out: string, force: boolean): void {
  const full = resolve(out);
  if (!existsSync(full)) return checkCreatable(full);
  if (!statSync(full).isDirectory())
    throw new UsageError(`--out ${full} is a file, not a folder`, {
      hint: 'Give --out (HELM_INSTALLER_OUT) a new or empty folder.',
    });
  if (readdirSync(full).length > 0 && !force)
    throw new UsageError(`--out ${full} exists and is not empty`, { hint: FORCE_HINT });
}

/** The nearest existing folder above --out must be a folder this user can write. */
function checkCreatable(full: string): void {
  let parent = dirname(full);
  while (!existsSync(parent)) parent = dirname(parent);
  if (!statSync(parent).isDirectory()) throw cannotCreate(full, 'ENOTDIR');
  try {
    accessSync(parent, constants.W_OK);
  } catch (error) {
    throw cannotCreate(full, (error as NodeJS.ErrnoException).code ?? 'EACCES', error);
  }
}

function cannotCreate(full: string, code: string, cause?: unknown): UsageError {
  return new UsageError(`--out ${full} cannot be created: ${code}`, {
    hint: 'Give --out (HELM_INSTALLER_OUT) a folder in a place this user can write.',
    cause,
  });
}

/** Creates the temporary folder beside --out; a parent that cannot be created or written is named. */
export function startFolder(out: string): string {
  const full = resolve(out);
  const temp = join(dirname(full), `.${full.split('/').pop()}.export-${process.pid}`);
  try {
    mkdirSync(dirname(full), { recursive: true });
    rmSync(temp, { recursive: true, force: true });
    mkdirSync(temp);
  } catch (error) {
    throw cannotCreate(full, (error as NodeJS.ErrnoException).code ?? (error as Error).message, error);
  }
  return temp;
}

/** `isSecret`: the files only their owner may read (secret values in clear until encrypted). */
export function writeFiles(
  temp: string,
  files: Map<string, string>,
  isSecret = (path: string) => path.includes('/secrets/'),
): void {
  for (const [path, content] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    mkdirSync(dirname(join(temp, path)), { recursive: true });
    writeFileSync(join(temp, path), content, { mode: isSecret(path) ? 0o600 : 0o644 });
  }
}

/** The complete folder takes --out's place; the old one (with --force) is removed only then. */
export function finishFolder(temp: string, out: string): void {
  const full = resolve(out);
  const old = `${temp}.old`;
  if (existsSync(full)) renameSync(full, old);
  renameSync(temp, full);
  rmSync(old, { recursive: true, force: true });
}

export function abandonFolder(temp: string): void {
  rmSync(temp, { recursive: true, force: true });
}
