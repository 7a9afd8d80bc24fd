// The post-renderer's copy of helm's stream, kept on disk instead of in the heap. The rewrite
// reads every document twice (rewrite-manifests.ts: find every image, then splice the edits once
// the plan has named them all), so without this the whole stream sat in memory as strings for the
// whole run, and V8 grew its heap well past it. Here each document's text is written to a file as
// it arrives and read back by its byte range when a pass needs it: the heap holds one document
// and the edits, whatever the stream's size. A CustomResourceDefinition is recognised as it
// arrives and never read back whole: the search skips it, and it goes out as it came, 64 KB at a
// time (at 11 MB of public charts, most of them CRDs, this took 3-5 MB off the peak). The file is
// unlinked as soon as it is open, so it never outlives the process, even one killed by the OOM
// killer.
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { isCustomResourceDefinition, type ManifestPiece, type PieceSource } from '../rendered/manifest-stream.js';

/** The size of the reads that copy a piece out unchanged (chunksOf). */
const CHUNK = 64 * 1024;

export class SpilledPieces implements PieceSource {
  private fd: number | undefined;
  /** Byte offset in the file where each piece starts, and the stream line it starts on. */
  private readonly offsets: number[] = [];
  private readonly lines: number[] = [];
  private readonly crds: boolean[] = [];
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
    if (piece.index !== this.lines.length)
      throw new Error(`spilled pieces must come in order: got ${piece.index}, expected ${this.lines.length}`);
    const bytes = Buffer.from(piece.text, 'utf8');
    for (let done = 0; done < bytes.length;)
      done += writeSync(this.open(), bytes, done, bytes.length - done, this.size + done);
    this.offsets.push(this.size);
    this.lines.push(piece.line);
    this.crds.push(isCustomResourceDefinition(piece.text));
    this.size += bytes.length;
  }

  isCustomResourceDefinition(index: number): boolean {
    return this.crds[index] === true;
  }

  /** Reads piece `index` back CHUNK bytes at a time: a copy that never holds the whole piece. */
  *chunksOf(index: number): Generator<Uint8Array> {
    const [start, end] = this.range(index);
    for (let at = start; at < end;) {
      const bytes = Buffer.allocUnsafe(Math.min(CHUNK, end - at));
      this.readFully(bytes, at);
      at += bytes.length;
      yield bytes;
    }
  }

  at(index: number): ManifestPiece | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.lines.length) return undefined;
    const [start, end] = this.range(index);
    const bytes = Buffer.allocUnsafe(end - start);
    this.readFully(bytes, start);
    return { index, text: bytes.toString('utf8'), line: this.lines[index]! };
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private range(index: number): [number, number] {
    if (!Number.isInteger(index) || index < 0 || index >= this.lines.length)
      throw new Error(`no piece ${index} in the spill file`);
    return [this.offsets[index]!, index + 1 < this.offsets.length ? this.offsets[index + 1]! : this.size];
  }

  private readFully(bytes: Buffer, position: number): void {
    for (let done = 0; done < bytes.length;) {
      const read = readSync(this.open(), bytes, done, bytes.length - done, position + done);
      if (read === 0) throw new Error(`the spill file ended early at byte ${position + done} of ${this.size}`);
      done += read;
    }
  }

  private open(): number {
    if (this.fd === undefined) throw new Error('the spill file is closed');
    return this.fd;
  }
}
