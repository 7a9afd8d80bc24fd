// kots/ against the published KOTS schemas, and against the rest of the project: every config
// item the Job's templates read exists, and the Job's failure policy matches the exit codes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ExitCode } from '../../src/common/exit-codes.js';
import { repoRoot, runCli } from '../helpers.js';

const schemaDir = join(repoRoot, 'test', 'fixtures', 'kots-schemas');
const read = (file: string) => readFileSync(join(repoRoot, 'kots', file), 'utf8');
const docs = (file: string) =>
  parseAllDocuments(read(file)).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as any;
  });

function validate(schemaFile: string, data: unknown): string[] {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const check = ajv.compile(JSON.parse(readFileSync(join(schemaDir, schemaFile), 'utf8')));
  return check(data) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

describe('kots/', () => {
  it('the Application and the Config follow the KOTS schemas', () => {
    const [app] = docs('kots-app.yaml');
    expect(app.kind).toBe('Application');
    expect(validate('application-kots-v1beta1.json', app)).toEqual([]);
    const [config] = docs('kots-config.yaml');
    expect(config.kind).toBe('Config');
    expect(validate('config-kots-v1beta1.json', config)).toEqual([]);
    // The schemas are strict enough to catch a wrong type.
    expect(
      validate('application-kots-v1beta1.json', { ...app, spec: { ...app.spec, additionalImages: 'nginx' } }),
    ).not.toEqual([]);
  });

  it('every ConfigOption the KOTS files read is a config item, and every item is read', () => {
    const [config] = docs('kots-config.yaml');
    const items = new Set(config.spec.groups.flatMap((g: any) => g.items.map((i: any) => i.name)));
    const used = ['installer-job.yaml', 'kots-app.yaml', 'kots-config.yaml'].flatMap((f) =>
      [...read(f).matchAll(/ConfigOption\w* "([a-z_]+)"/g)].map((m) => m[1]),
    );
    for (const name of used) expect(items, name).toContain(name);
    // An item no template reads is a question whose answer goes nowhere.
    const readByJob = new Set(
      [...read('installer-job.yaml').matchAll(/ConfigOption\w* "([a-z_]+)"/g)].map((m) => m[1]),
    );
    expect([...items].filter((i) => !readByJob.has(i as string))).toEqual([]);
    const password = config.spec.groups.flatMap((g: any) => g.items).find((i: any) => i.name === 'database_password');
    expect(password.type).toBe('password');
    // The password goes to a Secret, not the ConfigMap.
    const objects = docs('installer-job.yaml');
    expect(objects.find((o) => o.kind === 'ConfigMap').data['storefront.yaml']).not.toContain('database_password');
    expect(objects.find((o) => o.kind === 'Secret').stringData['storefront.yaml']).toContain('database_password');
  });

  it('the webhook URL is a password item that reaches the Job only as a file from its own Secret', () => {
    const [config] = docs('kots-config.yaml');
    const items = config.spec.groups.flatMap((g: any) => g.items);
    expect(items.find((i: any) => i.name === 'notify_url').type).toBe('password');
    expect(items.find((i: any) => i.name === 'notify_format').items.map((i: any) => i.name)).toEqual(['json', 'slack']);
    const objects = docs('installer-job.yaml');
    const readers = objects.filter((o) => JSON.stringify(o).includes('notify_url'));
    expect(readers.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Secret/storefront-notify']);
    const pod = objects.find((o) => o.kind === 'Job').spec.template.spec;
    const container = pod.containers[0];
    expect(container.env.filter((e: any) => e.name.startsWith('HELM_INSTALLER_NOTIFY_URL'))).toEqual([
      { name: 'HELM_INSTALLER_NOTIFY_URL_FILE', value: '/config/notify/url' },
    ]);
    expect(container.volumeMounts).toContainEqual({ name: 'notify', mountPath: '/config/notify', readOnly: true });
    expect(pod.volumes).toContainEqual({ name: 'notify', secret: { secretName: 'storefront-notify' } });
  });

  it('prints every free-text answer through toJson (any string survives; squote does not escape a quote)', () => {
    const [config] = docs('kots-config.yaml');
    const freeText = new Set(
      config.spec.groups
        .flatMap((g: any) => g.items)
        .filter((i: any) => ['text', 'textarea', 'password'].includes(i.type ?? 'text'))
        .map((i: any) => i.name),
    );
    const actions = [...read('installer-job.yaml').matchAll(/repl\{\{(.*?)\}\}/g)].map((m) => m[1]!.trim());
    const printing = actions.filter((a) =>
      [...a.matchAll(/ConfigOption "([a-z_]+)"/g)].some((m) => freeText.has(m[1])),
    );
    expect(printing.length).toBeGreaterThan(4);
    // web_replicas is validated as digits by the Config and printed as a number.
    for (const a of printing) expect(a, a).toMatch(/\| (toJson|ParseInt)$/);
    expect(actions.filter((a) => /\bs?quote\b/.test(a))).toEqual([]);
    // The other delimiter's output is parsed again by KOTS: not used.
    expect(read('installer-job.yaml')).not.toContain('{{repl');
  });

  it('a template that yields a string is quoted where YAML could read another type (a namespace named 123 or on)', () => {
    // A value that is only a template: quoted, or a template that yields JSON, a number or a boolean on purpose.
    const typed =
      /^repl\{\{ (?:.*\| toJson|ConfigOptionEquals |ConfigOptionNotEquals |and \(|ConfigOption "[a-z_]+" \| ParseInt)/;
    const unquoted = ['installer-job.yaml', 'kots-app.yaml', 'kots-config.yaml'].flatMap((file) =>
      read(file)
        .split('\n')
        .flatMap((line, i) => {
          const value = /^\s*(?:-\s+)?[\w.-]+:\s+(repl\{\{.*)$/.exec(line)?.[1];
          return value !== undefined && !typed.test(value) ? [`${file}:${i + 1}: ${line.trim()}`] : [];
        }),
    );
    expect(unquoted).toEqual([]);
  });

  it('the Job is named per release, keeps a failed run readable, and its image is in the airgap bundle', () => {
    const raw = read('installer-job.yaml');
    expect(raw).toMatch(/^  name: storefront-installer-repl\{\{ Sequence \}\}$/m);
    const job = docs('installer-job.yaml').find((o) => o.kind === 'Job');
    // hook-failed would delete the Job between a failed attempt and its retry (KOTS's informer
    // deletes on active == 0 && failed > 0).
    expect(job.metadata.annotations['kots.io/hook-delete-policy']).toBe('hook-succeeded');
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThanOrEqual(86400);
    const image = /image: 'repl\{\{ LocalImageName "([^"]+)" \}\}'/.exec(raw)?.[1];
    expect(image).toBe('ghcr.io/acme-shop/storefront-installer:1.4.0');
    const [app] = docs('kots-app.yaml');
    expect(app.spec.additionalImages).toContain(image);
  });

  it("the Job's podFailurePolicy fails at once exactly on the exit codes a retry cannot fix", () => {
    const job = docs('installer-job.yaml').find((o) => o.kind === 'Job');
    const failJob = job.spec.podFailurePolicy.rules.find((r: any) => r.action === 'FailJob').onExitCodes.values;
    expect([...failJob].sort()).toEqual(
      Object.values(ExitCode)
        .filter((c) => c !== 0 && c !== ExitCode.transient && c !== ExitCode.releaseBusy)
        .sort(),
    );
    expect(job.spec.template.spec.containers[0].terminationMessagePolicy).toBe('FallbackToLogsOnError');
  });

  it("the Application lists every image the chart deploys (the vendor's CI check)", async () => {
    const r = await runCli([
      'images',
      '--image-path',
      'Promotion:spec.image',
      '--check',
      join(repoRoot, 'kots', 'kots-app.yaml'),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/all 8 images are listed/);
  });
});
