// Reading a chart archive (.tgz) safely, without unpacking it: one pass over the gzip and tar
// streams that keeps only the files a chart's tree needs and stops at the first entry or byte
// count past helm's own limits, an absolute or `..` path, a device, or a link out of the chart.
import { createGunzip } from 'node:zlib';
import { isAbsolute, normalize, posix, relative } from 'node:path';
import type { Readable } from 'node:stream';
import type * as tar from 'tar';
import { formatBytes, MiB } from '../common/read-input.js';

// Helm's own loader limits (MaxDecompressedChartSize, MaxDecompressedFileSize): a chart within
// them is one helm loads; beyond them it is refused here, before anything is unpacked in memory.
export const MAX_TOTAL_BYTES = 100 * MiB;
export const MAX_FILE_BYTES = 5 * MiB;
export const MAX_ENTRIES = 10_000;
/** The .tgz itself: a chart this large compressed is not a chart. */
export const MAX_ARCHIVE_BYTES = 50 * MiB;
/** Extended headers and end blocks: what a real archive holds beyond its entries' headers and bodies. */
const OUTSIDE_ENTRIES_BYTES = 1 * MiB;
/** Tar headers and padding on top of the files' bytes. */
const TAR_OVERHEAD = 16 * MiB;

export interface ArchiveScan {
  /** The files kept, by path below the archive's top folder. */
  files: Map<string, Buffer>;
  problems: string[];
}

/**
 * What a chart's tree needs: Chart.yaml, values.yaml and the dependency files (Chart.lock,
 * requirements.*) of each chart, and archived subcharts.
 */
const KEPT_FILE =
  /^(?:charts\/[^/]+\/)*(?:Chart\.yaml|Chart\.lock|requirements\.(?:yaml|lock)|values\.yaml|charts\/[^/]+\.tgz)$/;

/**
 * Streams the archive once: gunzip -> byte counter -> tar headers. Stops at the first header or
 * byte count past a limit, so a gzip bomb costs what the limit allows, not what it claims. Only
 * the files KEPT_FILE names are kept, each within the per-file limit.
 */
export async function scanArchive(open: () => Readable): Promise<ArchiveScan> {
  // Loaded for archives only: a chart directory (and with it every unchanged redeploy of one)
  // never needs tar. The stream is opened once it is loaded, so no error event goes unheard.
  const { Parser } = await import('tar');
  const source = open();
  return new Promise((resolvePromise, reject) => {
    const scan: ArchiveScan = { files: new Map<string, Buffer>(), problems: [] };
    const tally: Tally = { entries: 0, declared: 0, unpacked: 0, accounted: 0 };
    let finished = false;
    const gunzip = createGunzip();
    const parser = new Parser({ strict: true, maxMetaEntrySize: 64 * 1024 });
    const finish = (err?: Error) => {
      if (finished) return;
      finished = true;
      source.destroy();
      gunzip.destroy();
      if (err && scan.problems.length === 0) reject(err);
      else resolvePromise(scan);
    };
    const stop = (problem: string) => {
      scan.problems.push(problem);
      finish();
    };
    parser.on('entry', (entry: tar.ReadEntry) => {
      const reason = readEntry(entry, tally, scan);
      if (reason) stop(reason);
    });
    parser.on('error', (err: Error) => finish(err));
    parser.on('end', () => finish());
    source.on('error', (err) => finish(err));
    gunzip.on('error', (err) => finish(err));
    gunzip.on('data', (chunk: Buffer) => {
      if (finished) return;
      tally.unpacked += chunk.length;
      const reason = unpackedProblem(tally);
      if (reason) return stop(reason);
      if (!parser.write(chunk)) {
        gunzip.pause();
        parser.once('drain', () => gunzip.resume());
      }
    });
    gunzip.on('end', () => {
      if (!finished) parser.end();
    });
    source.pipe(gunzip);
  });
}

/** What the stream has shown so far, checked against the limits as it goes. */
interface Tally {
  entries: number;
  /** The entries' sizes as their headers declare them. */
  declared: number;
  /** Bytes out of gunzip. */
  unpacked: number;
  // Bytes the headers seen so far account for (header + padded body); anything well past that
  // is data outside any entry: zeros after the end marker, or not a tar at all.
  accounted: number;
}

/**
 * One tar header: counted, checked, and its body kept when a chart's tree needs it (else
 * skipped). The reason to stop the scan here, if any (the entry then is neither read nor skipped).
 */
function readEntry(entry: tar.ReadEntry, tally: Tally, scan: ArchiveScan): string | undefined {
  tally.entries += 1;
  const size = entry.size ?? 0;
  tally.declared += size;
  tally.accounted += 512 + Math.ceil(size / 512) * 512;
  const raw = entry.header?.path ?? entry.path;
  const problem = archiveEntryProblem(raw, entry.type, entry.linkpath, size);
  if (size > MAX_FILE_BYTES) return problem!;
  if (problem) scan.problems.push(problem);
  if (tally.entries > MAX_ENTRIES) return `more than ${MAX_ENTRIES} entries`;
  if (tally.declared > MAX_TOTAL_BYTES) return `more than ${formatBytes(MAX_TOTAL_BYTES)} unpacked (helm's limit)`;
  // Paths below the top folder (the chart's name).
  const below = posix.normalize(raw).split('/').slice(1).join('/');
  if (KEPT_FILE.test(below) && (entry.type === 'File' || entry.type === 'OldFile')) {
    const chunks: Buffer[] = [];
    entry.on('data', (c: Buffer) => chunks.push(c));
    entry.on('end', () => scan.files.set(below, Buffer.concat(chunks)));
  } else {
    entry.resume();
  }
  return undefined;
}

/** The reason to stop once this many bytes are unpacked, if any: a gzip bomb, or data outside the tar. */
function unpackedProblem(tally: Tally): string | undefined {
  if (tally.unpacked > MAX_TOTAL_BYTES + TAR_OVERHEAD)
    return `more than ${formatBytes(MAX_TOTAL_BYTES)} unpacked (helm's limit)`;
  if (tally.unpacked - tally.accounted > OUTSIDE_ENTRIES_BYTES) {
    return `more than ${formatBytes(OUTSIDE_ENTRIES_BYTES)} of data outside any tar entry (not an archive made by \`helm package\`)`;
  }
  return undefined;
}

/** Why one archive entry is unsafe, or undefined when it is fine. Pure, for unit tests. */
export function archiveEntryProblem(
  path: string,
  type: string,
  linkpath: string | undefined,
  size: number,
): string | undefined {
  if (isAbsolute(path) || /^[a-zA-Z]:[\\/]/.test(path)) return `absolute path ${path}`;
  if (path.split(/[\\/]/).includes('..')) return `path with .. ${path}`;
  if (['CharacterDevice', 'BlockDevice', 'FIFO'].includes(type)) return `device or FIFO ${path}`;
  if (size > MAX_FILE_BYTES)
    return `file ${path} is ${formatBytes(size)} (helm's limit is ${formatBytes(MAX_FILE_BYTES)} per file)`;
  if (type === 'SymbolicLink' || type === 'Link') {
    if (!linkpath) return `link ${path} without a target`;
    if (isAbsolute(linkpath)) return `link ${path} points to absolute ${linkpath}`;
    // Symlink targets are relative to the link's folder; hard links to the archive root.
    const base = type === 'SymbolicLink' ? posix.dirname(path) : '.';
    const target = normalize(posix.join(base, linkpath));
    if (target.startsWith('..') || relative('.', target).startsWith('..'))
      return `link ${path} escapes the chart (-> ${linkpath})`;
  }
  return undefined;
}
