import { describe, expect, it } from 'vitest';
import { isSecretKey, MASK, SecretRegistry } from '../../src/common/secrets.js';
import { maskSetExpression } from '../../src/options/set-expressions.js';
import { maskHelmArgs } from '../../src/run/base-context.js';

describe('secrets', () => {
  it('recognises secret-looking keys and not ordinary ones', () => {
    for (const k of [
      'password',
      'dbPassword',
      'apiKey',
      'api_key',
      'token',
      'clientSecret',
      'privateKey',
      'licenseKey',
    ])
      expect(isSecretKey(k)).toBe(true);
    for (const k of ['replicaCount', 'image', 'hostname', 'storage']) expect(isSecretKey(k)).toBe(false);
  });

  it('masks values under secret keys at any depth and in free text', () => {
    const s = new SecretRegistry();
    s.collectFrom({ db: { auth: { user: 'app', pass: 'p@ssw0rd!' } }, host: 'shop.example' });
    expect(s.maskTree({ db: { auth: { user: 'app', pass: 'p@ssw0rd!' } } })).toEqual({
      db: { auth: { user: MASK, pass: MASK } },
    });
    expect(s.maskText('connect with p@ssw0rd! to shop.example')).toBe(`connect with ${MASK} to shop.example`);
  });

  it('masks --set values of secret keys in argv', () => {
    const s = new SecretRegistry();
    expect(maskSetExpression('a=1,db.password=abcd1234,b=2', s)).toBe(`a=1,db.password=${MASK},b=2`);
    expect(maskHelmArgs(['upgrade', '--set', 'token=zzzz9999', '-f', 'x.yaml'], s)).toEqual([
      'upgrade',
      '--set',
      `token=${MASK}`,
      '-f',
      'x.yaml',
    ]);
    expect(s.maskText('echo zzzz9999')).toBe(`echo ${MASK}`);
  });

  it('keeps references to secrets readable, and booleans under auth', () => {
    for (const k of [
      'existingSecret',
      'imagePullSecrets',
      'pullSecrets',
      'secretName',
      'tlsSecretName',
      'secretPasswordKey',
      'existingSecretPasswordKey',
      'usePasswordFiles',
      'passwordFile',
    ]) {
      expect(isSecretKey(k), k).toBe(false);
    }
    for (const k of ['secretKey', 'accessKey', 'clientSecret', 'password', 'auth'])
      expect(isSecretKey(k), k).toBe(true);
    const s = new SecretRegistry();
    expect(
      s.maskTree({
        auth: { enabled: true, password: 'hunter22', existingSecret: 'my-db' },
        imagePullSecrets: [{ name: 'regcred' }],
      }),
    ).toEqual({
      auth: { enabled: true, password: MASK, existingSecret: 'my-db' },
      imagePullSecrets: [{ name: 'regcred' }],
    });
  });

  it('masks whole maps only under secret containers (auth, secret, credentials), as public charts use them', () => {
    const s = new SecretRegistry();
    // Shapes from bitnami/postgresql, argo-cd (configs.secret, notifications.secret) and oauth2 proxies.
    expect(
      s.maskTree({
        auth: {
          username: 'app',
          database: 'shop',
          postgresPassword: 'pg-pass-1',
          existingSecret: '',
          secretKeys: { adminPasswordKey: 'postgres-password' },
        },
        configs: { secret: { createSecret: true, githubSecret: 'gh-hook-2', extra: { 'webhook.token': 'wh-3' } } },
        notifications: { secret: { name: 'argocd-notifications-secret', create: true } },
        authProxy: {
          image: { repository: 'oauth2-proxy', tag: 'v7' },
          clientSecret: 'cs-4',
          extraEnvVarsSecret: 'proxy-env',
        },
        prometheusOperator: { secretFieldSelector: 'type!=kubernetes.io/dockercfg' },
      }),
    ).toEqual({
      auth: {
        username: MASK,
        database: MASK,
        postgresPassword: MASK,
        existingSecret: '',
        secretKeys: { adminPasswordKey: 'postgres-password' },
      },
      configs: { secret: { createSecret: true, githubSecret: MASK, extra: { 'webhook.token': MASK } } },
      notifications: { secret: { name: 'argocd-notifications-secret', create: true } },
      authProxy: {
        image: { repository: 'oauth2-proxy', tag: 'v7' },
        clientSecret: MASK,
        extraEnvVarsSecret: 'proxy-env',
      },
      prometheusOperator: { secretFieldSelector: 'type!=kubernetes.io/dockercfg' },
    });
  });

  it('finds secrets inside --set-json, JSON in --set and helm lists, and masks them in argv', () => {
    const s = new SecretRegistry();
    expect(maskSetExpression('db={"password":"pw-json-1","user":"app"}', s, 'set-json')).toBe(
      `db={"password":"${MASK}","user":"app"}`,
    );
    expect(maskSetExpression('cfg={"apiKey":"key-in-set-2"}', s, 'set')).toBe(`cfg={"apiKey":"${MASK}"}`);
    expect(maskSetExpression('tokens={tok-aaaa,tok-bbbb}', s, 'set')).toBe(`tokens=${MASK}`);
    expect(maskHelmArgs(['upgrade', '--set-json=db={"password":"pw-json-3"}'], s)).toEqual([
      'upgrade',
      `--set-json=db={"password":"${MASK}"}`,
    ]);
    expect(s.maskText('pw-json-1 key-in-set-2 tok-aaaa tok-bbbb pw-json-3')).toBe(Array(5).fill(MASK).join(' '));
    // Invalid JSON: the value after a secret-looking key is still found.
    maskSetExpression('db={"password":"pw-broken-4"', s, 'set-json');
    expect(s.maskText('echo pw-broken-4')).toBe(`echo ${MASK}`);
  });
});
