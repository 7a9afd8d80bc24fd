import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { InvalidInputError } from '../../src/common/errors.js';
import { postRenderFailure, runPostRender } from '../../src/post-render/post-render-run.js';
import { EMPTY_STREAM, pluginYaml, shimScript } from '../../src/post-render/post-render-host.js';
import { POST_RENDERER_PLUGIN, preparePostRenderer } from '../../src/post-render/post-renderer-setup.js';
import { parseRegistryAddress } from '../../src/common/image-reference.js';
import { helmTraits } from '../../src/helm/helm-traits.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'post-render-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {postrenderer.helm.sh/postrender-filename: 'demo/templates/pod.yaml'}
spec:
  containers: [{name: a, image: nginx:1.27}]
`;

const PLAN = { registry: parseRegistryAddress('registry.local:5000/app'), extraPaths: [] };

describe('runPostRender', () => {
  it('rewrites, reports every image and the template of each (helm 4 annotation)', async () => {
    const outcome = await runPostRender(PLAN, dir, POD);
    expect(outcome).toMatchObject({ exitCode: 0, stderr: '' });
    expect(outcome.stdout).toBe(POD.replace('image: nginx:1.27', 'image: registry.local:5000/app/nginx:1.27'));
    // The stream was spilled in the directory while it ran, and nothing of it is left there.
    expect(readdirSync(dir)).toEqual([]);
    expect(outcome.report).toEqual({
      ok: true,
      at: expect.any(String),
      documents: 1,
      images: { occurrences: 1, distinct: 1 },
      rewrites: [
        {
          from: 'nginx:1.27',
          to: 'registry.local:5000/app/nginx:1.27',
          count: 1,
          kind: 'Pod',
          name: 'p',
          path: 'spec.containers[0].image',
          document: 0,
          source: 'demo/templates/pod.yaml',
        },
      ],
      pullSecretsAdded: 0,
    });
  });

  it('copies a large CRD out byte for byte in small chunks, never searched, unless an extra path names the kind', async () => {
    // Over 200 KB, with characters of 2 and 4 bytes that some 64 KB chunk edge must cut, and an
    // `image:` key in its schema text that is not an image.
    const line = '          description: "grüße 🚀🚀🚀 image: nginx:1.27 and more words"\n';
    const crd =
      [
        'apiVersion: apiextensions.k8s.io/v1',
        'kind: CustomResourceDefinition',
        'metadata: {name: widgets.acme.io}',
        'spec:',
        '  image: nginx:1.27',
        '  group: acme.io',
        '  versions:',
        '    - name: v1',
        '      schema:',
        '        openAPIV3Schema:',
        '',
      ].join('\n') + line.repeat(3000);
    // The second chunk edge falls inside a 🚀: its bytes must be decoded across the edge.
    expect(Buffer.from(crd)[2 * 64 * 1024]! & 0xc0).toBe(0x80);
    const stream = `${crd}---\n${POD}`;
    const rewrittenPod = POD.replace('image: nginx:1.27', 'image: registry.local:5000/app/nginx:1.27');

    const written: (string | Uint8Array)[] = [];
    const outcome = await runPostRender(PLAN, dir, stream, (chunk) => void written.push(chunk));
    expect(outcome).toMatchObject({
      exitCode: 0,
      stdout: '',
      stderr: '',
      report: { ok: true, documents: 2, images: { occurrences: 1, distinct: 1 } },
    });
    const bytes = written.filter((c): c is Uint8Array => typeof c !== 'string');
    expect(Buffer.concat(bytes).toString('utf8')).toBe(crd);
    expect(Math.max(...bytes.map((b) => b.length))).toBe(64 * 1024);
    expect(bytes.length).toBe(Math.ceil(Buffer.byteLength(crd) / (64 * 1024)));
    expect(Buffer.concat(written.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString('utf8')).toBe(
      `${crd}---\n${rewrittenPod}`,
    );
    // Collected instead of written: the same text, decoded across the chunk edges.
    expect((await runPostRender(PLAN, dir, stream)).stdout).toBe(`${crd}---\n${rewrittenPod}`);

    // An extra path naming the kind: the CRD is read and rewritten there, the rest of it kept.
    const withPath = { ...PLAN, extraPaths: [{ kind: 'CustomResourceDefinition', path: 'spec.image' }] };
    const edited = await runPostRender(withPath, dir, stream);
    expect(edited.stdout).toBe(
      `${crd.replace('  image: nginx:1.27', '  image: registry.local:5000/app/nginx:1.27')}---\n${rewrittenPod}`,
    );
  });

  it('fails with no stdout, the cause on stderr and in the report', async () => {
    const outcome = await runPostRender(PLAN, dir, POD.replace('nginx:1.27', 'NGINX'));
    expect(outcome.exitCode).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(
      /demo\/templates\/pod.yaml \(key spec.containers\[0\].image\): Invalid image reference "NGINX"/,
    );
    expect(outcome.report).toMatchObject({
      ok: false,
      error: {
        name: 'InvalidInputError',
        exitCode: 3,
        file: 'demo/templates/pod.yaml',
        key: 'spec.containers[0].image',
      },
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('fails when it cannot spill the stream (no such directory), with the cause on stderr', async () => {
    const outcome = await runPostRender(PLAN, join(dir, 'missing'), POD);
    expect(outcome).toMatchObject({
      exitCode: 1,
      stdout: '',
      report: { ok: false, error: { name: 'Error', exitCode: 1 } },
    });
    expect(outcome.stderr).toMatch(
      /^helm-installer post-render: ENOENT: no such file or directory, open '.*\/missing\/post-render-\d+-\d+\.spill'\n$/,
    );
  });

  it('answers an empty stream with a comment, since helm refuses empty output', async () => {
    const outcome = await runPostRender({ extraPaths: [] }, dir, '');
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stdout).toBe(EMPTY_STREAM);
  });
});

describe('postRenderFailure', () => {
  it('is the last failed report as the error the installer shows, with its exit code; none without one', async () => {
    const good = (await runPostRender(PLAN, dir, POD)).report;
    const bad = (await runPostRender(PLAN, dir, POD.replace('nginx:1.27', 'NGINX'))).report;
    expect(postRenderFailure([])).toBeUndefined();
    expect(postRenderFailure([good])).toBeUndefined();
    const error = postRenderFailure([bad, good])!;
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe(
      'The image rewrite (post-renderer) stopped before helm touched the cluster: Invalid image reference "NGINX": repository "library/NGINX" must be lowercase' +
        ' (document 1: Pod "p", spec.containers[0].image, line 7 of the rendered manifests)',
    );
    expect(error).toMatchObject({
      file: 'demo/templates/pod.yaml',
      key: 'spec.containers[0].image',
      hint: expect.stringMatching(/^Use the form \[registry\[:port\]\/\]repository/),
    });
  });

  it('a post-render that only keeps ignored fields says so, not "image rewrite"', async () => {
    const bad = (await runPostRender(PLAN, dir, POD.replace('nginx:1.27', 'NGINX'))).report;
    expect(postRenderFailure([bad], 'pins')!.message).toMatch(
      /^The post-renderer that keeps the ignored fields \(--drift-ignore\) stopped before helm touched the cluster: Invalid image reference "NGINX"/,
    );
  });
});

describe('preparePostRenderer', () => {
  const plan = {
    registry: parseRegistryAddress('registry.local:5000/app'),
    extraPaths: [],
    imagePullSecret: 'regcred',
  };
  const disposers: (() => void)[] = [];
  afterEach(() => {
    for (const d of disposers.splice(0)) d();
  });
  const prepare = async (helmMajor: 3 | 4) => {
    const setup = await preparePostRenderer({ workDir: dir, plan, helm: helmTraits(helmMajor) });
    disposers.push(setup.dispose);
    return setup;
  };

  it('helm 4: a postrenderer/v1 plugin that runs the shim with sh; no plan or report on disk', async () => {
    const setup = await prepare(4);
    expect(setup.helmArgs).toEqual(['--post-renderer', 'helm-installer-images']);
    expect(setup.env).toEqual({ HELM_PLUGINS: join(dir, 'plugins') });
    expect(setup.shim).toBe(join(dir, 'post-render.sh'));
    const plugin = parse(await readFile(join(dir, 'plugins/helm-installer-images/plugin.yaml'), 'utf8'));
    expect(plugin).toEqual({
      apiVersion: 'v1',
      name: 'helm-installer-images',
      version: '1.0.0',
      type: 'postrenderer/v1',
      runtime: 'subprocess',
      runtimeConfig: { platformCommand: [{ command: '/bin/sh', args: [join(dir, 'post-render.sh')] }] },
    });
    expect(readdirSync(dir).sort()).toEqual(['plugins', 'post-render.sh', 'requests']);
    expect(setup.reports).toEqual([]);
    expect(setup.failure()).toBeUndefined();
  });

  it('helm 3: the shim itself is the executable', async () => {
    const setup = await prepare(3);
    expect(setup.helmArgs).toEqual(['--post-renderer', join(dir, 'post-render.sh')]);
    expect(((await stat(setup.shim)).mode & 0o111) !== 0).toBe(true);
    expect(setup.env).toEqual({});
  });

  it('the shim hands the stream to this process and prints the rewrite; nothing of the request is left', async () => {
    const setup = await prepare(3);
    const r = await execa(setup.shim, { input: POD, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const pod = parse(r.stdout) as { spec: { containers: { image: string }[]; imagePullSecrets: unknown } };
    expect(pod.spec.containers[0]!.image).toBe('registry.local:5000/app/nginx:1.27');
    expect(pod.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(setup.reports).toMatchObject([{ ok: true, documents: 1, images: { occurrences: 1, distinct: 1 } }]);
    expect(readdirSync(dir).sort()).toEqual(['post-render.sh', 'requests']);
  });

  it('serves requests that arrive together, each its own stream', async () => {
    const setup = await prepare(4);
    const images = ['nginx:1.27', 'quay.io/acme/api:2.0', 'ghcr.io/acme/worker@sha256:' + 'a'.repeat(64)];
    const runs = await Promise.all(
      images.map((image) => execa('/bin/sh', [setup.shim], { input: POD.replace('nginx:1.27', image), reject: false })),
    );
    expect(runs.map((r) => r.exitCode)).toEqual([0, 0, 0]);
    expect(
      runs.map((r) => (parse(r.stdout) as { spec: { containers: { image: string }[] } }).spec.containers[0]!.image),
    ).toEqual([
      'registry.local:5000/app/nginx:1.27',
      'registry.local:5000/app/api:2.0',
      `registry.local:5000/app/worker@sha256:${'a'.repeat(64)}`,
    ]);
    expect(setup.reports).toHaveLength(3);
    expect(readdirSync(dir).sort()).toEqual(['plugins', 'post-render.sh', 'requests']);
  });

  it('a rewrite that fails: exit 1, the cause on stderr and in memory as the error to show, nothing on stdout', async () => {
    const setup = await prepare(3);
    const r = await execa(setup.shim, { input: POD.replace('nginx:1.27', 'Acme/Web:1'), reject: false });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^helm-installer post-render: .*"Acme\/Web:1".*lowercase/);
    expect(setup.reports).toMatchObject([{ ok: false, error: { file: 'demo/templates/pod.yaml' } }]);
    expect(setup.failure()).toMatchObject({
      exitCode: 3,
      file: 'demo/templates/pod.yaml',
      message: expect.stringMatching(
        /^The image rewrite \(post-renderer\) stopped before helm touched the cluster: .*"Acme\/Web:1"/,
      ),
    });
    expect(readdirSync(dir).sort()).toEqual(['post-render.sh', 'requests']);
  });
});

describe('the post-render host', () => {
  it('refuses a path helm 4 would expand, or that the shim cannot quote', () => {
    expect(() => pluginYaml('/tmp/$HOME/post-render.sh', POST_RENDERER_PLUGIN)).toThrow(/expand/);
    expect(() => shimScript("/tmp/it's", "/tmp/it's/requests", 1)).toThrow(/cannot use the path/);
  });
});
