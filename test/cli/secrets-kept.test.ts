// Secrets kept: a distinct secret is planted through every input (vendor base values, customer
// values, --set, --set-string, --set-json, JSON inside --set, the same through env vars, the
// registry pull secret file, helm args after --), and EVERY byte a run prints (stdout, stderr and
// the termination file) is scanned for each of them, over successful runs and several failure
// paths, at debug log level. References to secrets (existingSecret, imagePullSecrets names)
// must stay readable. Built CLI, real helm, no cluster (the kubeconfig points at a closed port).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';

const dir = tempDir('secrets-kept');
const chart = join(dir, 'vault-shop');
const kubeconfig = join(dir, 'kubeconfig');

const S = {
  base: 'PLANTED-base-values-7f3a',
  baseToken: 'PLANTED-base-token-91c2',
  customer: 'PLANTED-customer-values-4b8e',
  set: 'PLANTED-set-0d17',
  setString: 'PLANTED-set-string-6a20',
  setJson: 'PLANTED-set-json-c3f9',
  jsonInSet: 'PLANTED-json-in-set-58be',
  envSet: 'PLANTED-env-set-2e44',
  envSetString: 'PLANTED-env-set-string-9d05',
  envSetJson: 'PLANTED-env-set-json-71aa',
  pullPassword: 'PLANTED-pull-password-e6d3',
  helmArg: 'PLANTED-helm-arg-3c8f',
  broken: 'PLANTED-in-broken-file-0aa1',
  badJson: 'PLANTED-in-bad-json-b7c4',
} as const;
const pullAuth = Buffer.from(`robot:${S.pullPassword}`).toString('base64');
/** Everything that must never be printed: each secret, and the pull secret's encoded forms. */
const forbidden = [...Object.values(S), pullAuth, `robot:${S.pullPassword}`];

beforeAll(() => {
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: vault-shop\nversion: 0.1.0\nappVersion: "1.0"\n');
  writeFileSync(
    join(chart, 'values.yaml'),
    'db:\n  password: ""\n  existingSecret: ""\nconfig: {}\nimagePullSecrets: []\nrejectPassword: false\n',
  );
  writeFileSync(
    join(chart, 'templates', 'secret.yaml'),
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-db\nstringData:\n  password: {{ .Values.db.password | quote }}\n',
  );
  writeFileSync(
    join(chart, 'templates', 'deployment.yaml'),
    [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: {{ .Release.Name }}-web}',
      'spec:',
      '  selector: {matchLabels: {app: web}}',
      '  template:',
      '    metadata: {labels: {app: web}}',
      '    spec:',
      '      {{- with .Values.imagePullSecrets }}',
      '      imagePullSecrets: {{ toJson . }}',
      '      {{- end }}',
      '      containers: [{name: web, image: "docker.io/library/nginx:1.27"}]',
      '',
    ].join('\n'),
  );
  // A template that echoes a value in helm's own error text, as a vendor's `fail` often does.
  writeFileSync(
    join(chart, 'templates', 'reject.yaml'),
    '{{- if .Values.rejectPassword }}{{ fail (printf "database password %q is too weak" .Values.db.password) }}{{- end }}\n',
  );
  writeFileSync(join(chart, 'templates', 'NOTES.txt'), 'vault-shop installed\n');
  mkdirSync(join(dir, 'base'));
  writeFileSync(join(dir, 'base', 'base.yaml'), `db:\n  password: ${S.base}\nconfig:\n  token: "${S.baseToken}"\n`);
  writeFileSync(
    join(dir, 'customer.yaml'),
    `db:\n  password: '${S.customer}'\n  existingSecret: my-db-credentials\nimagePullSecrets:\n  - name: regcred-name\n`,
  );
  writeFileSync(join(dir, 'broken.yaml'), `db:\n  password: "${S.broken}\n  other: [1, 2\n`);
  writeFileSync(
    join(dir, 'pull-secret.json'),
    JSON.stringify({ auths: { '127.0.0.1:1': { auth: pullAuth, password: S.pullPassword } } }),
  );
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`,
  );
});

const common = () => [
  '--chart',
  chart,
  '--base-values',
  join(dir, 'base'),
  '--values',
  join(dir, 'customer.yaml'),
  '--log-level',
  'debug',
];
const viaFlags = () => [
  '--set',
  `db.password=${S.set}`,
  '--set',
  `extra={"privateKey":"${S.jsonInSet}"}`,
  '--set-string',
  `config.apiKey=${S.setString}`,
  '--set-json',
  `config.auth={"clientSecret":"${S.setJson}","user":"app"}`,
];
const viaEnv = (): Record<string, string> => ({
  HELM_INSTALLER_SET: `config.password=${S.envSet}`,
  HELM_INSTALLER_SET_STRING: `config.secretToken=${S.envSetString}`,
  HELM_INSTALLER_SET_JSON: `more={"apiKey":"${S.envSetJson}"}`,
});

interface Run {
  exitCode: number;
  printed: string;
  stdout: string;
}

async function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const termination = join(dir, `termination-${Math.random().toString(36).slice(2)}`);
  writeFileSync(termination, '');
  const r = await runCli(args, {
    timeoutMs: 120_000,
    env: { KUBECONFIG: kubeconfig, HELM_INSTALLER_TERMINATION_LOG: termination, ...env },
  });
  return {
    exitCode: r.exitCode,
    stdout: r.stdout,
    printed: [r.stdout, r.stderr, readFileSync(termination, 'utf8')].join('\n'),
  };
}

function expectNoSecret(r: Run) {
  for (const secret of forbidden)
    expect(r.printed.includes(secret), `${secret} was printed:\n${r.printed.slice(0, 3000)}`).toBe(false);
}

describe('no planted secret is ever printed', () => {
  for (const [label, extra, env] of [
    ['flags', viaFlags, () => ({})],
    ['env vars', () => [], viaEnv],
  ] as const) {
    describe(`secrets given through ${label}`, () => {
      it('values (yaml): exit 0, secrets masked, references readable', async () => {
        const r = await run(['values', ...common(), ...extra()], env());
        expect(r.exitCode, r.printed).toBe(0);
        expectNoSecret(r);
        expect(r.stdout).toContain('existingSecret: my-db-credentials');
        expect(r.stdout).toContain('name: regcred-name');
        expect(r.stdout).toContain('password: "[REDACTED]"');
      });

      it('values --explain -o json: exit 0', async () => {
        const r = await run(['values', '--explain', ...common(), ...extra()], env());
        expect(r.exitCode, r.printed).toBe(0);
        expectNoSecret(r);
        expect(r.stdout).toMatch(/^db\.existingSecret = "my-db-credentials"/m);
      });

      it('images: exit 0', async () => {
        const r = await run(['images', ...common(), ...extra()], env());
        expect(r.exitCode, r.printed).toBe(0);
        expectNoSecret(r);
        expect(r.stdout).toBe('docker.io/library/nginx:1.27');
      });

      it('install, cluster unreachable: exit 5', async () => {
        const r = await run(['install', ...common(), ...extra(), '--', '--set', `db.password=${S.helmArg}`], env());
        expect(r.exitCode, r.printed).toBe(5);
        expectNoSecret(r);
        expect(r.printed).toContain('"argv"');
      });

      it("install, helm's error echoes the password: exit 3", async () => {
        const r = await run(['install', ...common(), ...extra(), '--set', 'rejectPassword=true'], env());
        expect(r.exitCode, r.printed).toBe(3);
        expectNoSecret(r);
        expect(r.printed).toContain('database password "[REDACTED]" is too weak');
      });

      it('install, registry preflight with the pull secret: exit 6', async () => {
        const r = await run(
          [
            'install',
            ...common(),
            ...extra(),
            '--registry',
            '127.0.0.1:1',
            '--pull-secret-file',
            join(dir, 'pull-secret.json'),
          ],
          env(),
        );
        expect(r.exitCode, r.printed).toBe(6);
        expectNoSecret(r);
      });

      it('install, a values file that does not parse: exit 3', async () => {
        const r = await run(['install', ...common(), ...extra(), '--values', join(dir, 'broken.yaml')], env());
        expect(r.exitCode, r.printed).toBe(3);
        expectNoSecret(r);
        expect(r.printed).toMatch(/broken\.yaml:\d+/);
      });

      it('install, invalid JSON in --set-json and a bad option: exit 2', async () => {
        const r = await run(
          ['install', ...common(), ...extra(), '--set-json', `db={"password":"${S.badJson}"`, '--timeout', 'soon'],
          env(),
        );
        expect(r.exitCode, r.printed).toBe(2);
        expectNoSecret(r);
        expect(r.printed).toContain('not valid JSON');
      });
    });
  }
});
