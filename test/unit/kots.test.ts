// kots/ against the published KOTS schemas, and against the rest of the project: every config
// item the Job's templates read exists, and the Job's failure policy matches the exit codes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ExitCode } from '../../src/errors.js';
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
    expect(validate('application-kots-v1beta1.json', { ...app, spec: { ...app.spec, additionalImages: 'nginx' } })).not.toEqual([]);
  });

  it('every ConfigOption the installer Job reads is a config item', () => {
    const [config] = docs('kots-config.yaml');
    const items = new Set(config.spec.groups.flatMap((g: any) => g.items.map((i: any) => i.name)));
    const used = [...read('installer-job.yaml').matchAll(/ConfigOption(?:Equals)? "([a-z_]+)"/g)].map((m) => m[1]);
    expect(used.length).toBeGreaterThan(4);
    for (const name of used) expect(items, name).toContain(name);
    const password = config.spec.groups.flatMap((g: any) => g.items).find((i: any) => i.name === 'database_password');
    expect(password.type).toBe('password');
    // The password goes to a Secret, not the ConfigMap.
    const objects = docs('installer-job.yaml');
    expect(objects.find((o) => o.kind === 'ConfigMap').data['values.yaml']).not.toContain('database_password');
    expect(objects.find((o) => o.kind === 'Secret').stringData['values.yaml']).toContain('database_password');
  });

  it("the Job's podFailurePolicy fails at once exactly on the exit codes a retry cannot fix", () => {
    const job = docs('installer-job.yaml').find((o) => o.kind === 'Job');
    const failJob = job.spec.podFailurePolicy.rules.find((r: any) => r.action === 'FailJob').onExitCodes.values;
    expect([...failJob].sort()).toEqual(Object.values(ExitCode).filter((c) => c !== 0 && c !== ExitCode.transient && c !== ExitCode.releaseBusy).sort());
    expect(job.spec.template.spec.containers[0].terminationMessagePolicy).toBe('FallbackToLogsOnError');
  });

  it("the Application lists every image the chart deploys (the vendor's CI check)", async () => {
    const r = await runCli(['images', '--image-path', 'Promotion:spec.image', '--check', join(repoRoot, 'kots', 'kots-app.yaml')]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/all 8 images are listed/);
  });
});
