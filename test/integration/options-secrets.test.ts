// Against the local control plane: a boolean env var means what it says (HELM_INSTALLER_DRY_RUN
// =false installs, =true installs nothing), and a SUCCESSFUL install and upgrade, at debug log
// level, print none of the secrets planted through every input (stdout, stderr, termination
// file), while helm really received them (read back from the release).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { history, install, releaseRecord } from './cluster-helpers.js';

const dir = tempDir('options-secrets');
const chart = join(dir, 'vault-shop');
const namespace = `opts-secrets-${Date.now().toString(36)}`;

const S = {
  base: 'PLANTED-int-base-5c1e',
  customer: 'PLANTED-int-customer-8e02',
  set: 'PLANTED-int-set-71b4',
  setString: 'PLANTED-int-set-string-0f9a',
  setJson: 'PLANTED-int-set-json-d62c',
  envSet: 'PLANTED-int-env-set-3a7d',
  envSetJson: 'PLANTED-int-env-set-json-b845',
  helmArg: 'PLANTED-int-helm-arg-2e90',
} as const;

beforeAll(() => {
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: vault-shop\nversion: 0.1.0\n');
  writeFileSync(join(chart, 'values.yaml'), 'db:\n  password: ""\n  existingSecret: ""\nconfig: {}\n');
  writeFileSync(
    join(chart, 'templates', 'secret.yaml'),
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-db\nstringData:\n  values.json: {{ toJson .Values | quote }}\n',
  );
  writeFileSync(
    join(chart, 'templates', 'NOTES.txt'),
    'vault-shop {{ if .Release.IsInstall }}installed{{ else }}upgraded{{ end }}\n',
  );
  mkdirSync(join(dir, 'base'));
  writeFileSync(join(dir, 'base', 'base.yaml'), `db:\n  password: ${S.base}\n`);
  writeFileSync(join(dir, 'customer.yaml'), `db:\n  password: '${S.customer}'\n  existingSecret: my-db-credentials\n`);
});

async function run(release: string, args: string[], env: Record<string, string>) {
  const termination = join(dir, `termination-${release}-${Date.now()}`);
  writeFileSync(termination, '');
  const r = await install(
    release,
    namespace,
    [
      '--chart',
      chart,
      '--base-values',
      join(dir, 'base'),
      '--values',
      join(dir, 'customer.yaml'),
      '--log-level',
      'debug',
      ...args,
    ],
    {
      HELM_INSTALLER_TERMINATION_LOG: termination,
      ...env,
    },
  );
  const printed = [r.stdout, r.stderr, readFileSync(termination, 'utf8')].join('\n');
  for (const secret of Object.values(S))
    expect(printed.includes(secret), `${secret} was printed:\n${printed.slice(0, 3000)}`).toBe(false);
  return { ...r, printed };
}

describe('options and secrets on a real install', () => {
  it('HELM_INSTALLER_DRY_RUN=true installs nothing', async () => {
    const r = await run('dry', [], { HELM_INSTALLER_DRY_RUN: 'true' });
    expect(r.exitCode, r.printed).toBe(0);
    expect(await history('dry', namespace)).toEqual([]);
  });

  it('HELM_INSTALLER_DRY_RUN=false installs; install and upgrade print no planted secret; helm got them all', async () => {
    const first = await run(
      'shop',
      [
        '--set',
        `config.password=${S.set}`,
        '--set-string',
        `config.apiKey=${S.setString}`,
        '--set-json',
        `config.auth={"clientSecret":"${S.setJson}"}`,
        '--',
        '--set',
        `config.token=${S.helmArg}`,
      ],
      { HELM_INSTALLER_DRY_RUN: 'false' },
    );
    expect(first.exitCode, first.printed).toBe(0);
    expect(first.printed).toContain('vault-shop installed');
    expect((await history('shop', namespace)).map((h) => h.status)).toEqual(['deployed']);
    const config = (await releaseRecord('shop', namespace)).config as {
      db: { password: string };
      config: Record<string, unknown>;
    };
    expect(config.db.password).toBe(S.customer);
    expect(config.config).toEqual({
      password: S.set,
      apiKey: S.setString,
      auth: { clientSecret: S.setJson },
      token: S.helmArg,
    });

    const second = await run('shop', [], {
      HELM_INSTALLER_DRY_RUN: '0',
      HELM_INSTALLER_SET: `config.password=${S.envSet}`,
      HELM_INSTALLER_SET_JSON: `more={"apiKey":"${S.envSetJson}"}`,
    });
    expect(second.exitCode, second.printed).toBe(0);
    expect(second.printed).toContain('vault-shop upgraded');
    expect((await history('shop', namespace)).map((h) => h.status)).toEqual(['superseded', 'deployed']);
  });
});
