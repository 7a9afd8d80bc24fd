// Reading a file someone else gave us (values, a chart's metadata, a pull secret, a CA bundle),
// bounded: only regular files (a device such as /dev/zero, a FIFO or a socket would be read
// forever or block), and never more than a stated size, so the installer stays inside its Job's
// memory limit whatever it is pointed at.
import { closeSync, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { InvalidInputError } from './errors.js';

export const MiB = 1024 * 1024;

export interface InputFile {
  /** What the file is, for messages: "values file", "pull secret file". */
  what: string;
  maxBytes: number;
  /** Which option or mount to fix. */
  hint: string;
}

/** Throws unless `path` (after symlinks) is a regular file; stat never blocks, open of a FIFO would. */
export function requireRegularFile(path: string, input: Pick<InputFile, 'what' | 'hint'>, stats?: Stats): Stats {
  let st: Stats;
  try {
    st = stats ?? statSync(path);
  } catch (err) {
    throw new InvalidInputError(
      `cannot read the ${input.what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      {
        file: path,
        hint: input.hint,
      },
    );
  }
  if (!st.isFile()) {
    throw new InvalidInputError(`the ${input.what} ${path} is ${kindOf(st)}, not a regular file`, {
      file: path,
      hint: input.hint,
    });
  }
  return st;
}

export function readInputFile(path: string, input: InputFile): string {
  const st = requireRegularFile(path, input);
  if (st.size > input.maxBytes) throw tooLarge(path, input, st.size);
  const fd = openSync(path, 'r');
  try {
    if (!fstatSync(fd).isFile())
      throw new InvalidInputError(`the ${input.what} ${path} changed while being opened`, {
        file: path,
        hint: input.hint,
      });
    // Read at most maxBytes + 1: a file that grows after the stat is still caught.
    const buffer = Buffer.alloc(Math.min(input.maxBytes + 1, st.size + 64 * 1024));
    let length = 0;
    for (;;) {
      if (length === buffer.length) break;
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > input.maxBytes) throw tooLarge(path, input, length);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function tooLarge(path: string, input: InputFile, size: number): InvalidInputError {
  return new InvalidInputError(
    `the ${input.what} ${path} is ${formatBytes(size)}, over the limit of ${formatBytes(input.maxBytes)}`,
    {
      file: path,
      hint: input.hint,
    },
  );
}

export function formatBytes(n: number): string {
  if (n >= MiB) return `${(n / MiB).toFixed(n % MiB === 0 ? 0 : 1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${n} bytes`;
}

export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}
