// What helm 4 really hands a post-renderer: go-yaml's re-serialisation, with single-quoted
// strings whose closing quote sits at column 0 inside nested blocks (fixture chart
// test/fixtures/charts/go-yaml-strings reproduces a popular monitoring chart's alert rules).
// Oracle: helm 3 passes the templates' own text, which the `yaml` package reads strictly; the
// objects our reader gets from helm 4's stream must be exactly those.
import { describe, it, expect, beforeAll } from 'vitest';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { parsePiece, splitManifestStream } from '../../src/rendered/manifest-stream.js';
import { parseRegistryAddress } from '../../src/common/image-reference.js';
import { preparePostRenderer } from '../../src/post-render/post-renderer-setup.js';
import { helm3, helm4, repoRoot, tempDir } from '../helpers.js';
import { helmTraits } from '../../src/helm/helm-traits.js';

const CHART = join(repoRoot, 'test/fixtures/charts/go-yaml-strings');
const HELM = { 3: helm3, 4: helm4 } as const;
const L = 'registry.local:5000/app';
const SOURCE_ANNOTATION = 'postrenderer.helm.sh/postrender-filename';

let dir: string;
let handed: string; // exactly what helm 4 wrote to its post-renderer's stdin
let helm3Objects: unknown[];

function helmEnv(work: string): Record<string, string> {
  return {
    HELM_CACHE_HOME: join(work, 'cache'),
    HELM_CONFIG_HOME: join(work, 'config'),
    HELM_DATA_HOME: join(work, 'data'),
  };
}

/** Strict `yaml` package reading: the oracle for text that is proper YAML. */
function strictObjects(text: string): unknown[] {
  return parseAllDocuments(text, { version: '1.1' }).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS();
  });
}

/** Our reader: every document of the stream, one at a time (CRDs included: the image search skips them, not the reader). */
function ourObjects(text: string): unknown[] {
  return splitManifestStream(text).flatMap((piece) => parsePiece(piece).docs.map((doc) => doc.toJS()));
}

/**
 * Helm 4 adds the template's name as an annotation (the oracle has none) and hands documents in
 * another order than helm 3 prints them: compare sorted by kind and name.
 */
function comparable(objects: unknown[]): unknown[] {
  const key = (o: any) => `${o?.kind}/${o?.metadata?.name}`;
  return [...objects]
    .sort((a, b) => key(a).localeCompare(key(b)))
    .map((o) => {
      const copy = structuredClone(o) as { metadata?: { annotations?: Record<string, string> } };
      const annotations = copy.metadata?.annotations;
      if (annotations) {
        delete annotations[SOURCE_ANNOTATION];
        if (Object.keys(annotations).length === 0) delete copy.metadata!.annotations;
      }
      return copy;
    });
}

beforeAll(async () => {
  dir = tempDir('go-yaml-stream');
  // A post-renderer plugin that only records its stdin and hands it back.
  const plugins = join(dir, 'plugins');
  mkdirSync(join(plugins, 'record'), { recursive: true });
  const recorder = join(dir, 'record.sh');
  writeFileSync(recorder, `#!/bin/sh\nexec tee '${join(dir, 'handed.yaml')}'\n`);
  chmodSync(recorder, 0o755);
  writeFileSync(
    join(plugins, 'record', 'plugin.yaml'),
    `apiVersion: v1\nname: record\nversion: 1.0.0\ntype: postrenderer/v1\nruntime: subprocess\nruntimeConfig:\n  platformCommand:\n    - command: ${recorder}\n`,
  );
  await execa(helm4, ['template', 'r', CHART, '--post-renderer', 'record'], {
    env: { HELM_PLUGINS: plugins, ...helmEnv(dir) },
  });
  handed = readFileSync(join(dir, 'handed.yaml'), 'utf8');
  helm3Objects = strictObjects((await execa(helm3, ['template', 'r', CHART], { env: helmEnv(dir) })).stdout);
});

describe('the stream helm 4 hands a post-renderer', () => {
  it('has go-yaml quoted strings the yaml package alone refuses', () => {
    // The precondition of this file: without it, the tests below would prove nothing.
    expect(handed).toMatch(/\n'\n/);
    const errors = parseAllDocuments(handed, { version: '1.1' }).flatMap((d) => d.errors.map((e) => e.code));
    expect(errors).toContain('MISSING_CHAR');
  });

  it('is read document by document into exactly the objects helm 3 rendered', () => {
    const ours = ourObjects(handed);
    expect(ours).toHaveLength(3);
    expect(comparable(ours)).toEqual(comparable(helm3Objects));
    // Spot checks against values written out by hand, not read by any parser.
    const rules = ours.find((o: any) => o.kind === 'PrometheusRule') as {
      spec: { groups: { rules: { annotations: Record<string, string> }[] }[] };
      rootNote: string;
    };
    expect(rules.spec.groups[0]!.rules[0]!.annotations.description).toBe(
      'An alert meant to ensure: the "entire" pipeline # works.\nIt is always firing, it\'s fine.\n',
    );
    expect(rules.spec.groups[0]!.rules[0]!.annotations.summary).toBe('two trailing\n\n\n');
    expect(rules.rootNote).toBe('a top-level key\nwith a second line\n');
  });
});

describe.each([4, 3] as const)('helm %i template with our post-renderer on go-yaml-strings', (major) => {
  it('rewrites both images and leaves every other value as it was', async () => {
    const work = join(dir, `helm${major}`);
    const setup = await preparePostRenderer({
      workDir: work,
      helm: helmTraits(major),
      plan: { registry: parseRegistryAddress(L), extraPaths: [] },
    });
    const r = await execa(HELM[major], ['template', 'r', CHART, ...setup.helmArgs], {
      reject: false,
      env: { ...setup.env, ...helmEnv(work) },
    }).finally(setup.dispose);
    expect(r.exitCode, r.stderr).toBe(0);
    const expected = structuredClone(helm3Objects) as any[];
    const containers = expected.find((o) => o.kind === 'Deployment').spec.template.spec.containers;
    containers[0].image = `${L}/nginx:1.27`;
    containers[1].image = `${L}/helper:1.0`;
    // Helm 4 reads our output back and writes it out with go-yaml again: read it the same way.
    expect(comparable(ourObjects(r.stdout))).toEqual(comparable(expected));
    const [report] = setup.reports;
    expect(report).toMatchObject({ ok: true, documents: 3, images: { occurrences: 2, distinct: 2 } });
  });
});
