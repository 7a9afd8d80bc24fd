// Where the specs run: a namespace the admin's cluster names (literal, or KOTS's template for the
// namespace it deploys to), the installer Job's name and the images the local registry must hold.
import type { Obj } from './pod-spec.js';

export const TROUBLESHOOT_API_VERSION = 'troubleshoot.sh/v1beta2';

export interface SpecTarget {
  /** The app's name: the release plan's `app`, or the one chart's release. */
  app: string;
  /** The namespace a release runs in, as the spec writes it (KOTS: `repl{{ Namespace }}` for the one it deploys to). */
  namespace: (ns: string) => string;
  /** The namespace the installer Job runs in (and its inventory lives in), as the spec writes it. */
  installNamespace: string;
  /** The installer Job's name, as the spec writes it (KOTS: one per sequence). */
  installerJob: string;
  /** With a local registry: the names it must hold, and how the spec switches the check off without one. */
  localImages?: { images: string[]; pullSecret?: string; exclude?: string };
}

/** Troubleshoot's outcome entry: `{ fail: { when, message } }`. */
export function outcome(kind: 'pass' | 'warn' | 'fail', message: string, when?: string): Obj {
  return { [kind]: { ...(when !== undefined ? { when } : {}), message } };
}

/** A Go-regexp literal of a name (dots and the like escaped); a KOTS template in it is left for KOTS to render. */
export function regexQuote(text: string): string {
  return text
    .split(/(repl\{\{.*?\}\})/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
    .join('');
}
