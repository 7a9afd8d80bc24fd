// One request of the post-render shim, as the host (post-render-host.ts) sees it. The shim made
// three files in a private request directory, opened them and removed the directory at once, so
// it holds them only by descriptor: fd 3 a FIFO it reads its answer from, fd 4 helm's stream, fd 5
// the file it prints from. The host reaches them through /proc/<shim pid>/fd/N. Nothing of the
// stream has a name on disk, so nothing of it outlives the shim and the host, however they end.
import {
  closeSync,
  constants,
  createReadStream,
  ftruncateSync,
  openSync,
  readlinkSync,
  writeSync,
  type ReadStream,
} from 'node:fs';

/** What a request's rewrite returns: the shim's exit code, and what it prints on stderr when not 0. */
interface ServedRequest {
  exitCode: number;
  stderr: string;
}

/** Rewrites `input` (helm's stream) by calling `write` with each output chunk in order. */
export type ServeRequest = (
  input: AsyncIterable<Uint8Array>,
  write: (chunk: string | Uint8Array) => void,
) => Promise<ServedRequest>;

/** The shim's descriptors, by the names their files had in its request directory. */
export const SHIM_FDS = { answer: 3, in: 4, out: 5 } as const;

export class ShimRequest {
  private answered = false;

  private constructor(
    private readonly answerFd: number,
    private readonly input: ReadStream | undefined,
    private readonly output: number | undefined,
  ) {}

  /**
   * The request a shim wrote as `<pid> <request dir>`, its descriptors opened; undefined when it
   * is not one of ours or its shim is gone (nobody to answer). A shim whose answer FIFO opened
   * always gets an answer: `serve` or `fail` it.
   */
  static open(line: string, dir: string): ShimRequest | undefined {
    const m = /^(\d+) (.+)$/.exec(line);
    if (!m || !m[2]!.startsWith(`${dir}/request.`)) return undefined;
    const [pid, requestDir] = [m[1]!, m[2]!];
    // Non-blocking: a FIFO whose shim died meanwhile has no reader, and a blocking open would wait.
    const answerFd = openShimFd(pid, requestDir, 'answer', constants.O_WRONLY | constants.O_NONBLOCK);
    if (answerFd === undefined) return undefined;
    const input = openShimFd(pid, requestDir, 'in', constants.O_RDONLY);
    const output = openShimFd(pid, requestDir, 'out', constants.O_RDWR);
    const request = new ShimRequest(
      answerFd,
      input === undefined ? undefined : createReadStream('', { fd: input, highWaterMark: 64 * 1024 }),
      output,
    );
    if (input === undefined || output === undefined)
      request.fail('helm-installer post-render: the installer cannot read the stream of this request\n');
    return request;
  }

  get isAnswered(): boolean {
    return this.answered;
  }

  /** Runs `serve` on the stream and answers with its outcome; never throws. */
  async serve(serve: ServeRequest): Promise<void> {
    if (this.answered) return;
    let served: ServedRequest;
    try {
      served = await serve(this.input!, (chunk) => this.write(chunk));
    } catch (error) {
      served = { exitCode: 1, stderr: `helm-installer post-render: ${(error as Error).message}\n` };
    }
    if (served.exitCode === 0) this.answer(0);
    else this.fail(served.stderr);
  }

  /** Answers exit 1 with `stderr` as what the shim prints, in place of any output so far. */
  fail(stderr: string): void {
    if (this.answered || this.output === undefined) return this.answer(1);
    try {
      ftruncateSync(this.output, 0);
      writeAll(this.output, Buffer.from(stderr), 0);
    } catch {
      // Out of space: the shim fails all the same, without the message.
    }
    this.answer(1);
  }

  private write(chunk: string | Uint8Array): void {
    // Answered already (the host was disposed meanwhile): what the rewrite still writes is dropped.
    if (this.answered) return;
    writeAll(this.output!, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }

  /** Tells the shim its exit code, once, and lets go of its descriptors. */
  private answer(code: 0 | 1): void {
    if (this.answered) return;
    this.answered = true;
    try {
      writeSync(this.answerFd, `${code}\n`);
    } catch {
      // EPIPE: the shim is gone (helm stopped, or it was killed); nobody to tell.
    }
    closeSync(this.answerFd);
    if (this.output !== undefined) closeSync(this.output);
    // Closes its descriptor once a read in flight has ended: never a number reused meanwhile.
    this.input?.destroy();
  }
}

/**
 * Opens the shim's descriptor for `name`, only if it is still the file the shim made in
 * `requestDir` (its pid may have ended and been reused by then); undefined otherwise.
 */
function openShimFd(pid: string, requestDir: string, name: keyof typeof SHIM_FDS, flags: number): number | undefined {
  const path = `/proc/${pid}/fd/${SHIM_FDS[name]}`;
  try {
    const target = readlinkSync(path);
    if (target !== `${requestDir}/${name} (deleted)` && target !== `${requestDir}/${name}`) return undefined;
    return openSync(path, flags);
  } catch {
    return undefined;
  }
}

/** writeSync until every byte is written (a regular file may take fewer at once). */
function writeAll(fd: number, bytes: Uint8Array, position?: number): void {
  for (let done = 0; done < bytes.length;) {
    done += writeSync(fd, bytes, done, bytes.length - done, position === undefined ? null : position + done);
  }
}
