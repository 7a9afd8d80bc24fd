// What the post-render does with one stream helm hands it (served in the installer's process by
// post-render-host.ts): rewrite the stream with the run's plan, and say what it did in a report
// the installer keeps in memory. Helm 4 throws a post-renderer's stderr away, and helm 3 only
// passes it along as text, so the report is what reaches the installer's failure summary. It
// stays small (counts and each distinct rewrite once), whatever the stream's size.
import { join } from 'node:path';
import { InstallerError, InvalidInputError, UsageError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import { ManifestSplitter, type ManifestPiece } from '../rendered/manifest-stream.js';
import { prepareRewrite, type RewriteSummary } from './rewrite-manifests.js';
import type { RewritePlan } from './rewrite-plan.js';
import { EMPTY_STREAM } from './post-render-host.js';
import { SpilledPieces } from './spilled-pieces.js';

export type PostRenderReport =
  | ({ ok: true; at: string } & RewriteSummary)
  | {
      ok: false;
      at: string;
      error: {
        name: string;
        message: string;
        exitCode: number;
        hint?: string;
        file?: string;
        key?: string;
        line?: number;
      };
    };

export interface PostRenderOutcome {
  exitCode: 0 | 1;
  stdout: string;
  stderr: string;
  report: PostRenderReport;
}

/**
 * Splits a byte stream into documents as it arrives (UTF-8 decoded across chunk edges), handing
 * each to `sink` (an array, or the spill file) as soon as it is complete.
 */
async function readPieces<S extends { push(piece: ManifestPiece): unknown }>(
  input: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  sink: S,
): Promise<S> {
  const decoder = new TextDecoder('utf-8');
  const splitter = new ManifestSplitter();
  for await (const chunk of input) {
    for (const piece of splitter.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })))
      sink.push(piece);
  }
  for (const piece of [...splitter.push(decoder.decode()), ...splitter.end()]) sink.push(piece);
  return sink;
}

/**
 * Never throws: every failure becomes exit 1, no stdout, a message on stderr and a failed report.
 * Output goes to `write` document by document when given (the shim's output), else into
 * `stdout` of the outcome. Nothing is written unless the whole stream could be rewritten.
 * `spillDir`: a private directory of the run, where the stream's copy is kept unlinked.
 */
export async function runPostRender(
  plan: RewritePlan,
  spillDir: string,
  input: string | AsyncIterable<Uint8Array | string>,
  write?: (chunk: string | Uint8Array) => void | Promise<void>,
): Promise<PostRenderOutcome> {
  let spilled: SpilledPieces | undefined;
  try {
    // Unique: the pid among live processes, the clock within one (SpilledPieces opens it O_EXCL).
    spilled = new SpilledPieces(join(spillDir, `post-render-${process.pid}-${process.hrtime.bigint()}.spill`));
    const pieces = await readPieces(typeof input === 'string' ? [input] : input, spilled);
    const prepared = prepareRewrite(pieces, plan);
    const report: PostRenderReport = { ok: true, at: new Date().toISOString(), ...prepared.summary };
    const chunks: string[] = [];
    const decoder = new TextDecoder('utf-8');
    let empty = true;
    for (const chunk of prepared.outputChunks()) {
      // Bytes are a CRD's (outputChunks), never empty.
      if (empty && (typeof chunk !== 'string' || chunk.trim() !== '')) empty = false;
      if (write) await write(chunk);
      else chunks.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    }
    if (empty) {
      if (write) await write(EMPTY_STREAM);
      return { exitCode: 0, stdout: write ? '' : EMPTY_STREAM, stderr: '', report };
    }
    return { exitCode: 0, stdout: chunks.join(''), stderr: '', report };
  } catch (error) {
    return failed(error);
  } finally {
    spilled?.close();
  }
}

/** A failure as the shim prints it and as the installer keeps it (postRenderFailure). */
function failed(error: unknown): PostRenderOutcome {
  const e = error instanceof InstallerError ? error : undefined;
  const message = error instanceof Error ? error.message : String(error);
  const report: PostRenderReport = {
    ok: false,
    at: new Date().toISOString(),
    error: {
      name: error instanceof Error ? error.name : 'Error',
      message,
      exitCode: e?.exitCode ?? 1,
      ...(e?.hint ? { hint: e.hint } : {}),
      ...(e?.file ? { file: e.file } : {}),
      ...(e?.key ? { key: e.key } : {}),
      ...(e?.line ? { line: e.line } : {}),
    },
  };
  return {
    exitCode: 1,
    stdout: '',
    stderr: `helm-installer post-render: ${e?.where ? `${e.where}: ` : ''}${message}\n`,
    report,
  };
}

const PURPOSES = {
  images: {
    name: 'The image rewrite (post-renderer)',
    fallback: 'Fix the template named above, or run without --registry.',
  },
  pins: {
    name: 'The post-renderer that keeps the ignored fields (--drift-ignore)',
    fallback: 'Fix the template or the ignore rule named above.',
  },
  annotate: {
    name: 'The post-renderer that sets the app slug annotation (--app-slug)',
    fallback: 'Fix the template named above, or run without --app-slug.',
  },
} as const;

/**
 * The post-renderer's own failure, as the error the installer reports, when a report holds one:
 * helm only says "plugin exited with error" (helm 4) or passes our stderr along (helm 3), and a
 * helm failure would be reported as a failed release although helm stopped before touching it.
 */
/** `purpose`: what the post-render was for: images (--registry), only pins (drift ignore rules), only the app slug annotation. */
export function postRenderFailure(
  reports: readonly PostRenderReport[],
  purpose: 'images' | 'pins' | 'annotate' = 'images',
): InstallerError | undefined {
  const failed = reports.findLast((r) => !r.ok);
  if (!failed || failed.ok) return undefined;
  const { message, exitCode, hint, file, key, line } = failed.error;
  const what = PURPOSES[purpose];
  const text = `${what.name} stopped before helm touched the cluster: ${message}`;
  const fallback = what.fallback;
  const details = { hint: hint ?? fallback, file, key, line };
  if (exitCode === ExitCode.invalidInput) return new InvalidInputError(text, details);
  if (exitCode === ExitCode.usage) return new UsageError(text, details);
  return new InstallerError(ExitCode.internal, text, details);
}
