import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { parsePlanArgument, readPostRenderReports, runPostRender } from '../../src/images/post-render-run.js';
import { pluginYaml, preparePostRenderer } from '../../src/images/post-renderer-setup.js';
import { parseRegistryAddress } from '../../src/images/image-reference.js';
import { UsageError } from '../../src/errors.js';

const SELF = fileURLToPath(import.meta.url);
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

async function writePlan(plan: object): Promise<string> {
  const file = join(dir, 'plan.json');
  await writeFile(file, JSON.stringify(plan));
  return file;
}

describe('parsePlanArgument', () => {
  it('takes --plan <file> and --plan=<file>', () => {
    expect(parsePlanArgument(['--plan', '/a'])).toBe('/a');
    expect(parsePlanArgument(['--plan=/a,b'])).toBe('/a,b');
  });
  it('refuses anything else', () => {
    expect(() => parsePlanArgument([])).toThrow(UsageError);
    expect(() => parsePlanArgument(['--plan'])).toThrow(/required/);
    expect(() => parsePlanArgument(['--plan=/a', 'extra'])).toThrow(/unexpected argument "extra"/);
  });
});

describe('runPostRender', () => {
  it('rewrites, reports every image and the template of each (helm 4 annotation)', async () => {
    const reportFile = join(dir, 'report.jsonl');
    const plan = await writePlan({ version: 1, registry: 'registry.local:5000/app', extraPaths: [], reportFile });
    const outcome = await runPostRender(['--plan', plan], POD);
    expect(outcome).toMatchObject({ exitCode: 0, stderr: '' });
    expect(outcome.stdout).toBe(POD.replace('image: nginx:1.27', 'image: registry.local:5000/app/nginx:1.27'));
    // The stream was spilled beside the plan while it ran, and nothing of it is left there.
    expect(readdirSync(dirname(plan)).filter((f) => f.endsWith('.spill'))).toEqual([]);
    await runPostRender([`--plan=${plan}`], POD);
    const reports = await readPostRenderReports(reportFile);
    expect(reports).toHaveLength(2);
    expect(reports[0]).toEqual({
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
    const crd = [
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
    const reportFile = join(dir, 'report.jsonl');
    const plan = await writePlan({ version: 1, registry: 'registry.local:5000/app', extraPaths: [], reportFile });

    const written: (string | Uint8Array)[] = [];
    const outcome = await runPostRender(['--plan', plan], stream, (chunk) => void written.push(chunk));
    expect(outcome).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    const bytes = written.filter((c): c is Uint8Array => typeof c !== 'string');
    expect(Buffer.concat(bytes).toString('utf8')).toBe(crd);
    expect(Math.max(...bytes.map((b) => b.length))).toBe(64 * 1024);
    expect(bytes.length).toBe(Math.ceil(Buffer.byteLength(crd) / (64 * 1024)));
    expect(Buffer.concat(written.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString('utf8')).toBe(`${crd}---\n${rewrittenPod}`);
    // Collected instead of written: the same text, decoded across the chunk edges.
    expect((await runPostRender(['--plan', plan], stream)).stdout).toBe(`${crd}---\n${rewrittenPod}`);
    expect((await readPostRenderReports(reportFile))[0]).toMatchObject({ documents: 2, images: { occurrences: 1, distinct: 1 } });

    // An extra path naming the kind: the CRD is read and rewritten there, the rest of it kept.
    const withPath = await writePlan({ version: 1, registry: 'registry.local:5000/app', extraPaths: [{ kind: 'CustomResourceDefinition', path: 'spec.image' }], reportFile });
    const edited = await runPostRender(['--plan', withPath], stream);
    expect(edited.stdout).toBe(`${crd.replace('  image: nginx:1.27', '  image: registry.local:5000/app/nginx:1.27')}---\n${rewrittenPod}`);
  });

  it('fails with no stdout, the cause on stderr and in the report', async () => {
    const reportFile = join(dir, 'report.jsonl');
    const plan = await writePlan({ version: 1, registry: 'registry.local:5000/app', extraPaths: [], reportFile });
    const outcome = await runPostRender(['--plan', plan], POD.replace('nginx:1.27', 'NGINX'));
    expect(outcome.exitCode).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/demo\/templates\/pod.yaml \(key spec.containers\[0\].image\): Invalid image reference "NGINX"/);
    const [report] = await readPostRenderReports(reportFile);
    expect(report).toMatchObject({
      ok: false,
      error: { name: 'InvalidInputError', exitCode: 3, file: 'demo/templates/pod.yaml', key: 'spec.containers[0].image' },
    });
    expect(readdirSync(dirname(plan)).filter((f) => f.endsWith('.spill'))).toEqual([]);
  });

  it('reports a bad plan on stderr only (there is no report file to name)', async () => {
    const plan = await writePlan({ version: 2 });
    const outcome = await runPostRender(['--plan', plan], POD);
    expect(outcome).toMatchObject({ exitCode: 1, stdout: '' });
    expect(outcome.stderr).toMatch(/not a version 1 plan/);
    expect((await runPostRender(['--plan', join(dir, 'missing.json')], POD)).stderr).toMatch(/cannot read the plan/);
  });

  it('answers an empty stream with a comment, since helm refuses empty output', async () => {
    const plan = await writePlan({ version: 1, extraPaths: [], reportFile: join(dir, 'r.jsonl') });
    const outcome = await runPostRender(['--plan', plan], '');
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stdout.trim()).toMatch(/^# /);
  });

  it('has no report before the first run', async () => {
    expect(await readPostRenderReports(join(dir, 'none.jsonl'))).toEqual([]);
  });
});

describe('preparePostRenderer', () => {
  const plan = { registry: parseRegistryAddress('registry.local:5000/app'), extraPaths: [], imagePullSecret: 'regcred' };

  it('helm 4: writes the plan and a postrenderer/v1 plugin under HELM_PLUGINS', async () => {
    const setup = await preparePostRenderer({ workDir: dir, plan, helmMajor: 4, nodePath: '/usr/bin/node', scriptPath: SELF });
    expect(setup.helmArgs).toEqual(['--post-renderer', 'helm-installer-images', `--post-renderer-args=--plan=${setup.planFile}`]);
    expect(setup.env).toEqual({ HELM_PLUGINS: join(dir, 'plugins') });
    const plugin = parse(await readFile(join(dir, 'plugins/helm-installer-images/plugin.yaml'), 'utf8'));
    expect(plugin).toEqual({
      apiVersion: 'v1',
      name: 'helm-installer-images',
      version: '1.0.0',
      type: 'postrenderer/v1',
      runtime: 'subprocess',
      runtimeConfig: { platformCommand: [{ command: '/usr/bin/node', args: ['--max-semi-space-size=1', '--expose-gc', '--no-maglev', '--no-opt', SELF] }] },
    });
    expect(JSON.parse(await readFile(setup.planFile, 'utf8'))).toEqual({
      version: 1,
      registry: 'registry.local:5000/app',
      extraPaths: [],
      imagePullSecret: 'regcred',
      reportFile: setup.reportFile,
    });
    expect(await setup.readReport()).toEqual([]);
  });

  it('helm 3: writes an executable wrapper script', async () => {
    const setup = await preparePostRenderer({ workDir: dir, plan, helmMajor: 3, nodePath: "/opt/it's/node", scriptPath: SELF });
    const [flag, script] = setup.helmArgs;
    expect(flag).toBe('--post-renderer');
    expect(((await stat(script!)).mode & 0o111) !== 0).toBe(true);
    expect(await readFile(script!, 'utf8')).toContain(`exec '/opt/it'\\''s/node' --max-semi-space-size=1 --expose-gc --no-maglev --no-opt '${SELF}' --plan '${setup.planFile}'`);
    expect(setup.env).toEqual({});
  });

  it('refuses paths helm 4 would split or expand, and a missing script', async () => {
    expect(() => pluginYaml('/opt/my node/node', '/x.js')).toThrow(/space or "\$"/);
    expect(() => pluginYaml('/usr/bin/node', '/opt/$HOME/x.js')).toThrow(/expand/);
    await expect(
      preparePostRenderer({ workDir: dir, plan, helmMajor: 4, scriptPath: join(dir, 'nope.js') }),
    ).rejects.toThrow(/does not exist/);
  });
});
