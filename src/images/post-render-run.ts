// What the post-render does with one stream helm hands it (served in the installer's process by
// post-render-host.ts): read the plan, rewrite the stream, and append a report line. Helm 4
// throws a post-renderer's stderr away, so the report file is the only channel that reliably
// reaches the installer's failure summary. The report stays small (counts and each distinct
// rewrite once), whatever the stream's size.
import { appendFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ExitCode, InstallerError, InvalidInputError, UsageError } from '../errors.js';
import { parseRegistryAddress } from './image-reference.js';
import type { ExtraImagePath } from './manifest-images.js';
import { ManifestSplitter, type ManifestPiece } from './manifest-stream.js';
import { prepareRewrite, type RewritePlan, type RewriteSummary } from './rewrite-manifests.js';
import { EMPTY_STREAM } from './post-render-host.js';
import { SpilledPieces } from './spilled-pieces.js';

/** The JSON file handed to the post-renderer with `--plan`. */
export interface PostRenderPlanFile {
  version: 1;
  /** KOTS LocalRegistryAddress; absent: leave images alone. */
  registry?: string;
  extraPaths: ExtraImagePath[];
  imagePullSecret?: string;
  /** JSON-lines file the post-renderer appends one report to per run. */
  reportFile: string;
}

export type PostRenderReport =
  | ({ ok: true; at: string } & RewriteSummary)
  | {
      ok: false;
      at: string;
      error: { name: string; message: string; exitCode: number; hint?: string; file?: string; key?: string; line?: number };
    };

export interface PostRenderOutcome {
  exitCode: 0 | 1;
  stdout: string;
  stderr: string;
}


export async function readPlanFile(file: string): Promise<PostRenderPlanFile> {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new UsageError(`post-render: cannot read the plan ${file}: ${(cause as Error).message}`, { file, cause });
  }
  const plan = data as Partial<PostRenderPlanFile> | null;
  if (
    !plan ||
    plan.version !== 1 ||
    typeof plan.reportFile !== 'string' ||
    !Array.isArray(plan.extraPaths) ||
    (plan.registry !== undefined && typeof plan.registry !== 'string') ||
    (plan.imagePullSecret !== undefined && typeof plan.imagePullSecret !== 'string')
  ) {
    throw new UsageError(`post-render: the plan ${file} is not a version 1 plan`, { file });
  }
  return plan as PostRenderPlanFile;
}

export function toRewritePlan(plan: PostRenderPlanFile): RewritePlan {
  return {
    ...(plan.registry !== undefined ? { registry: parseRegistryAddress(plan.registry) } : {}),
    extraPaths: plan.extraPaths,
    ...(plan.imagePullSecret !== undefined ? { imagePullSecret: plan.imagePullSecret } : {}),
  };
}

/**
 * Splits a byte stream into documents as it arrives (UTF-8 decoded across chunk edges), handing
 * each to `sink` (an array, or the spill file) as soon as it is complete.
 */
export async function readPieces<S extends { push(piece: ManifestPiece): unknown }>(
  input: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  sink: S,
): Promise<S> {
  const decoder = new TextDecoder('utf-8');
  const splitter = new ManifestSplitter();
  for await (const chunk of input) {
    for (const piece of splitter.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }))) sink.push(piece);
  }
  for (const piece of [...splitter.push(decoder.decode()), ...splitter.end()]) sink.push(piece);
  return sink;
}

/**
 * Never throws: every failure becomes exit 1, no stdout, a message on stderr and in the report.
 * Output goes to `write` document by document when given (the process's stdout), else into
 * `stdout` of the outcome. Nothing is written unless the whole stream could be rewritten.
 */
export async function runPostRender(
  planFile: string,
  input: string | AsyncIterable<Uint8Array | string>,
  write?: (chunk: string | Uint8Array) => void | Promise<void>,
): Promise<PostRenderOutcome> {
  let reportFile: string | undefined;
  let spilled: SpilledPieces | undefined;
  try {
    const plan = await readPlanFile(planFile);
    reportFile = plan.reportFile;
    // Beside the plan: the installer's own work directory, removed when its run ends.
    // Unique: the pid among live processes, the clock within one (SpilledPieces opens it O_EXCL).
    spilled = new SpilledPieces(join(dirname(planFile), `post-render-${process.pid}-${process.hrtime.bigint()}.spill`));
    const pieces = await readPieces(typeof input === 'string' ? [input] : input, spilled);
    const prepared = prepareRewrite(pieces, toRewritePlan(plan));
    await appendReport(reportFile, { ok: true, at: new Date().toISOString(), ...prepared.summary });
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
      return { exitCode: 0, stdout: write ? '' : EMPTY_STREAM, stderr: '' };
    }
    return { exitCode: 0, stdout: chunks.join(''), stderr: '' };
  } catch (error) {
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
    let stderr = `helm-installer post-render: ${e?.where ? `${e.where}: ` : ''}${message}\n`;
    if (reportFile) {
      try {
        await appendReport(reportFile, report);
      } catch (writeError) {
        stderr += `helm-installer post-render: cannot write the report ${reportFile}: ${(writeError as Error).message}\n`;
      }
    }
    return { exitCode: 1, stdout: '', stderr };
  } finally {
    spilled?.close();
  }
}

async function appendReport(file: string, report: PostRenderReport): Promise<void> {
  // One write per run keeps each line whole even if helm ever ran two post-renders at once.
  appendFileSync(file, `${JSON.stringify(report)}\n`, 'utf8');
}

/**
 * The post-renderer's own failure, as the error the installer reports, when its report holds one:
 * helm only says "plugin exited with error" (helm 4) or passes our stderr along (helm 3), and a
 * helm failure would be reported as a failed release although helm stopped before touching it.
 */
export async function postRenderFailure(reportFile: string): Promise<InstallerError | undefined> {
  const failed = (await readPostRenderReports(reportFile)).findLast((r) => !r.ok);
  if (!failed || failed.ok) return undefined;
  const { message, exitCode, hint, file, key, line } = failed.error;
  const text = `The image rewrite (post-renderer) stopped before helm touched the cluster: ${message}`;
  const details = { hint: hint ?? 'Fix the template named above, or run without --registry.', file, key, line };
  if (exitCode === ExitCode.invalidInput) return new InvalidInputError(text, details);
  if (exitCode === ExitCode.usage) return new UsageError(text, details);
  return new InstallerError(ExitCode.internal, text, details);
}

/** Reads every report line the post-renderer appended (none yet: an empty list). */
export async function readPostRenderReports(file: string): Promise<PostRenderReport[]> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as PostRenderReport);
}
