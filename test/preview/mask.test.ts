// Secrets in the plan's diffs (src/preview/mask.ts): a value is replaced on both sides by a marker
// that says whether it changed, never by the value, its length or a hash.
import { describe, expect, it } from 'vitest';
import { maskPair } from '../../src/preview/mask.js';

const secret = (data: Record<string, string>, stringData?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db', namespace: 'shop', labels: { app: 'db' } },
  type: 'Opaque',
  data,
  ...(stringData ? { stringData } : {}),
});

describe('maskPair', () => {
  it("marks each of a Secret's values unchanged, changed, added or removed, and keeps its metadata and type", () => {
    const live = secret({ user: 'YWRtaW4=', password: 'aHVudGVyMg==', old: 'eA==' });
    const desired = secret({ user: 'YWRtaW4=', password: 'czNjcjN0', fresh: 'eQ==' });
    expect(maskPair('Secret', live, desired)).toEqual({
      live: secret({ user: '(secret, unchanged)', password: '(secret)', old: '(secret, removed)' }),
      desired: secret({ user: '(secret, unchanged)', password: '(secret, changed)', fresh: '(secret, added)' }),
    });
  });

  it('masks stringData and a data map one side lacks, leaf by leaf', () => {
    const live = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'shop', labels: { app: 'db' } },
      type: 'Opaque',
    };
    const desired = secret({ token: 'dA==' }, { extra: 'plain-text-secret' });
    expect(maskPair('Secret', live, desired)).toEqual({
      live: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db', namespace: 'shop', labels: { app: 'db' } },
        type: 'Opaque',
      },
      desired: secret({ token: '(secret, added)' }, { extra: '(secret, added)' }),
    });
  });

  it('leaves a switch under a secret-looking key readable, but not a boolean in a Secret', () => {
    const sa = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'web' },
      automountServiceAccountToken: false,
      apiToken: 'abc',
    };
    expect(maskPair('ServiceAccount', undefined, sa)).toEqual({ desired: { ...sa, apiToken: '(secret)' } });
    const flag = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, data: { enabled: true } };
    expect(maskPair('Secret', undefined, flag)).toEqual({ desired: { ...flag, data: { enabled: '(secret)' } } });
  });

  it('marks every secret of a created or deleted object just (secret)', () => {
    expect(maskPair('Secret', undefined, secret({ password: 'aHVudGVyMg==' }))).toEqual({
      desired: secret({ password: '(secret)' }),
    });
    expect(maskPair('Secret', secret({ password: 'aHVudGVyMg==' }), undefined)).toEqual({
      live: secret({ password: '(secret)' }),
    });
  });

  it("masks a ConfigMap's password key but not its other keys nor a password inside another key's value", () => {
    const cm = (password: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings' },
      data: { mode: 'prod', password, 'app.properties': 'db.password=in-clear\n' },
    });
    expect(maskPair('ConfigMap', cm('one'), cm('two'))).toEqual({
      live: { ...cm('(secret)') },
      desired: { ...cm('(secret, changed)') },
    });
  });

  it('masks every field of an env item named like a secret but its name, and keeps secret references readable', () => {
    const pod = (value: string) => ({
      spec: {
        containers: [
          {
            name: 'web',
            env: [
              { name: 'MODE', value: 'prod' },
              { name: 'DB_PASSWORD', value },
              { name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } },
            ],
          },
        ],
      },
    });
    const masked = (v: string) => ({
      spec: {
        containers: [
          {
            name: 'web',
            env: [
              { name: 'MODE', value: 'prod' },
              { name: 'DB_PASSWORD', value: v },
              { name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } },
            ],
          },
        ],
      },
    });
    expect(maskPair('Deployment', pod('old'), pod('new'))).toEqual({
      live: masked('(secret)'),
      desired: masked('(secret, changed)'),
    });
  });

  it('masks a whole map under a secret-looking key but the keys in it that name a secret, unless a secret key is under those', () => {
    const values = (password: string) => ({
      auth: { user: 'admin', password, existingSecret: 'db-auth' },
      passwords: [{ name: 'root', value: password }],
      credentials: { secretName: { password } },
    });
    const masked = (marker: string) => ({
      auth: { user: marker, password: marker, existingSecret: 'db-auth' },
      passwords: [{ name: 'root', value: marker }],
      credentials: { secretName: { password: marker } },
    });
    expect(maskPair('HelmChartConfig', values('a'), values('a'))).toEqual({
      live: masked('(secret, unchanged)'),
      desired: masked('(secret, unchanged)'),
    });
  });

  it("masks every value of a Secret's data, keys that look like references included", () => {
    const data = { name: 'cm9vdA==', existingSecret: 'eA==', secretKeyRef: 'eQ==' };
    expect(maskPair('Secret', secret(data), secret(data))).toEqual({
      live: secret({
        name: '(secret, unchanged)',
        existingSecret: '(secret, unchanged)',
        secretKeyRef: '(secret, unchanged)',
      }),
      desired: secret({
        name: '(secret, unchanged)',
        existingSecret: '(secret, unchanged)',
        secretKeyRef: '(secret, unchanged)',
      }),
    });
  });

  it("masks kubectl's last-applied annotation", () => {
    const annotated = (v: string) => ({
      metadata: { name: 'x', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': v, team: 'a' } },
    });
    expect(maskPair('ConfigMap', annotated('{"data":{"k":"v"}}'), annotated('{}'))).toEqual({
      live: {
        metadata: {
          name: 'x',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '(secret)', team: 'a' },
        },
      },
      desired: {
        metadata: {
          name: 'x',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '(secret, changed)', team: 'a' },
        },
      },
    });
  });

  it('does not modify its inputs', () => {
    const live = secret({ password: 'aHVudGVyMg==' });
    maskPair('Secret', live, secret({ password: 'eA==' }));
    expect(live.data).toEqual({ password: 'aHVudGVyMg==' });
  });
});
