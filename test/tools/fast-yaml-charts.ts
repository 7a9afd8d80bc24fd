// `npm run build && node dist/test/tools/fast-yaml-charts.js [--runs N] <rendered.yaml>...`: runs
// rendered manifest streams (`helm template ... --include-crds`, for helm 4 as a post-renderer is
// handed it) through the fast YAML reader and the `yaml` library, document by document as the
// product splits them, and prints one markdown row per file: documents, taken by the fast reader,
// handed back (and their share of the bytes), CRDs among them, mismatches, and the median time of
// reading the whole stream with the library alone against the product's path (fast reader, else
// the library). A mismatch (the fast reader took a document and read it otherwise than the
// library) is a bug: it is printed with its differences and the exit code is 1.
//
// Why a tool and not a test: the streams worth running are public charts' renders, which are never
// committed (issue 38's rule: fetch them for study, reproduce a pattern in a fixture chart of ours).
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Node } from 'yaml';
import { fastParseDocument } from '../../src/rendered/fast-yaml.js';
import { parseWithLibrary, splitManifestStream } from '../../src/rendered/manifest-stream.js';
import { differences } from '../rendered/yaml-oracle.js';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt === -1 ? 5 : Number(args.splice(runsAt, 2)[1]);
if (!Number.isInteger(runs) || runs < 1) fail('--runs takes a whole number above 0');
if (args.length === 0) fail('name one or more files of rendered manifests');

const median = (xs: number[]): number => xs.sort((a, b) => a - b)[xs.length >> 1]!;
const ms = (x: number): string => x.toFixed(1);

function timed(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

function row(file: string): { mismatches: number; line: string } {
  const pieces = splitManifestStream(readFileSync(file, 'utf8'));
  const counts = { docs: 0, taken: 0, back: 0, backBytes: 0, bytes: 0, crds: 0, crdsBack: 0, mismatches: 0 };
  for (const piece of pieces) {
    // Pieces of comments only (helm's `# Source:` of an empty template) are no document.
    if (!/^[^#\s]/m.test(piece.text.replace(/^---\s*$/gm, ''))) continue;
    const crd = /^kind: CustomResourceDefinition\s*$/m.test(piece.text);
    counts.docs++;
    counts.bytes += piece.text.length;
    if (crd) counts.crds++;
    const fast = fastParseDocument(piece.text);
    if (!fast) {
      counts.back++;
      counts.backBytes += piece.text.length;
      if (crd) counts.crdsBack++;
      continue;
    }
    counts.taken++;
    const found = differences(fast.contents as Node, parseWithLibrary(piece).docs[0]!.contents as Node);
    if (found.length > 0) {
      counts.mismatches++;
      console.error(`MISMATCH in ${file}, document ${piece.index + 1} (line ${piece.line}):\n  ${found.join('\n  ')}`);
    }
  }
  const library: number[] = [];
  const product: number[] = [];
  for (let run = 0; run < runs; run++) {
    // Alternated run by run, so that drift in the machine's load hits both.
    library.push(timed(() => pieces.forEach((piece) => parseWithLibrary(piece))));
    product.push(timed(() => pieces.forEach((piece) => fastParseDocument(piece.text) ?? parseWithLibrary(piece))));
  }
  const share = counts.bytes === 0 ? 0 : Math.round((100 * counts.backBytes) / counts.bytes);
  const [lib, ours] = [median(library), median(product)];
  return {
    mismatches: counts.mismatches,
    line: `| ${file} | ${Math.round(counts.bytes / 1024)} | ${counts.docs} | ${counts.taken} | ${counts.back} (${share}% of bytes) | ${counts.crds} (${counts.crdsBack} back) | ${counts.mismatches} | ${ms(lib)} | ${ms(ours)} | ${(lib / ours).toFixed(1)}x |`,
  };
}

const load = (): string => loadavg()[0]!.toFixed(2);
const before = load();
const lines: string[] = [];
let mismatches = 0;
for (const file of args) {
  const result = row(file);
  mismatches += result.mismatches;
  lines.push(result.line);
}
console.log(`load average (1 min) ${before} before, ${load()} after; medians of ${runs} runs\n`);
console.log('| file | kB | docs | fast | handed back | CRDs | mismatches | library ms | fast path ms | speed-up |');
console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
for (const line of lines) console.log(line);
process.exitCode = mismatches > 0 ? 1 : 0;

function fail(message: string): never {
  console.error(`fast-yaml-charts: ${message}`);
  process.exit(2);
}
