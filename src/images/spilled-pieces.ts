// The post-renderer's copy of helm's stream, kept on disk instead of in the heap. The rewrite
// reads every document twice (rewrite-manifests.ts: find every image, then splice the edits once
// the plan has named them all), so without this the whole stream sat in memory as strings for the
// whole run, and V8 grew its heap well past it. Here each document's text is written to a file as
// it arrives and read back by its byte range when a pass needs it: the heap holds one document
// and the edits, whatever the stream's size. The file is unlinked as soon as it is open, so it
// never outlives the process, even one killed by the OOM killer.
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import type { ManifestPiece, PieceSource } from './manifest-stream.js';

export class SpilledPieces implements PieceSource {
  private fd: number | undefined;
  /** Byte offset in the file where each piece starts, and the stream line it starts on. */
  private readonly offsets: number[] = [];
  private readonly lines: number[] = [];
  private size = 0;

  /** `file`: a path in a directory of the caller's that does not exist yet. */
  constructor(file: string) {
    this.fd = openSync(file, 'wx+', 0o600);
    unlinkSync(file);
  }

  get length(): number {
    return this.lines.length;
  }

  push(piece: ManifestPiece): void {
    if (piece.index !== this.lines.length) throw new Error(`spilled pieces must come in order: got ${piece.index}, expected ${this.lines.length}`);
    const bytes = Buffer.from(piece.text, 'utf8');
    for (let done = 0; done < bytes.length; ) done += writeSync(this.open(), bytes, done, bytes.length - done, this.size + done);
    this.offsets.push(this.size);
    this.lines.push(piece.line);
    this.size += bytes.length;
  }

  at(index: number): ManifestPiece | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.lines.length) return undefined;
    const start = this.offsets[index]!;
    const end = index + 1 < this.offsets.length ? this.offsets[index + 1]! : this.size;
    const bytes = Buffer.allocUnsafe(end - start);
    for (let done = 0; done < bytes.length; ) {
      const read = readSync(this.open(), bytes, done, bytes.length - done, start + done);
      if (read === 0) throw new Error(`the spill file ended early at byte ${start + done} of ${this.size}`);
      done += read;
    }
    return { index, text: bytes.toString('utf8'), line: this.lines[index]! };
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): number {
    if (this.fd === undefined) throw new Error('the spill file is closed');
    return this.fd;
  }
}
