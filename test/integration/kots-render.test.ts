// The KOTS renderer itself (test/kots-render): KOTS's delimiters and functions, and what KOTS
// does with a rendered file. Expected values are written out by hand from KOTS's documented
// behaviour (and its code: pkg/template, pkg/base, pkg/imageutil), never computed here.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { chartDir, runCli, tempDir } from '../helpers.js';
import { kotsRender, type KotsRenderOptions } from './kots-render.js';

const config = `apiVersion: kots.io/v1beta1
kind: Config
metadata: {name: c}
spec:
  groups:
    - name: g
      title: G
      items:
        - {name: host, title: Host, type: text, default: shop.example.com}
        - {name: replicas, title: Replicas, type: text, default: 2}
        - {name: tls, title: TLS, type: bool, default: "0"}
        - {name: cert, title: Cert, type: file}
        - {name: shown, title: Shown, type: label, value: from the Config}
`;

/** Renders one template document (beside the Config above) and returns the rendered text. */
async function renderOne(template: string, options: Partial<KotsRenderOptions> = {}) {
  const dir = tempDir('kots-render');
  writeFileSync(join(dir, 'config.yaml'), config);
  writeFileSync(join(dir, 'doc.yaml'), template);
  const r = await kotsRender({ namespace: 'shop', files: [dir], ...options });
  expect(r.exitCode, r.stderr).toBe(0);
  expect(r.dropped).toEqual([]);
  return r;
}

async function renderDropping(template: string, options: Partial<KotsRenderOptions> = {}) {
  const dir = tempDir('kots-render');
  writeFileSync(join(dir, 'config.yaml'), config);
  writeFileSync(join(dir, 'doc.yaml'), template);
  return kotsRender({ namespace: 'shop', files: [dir], ...options });
}

const cm = (data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n${data}\n`;

describe('kots-render: the template engine', () => {
  it('renders both delimiters, defaults and answers, and KOTS context functions', async () => {
    const r = await renderOne(
      cm(
        [
          '  a: repl{{ ConfigOption "host" }}',
          '  b: "{{repl ConfigOption "replicas" }}"',
          '  c: repl{{ ConfigOptionEquals "tls" "1" }}',
          '  d: x/repl{{ ConfigOption "missing" }}/repl{{ ConfigOptionEquals "missing" "" }}/repl{{ ConfigOptionNotEquals "missing" "x" }}',
          '  e: repl{{ ConfigOptionData "cert" }}',
          '  f: repl{{ ConfigOptionFilename "cert" }}',
          '  g: repl{{ Namespace }}-repl{{ Sequence }}',
          '  h: repl{{ ConfigOption "shown" }}',
          '  i: repl{{ ConfigOption "replicas" | ParseInt | add 1 }}',
          '  j: repl{{ "a\\nb" | toJson }}',
          // Not base64: ConfigOptionData prints nothing.
          '  k: x/repl{{ ConfigOptionData "host" }}',
        ].join('\n'),
      ),
      {
        sequence: 7,
        values: {
          host: { value: 'shop.customer.example' },
          tls: { value: '1' },
          cert: { value: Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64'), filename: 'tls.crt' },
        },
      },
    );
    expect(r.documents).toHaveLength(1);
    expect(r.documents[0]!.content).toBe(
      cm(
        [
          '  a: shop.customer.example',
          '  b: "2"',
          '  c: true',
          '  d: x//false/false',
          '  e: -----BEGIN CERTIFICATE-----',
          '  f: tls.crt',
          '  g: shop-7',
          '  h: from the Config',
          '  i: 3',
          '  j: "a\\nb"',
          '  k: x/',
        ].join('\n'),
      ),
    );
  });

  it('parses the output of the {{repl pass again in the repl{{ pass, and never the output of repl{{', async () => {
    const r = await renderOne(cm('  a: "{{repl ConfigOption "host" }}"\n  b: "repl{{ ConfigOption "host" }}"'), {
      values: { host: { value: 'repl{{ Namespace }}' } },
    });
    expect(r.documents[0]!.content).toContain('  a: "shop"\n  b: "repl{{ Namespace }}"');
  });

  it('LocalImageName, LocalRegistry*, HasLocalRegistry and ImagePullSecretName follow KOTS', async () => {
    const template = cm(
      [
        '  a: repl{{ LocalImageName "docker.io/grafana/grafana:7.3.5" }}',
        '  b: repl{{ LocalImageName "nginx" }}',
        '  c: repl{{ LocalImageName "quay.io/org/app:1.0@sha256:0000000000000000000000000000000000000000000000000000000000000000" }}',
        '  d: repl{{ LocalImageName "localhost:5001/a/b/c:2" }}',
        '  e: x/repl{{ LocalRegistryAddress }}/repl{{ LocalRegistryHost }}/repl{{ LocalRegistryNamespace }}/repl{{ HasLocalRegistry }}',
        '  f: repl{{ ImagePullSecretName }}',
      ].join('\n'),
    );
    const airgap = await renderOne(template, { registry: { host: 'registry.local:5000', namespace: 'app' } });
    expect(airgap.documents[0]!.content).toContain(
      [
        '  a: registry.local:5000/app/grafana:7.3.5',
        '  b: registry.local:5000/app/nginx:latest',
        '  c: registry.local:5000/app/app@sha256:0000000000000000000000000000000000000000000000000000000000000000',
        '  d: registry.local:5000/app/c:2',
        '  e: x/registry.local:5000/app/registry.local:5000/app/true',
        // No Application among the files: no slug, no secret name (SecretNameFromPrefix("")).
        '  f: ',
      ].join('\n'),
    );
    const noNamespace = await renderOne(template, { registry: { host: 'registry.local:5000' } });
    expect(noNamespace.documents[0]!.content).toContain(
      '  a: registry.local:5000/grafana:7.3.5\n  b: registry.local:5000/nginx:latest',
    );
    expect(noNamespace.documents[0]!.content).toContain('  e: x/registry.local:5000/registry.local:5000//true');
    const online = await renderOne(template);
    expect(online.documents[0]!.content).toContain('  a: docker.io/grafana/grafana:7.3.5\n  b: nginx\n');
    expect(online.documents[0]!.content).toContain('  e: x////false');
  });

  it('drops a document that no longer parses and deploys the rest, as KOTS does', async () => {
    const r = await renderDropping(
      [
        cm('  a: repl{{ ConfigOption "host" }}'),
        cm('  b: "1"'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: excluded\n  annotations:\n    kots.io/exclude: "repl{{ ConfigOptionEquals "tls" "0" }}"\n',
      ].join('---\n'),
      { values: { host: { value: 'line one\nkey: [' } } },
    );
    expect(r.dropped).toEqual([
      { source: expect.stringContaining('doc.yaml (document 1)'), error: expect.stringMatching(/^yaml: line \d+:/) },
    ]);
    expect(r.documents.map((d) => d.source)).toEqual([expect.stringContaining('doc.yaml (document 2)')]);
    expect(r.stderr).toMatch(/doc\.yaml \(document 1\): KOTS drops this document/);
    // The value never reaches stderr.
    expect(r.stderr).not.toContain('line one');
  });

  it("why kots/ uses toJson: squote leaves a ' unescaped and the installer refuses the values file", async () => {
    const block = (pipe: string) =>
      `apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  values.yaml: |\n    database:\n      password: repl{{ ConfigOption "host" | ${pipe} }}\n`;
    const password = `it's "q" #x: {y} - z \\`;
    for (const [pipe, accepted] of [
      ['squote', false],
      ['toJson', true],
    ] as const) {
      const r = await renderOne(block(pipe), { values: { host: { value: password } } });
      const file = join(tempDir('kots-values'), 'values.yaml');
      writeFileSync(file, (parse(r.documents[0]!.content) as any).stringData['values.yaml']);
      const v = await runCli([
        'values',
        '--chart',
        chartDir,
        '--values',
        file,
        '--show-secrets',
        '-o',
        'json',
        '--log-level',
        'error',
      ]);
      if (accepted) {
        expect(v.exitCode, v.stderr).toBe(0);
        expect(JSON.parse(v.stdout).database.password).toBe(password);
      } else {
        expect(v.exitCode).toBe(3);
        expect(v.stderr).toContain(`${file}:2: invalid YAML`);
      }
    }
  });

  it('refuses, as KOTS does, while a shown required item has no value and no default', async () => {
    const dir = tempDir('kots-render');
    writeFileSync(
      join(dir, 'config.yaml'),
      `apiVersion: kots.io/v1beta1
kind: Config
metadata: {name: c}
spec:
  groups:
    - name: g
      title: G
      items:
        - {name: tls, title: TLS, type: bool, default: "0"}
        - {name: cert, title: Cert, type: file, required: true, when: 'repl{{ ConfigOptionEquals "tls" "1" }}'}
        - {name: pw, title: Password, type: password, required: true}
        - {name: host, title: Host, type: text, required: true, default: a.example}
`,
    );
    writeFileSync(join(dir, 'doc.yaml'), cm('  a: "1"'));
    const unset = await kotsRender({ namespace: 'shop', files: [dir], values: {} });
    expect(unset.exitCode).toBe(3);
    expect(unset.stderr).toContain(
      'KOTS does not deploy while required config items are unset: pw (give them in --config-values)',
    );
    const shown = await kotsRender({
      namespace: 'shop',
      files: [dir],
      values: { tls: { value: '1' }, pw: { valuePlaintext: 'x' } },
    });
    expect(shown.stderr).toContain('required config items are unset: cert ');
    const ok = await kotsRender({ namespace: 'shop', files: [dir], values: { pw: { valuePlaintext: 'x' } } });
    expect(ok.exitCode, ok.stderr).toBe(0);
  });

  it('fails naming a function KOTS does not have', async () => {
    const dir = tempDir('kots-render');
    writeFileSync(join(dir, 'doc.yaml'), cm('  a: repl{{ NoSuchFunction }}'));
    const r = await kotsRender({ namespace: 'shop', files: [dir] });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/doc\.yaml: failed to get template: .*function "NoSuchFunction" not defined/);
  });

  it('online, private images go through the Replicated proxy under the app slug (RewritePrivateImage)', async () => {
    const dir = tempDir('kots-render');
    writeFileSync(
      join(dir, 'app.yaml'),
      'apiVersion: kots.io/v1beta1\nkind: Application\nmetadata: {name: shopapp}\nspec: {title: Shop}\n',
    );
    writeFileSync(
      join(dir, 'doc.yaml'),
      cm(
        [
          '  a: repl{{ LocalImageName "docker.io/grafana/grafana:7.3.5" }}',
          '  b: repl{{ LocalImageName "nginx" }}',
          '  c: repl{{ LocalImageName "quay.io/org/app:1.0@sha256:0000000000000000000000000000000000000000000000000000000000000000" }}',
          '  d: repl{{ LocalImageName "proxy.example.com/proxy/shopapp/x:1" }}',
        ].join('\n'),
      ),
    );
    const r = await kotsRender({ namespace: 'shop', files: [dir], proxyPrivateImages: 'proxy.example.com' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.documents[0]!.content).toContain(
      [
        '  a: proxy.example.com/proxy/shopapp/docker.io/grafana/grafana:7.3.5',
        '  b: proxy.example.com/proxy/shopapp/nginx:latest',
        '  c: proxy.example.com/proxy/shopapp/quay.io/org/app@sha256:0000000000000000000000000000000000000000000000000000000000000000',
        '  d: proxy.example.com/proxy/shopapp/x:1',
      ].join('\n'),
    );
  });

  it("kots/: the Job's HELM_INSTALLER_APP_SLUG is the app's slug, with and without a local registry", async () => {
    const answers = { database_password: { value: 'pw' } };
    const envOf = (r: Awaited<ReturnType<typeof kotsRender>>) => {
      const job = r.documents.map((d) => parse(d.content)).find((d) => d?.kind === 'Job');
      return Object.fromEntries(
        job.spec.template.spec.containers[0].env.map((e: { name: string; value?: string }) => [e.name, e.value]),
      );
    };
    // The slug KOTS keeps for the app: the Application's name, or a suffixed one (a second app of that name).
    for (const [options, slug] of [
      [{}, 'storefront'],
      [{ appSlug: 'storefront-2' }, 'storefront-2'],
      [
        {
          appSlug: 'storefront-2',
          registry: { host: 'reg.local:5000', namespace: 'shop', username: 'u', password: 'p' },
          airgap: true,
        },
        'storefront-2',
      ],
    ] as const) {
      const r = await kotsRender({ namespace: 'shop', values: answers, ...options });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.dropped).toEqual([]);
      expect(envOf(r).HELM_INSTALLER_APP_SLUG).toBe(slug);
      // The installer installs into the namespace KOTS clears itself: no additionalNamespaces needed.
      expect(envOf(r).HELM_INSTALLER_NAMESPACE).toBe('shop');
      // The Job it runs in (its Events go on it), from its pod's labels: untouched by KOTS's render.
      const env = r.documents.map((d) => parse(d.content)).find((d) => d?.kind === 'Job').spec.template.spec
        .containers[0].env;
      expect(env).toContainEqual({
        name: 'HELM_INSTALLER_JOB_NAME',
        valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/job-name']" } },
      });
      expect(env).toContainEqual({
        name: 'HELM_INSTALLER_JOB_UID',
        valueFrom: { fieldRef: { fieldPath: "metadata.labels['batch.kubernetes.io/controller-uid']" } },
      });
    }
  });

  it('adds the pull secret KOTS creates for a local registry, named after the app slug', async () => {
    const dir = tempDir('kots-render');
    writeFileSync(
      join(dir, 'app.yaml'),
      'apiVersion: kots.io/v1beta1\nkind: Application\nmetadata: {name: shopapp}\nspec: {title: Shop}\n',
    );
    writeFileSync(join(dir, 'doc.yaml'), cm('  a: repl{{ ImagePullSecretName }}'));
    const r = await kotsRender({
      namespace: 'shop',
      files: [dir],
      registry: { host: 'reg.local:5000', username: 'u', password: 'p:w' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.documents[0]!.content).toContain('  a: shopapp-registry');
    const secret = r.documents[1]!.content;
    expect(secret).toContain('name: shopapp-registry');
    const config = /\.dockerconfigjson: (\S+)/.exec(secret)![1]!;
    expect(JSON.parse(Buffer.from(config, 'base64').toString())).toEqual({
      auths: { 'reg.local:5000': { auth: Buffer.from('u:p:w').toString('base64') } },
    });
  });
});
