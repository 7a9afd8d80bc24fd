// What the finders of one object's images are handed: where the object sits in the stream, and
// the sink they add what they find to (manifest-images.ts builds both and keeps the results).
import type { Document, Scalar } from 'yaml';
import type { EmbeddedContext, EmbeddedReference } from './embedded-images.js';

export interface ObjectContext {
  doc: Document.Parsed;
  document: number;
  kind: string;
  apiVersion?: string;
  name: string;
  namespace?: string;
  hook?: string;
  source?: string;
  /** Path prefix of this object inside its document (`items[2].` in a List). */
  prefix: string;
}

/** What one object's finders add to: its image locations (each path once) and registry-only values. */
export interface ObjectSink {
  add(node: Scalar, path: string): void;
  addEmbedded(node: Scalar, path: string, context: EmbeddedContext): void;
  /** A value naming only a registry (or, with `unreadable`, one that could not be read). */
  addRegistry(node: Scalar, path: string, via: string, value: string, unreadable?: string): void;
  /**
   * A reference found in a value read apart (a Secret's decoded data), added whatever paths were
   * seen; `decoded`: the text it was found in, which the rewrite edits and encodes again.
   */
  addReference(
    node: Scalar,
    path: string,
    ref: EmbeddedReference,
    where: EmbeddedContext['where'],
    decoded?: string,
  ): void;
}
