import { describe, expect, it } from 'vitest';
import { isSecretKey, MASK, maskSetExpression, SecretRegistry } from '../../src/secrets.js';
import { maskHelmArgs } from '../../src/context.js';

describe('secrets', () => {
  it('recognises secret-looking keys and not ordinary ones', () => {
    for (const k of ['password', 'dbPassword', 'apiKey', 'api_key', 'token', 'clientSecret', 'privateKey', 'licenseKey']) expect(isSecretKey(k)).toBe(true);
    for (const k of ['replicaCount', 'image', 'hostname', 'storage']) expect(isSecretKey(k)).toBe(false);
  });

  it('masks values under secret keys at any depth and in free text', () => {
    const s = new SecretRegistry();
    s.collectFrom({ db: { auth: { user: 'app', pass: 'p@ssw0rd!' } }, host: 'shop.example' });
    expect(s.maskTree({ db: { auth: { user: 'app', pass: 'p@ssw0rd!' } } })).toEqual({ db: { auth: { user: MASK, pass: MASK } } });
    expect(s.maskText('connect with p@ssw0rd! to shop.example')).toBe(`connect with ${MASK} to shop.example`);
  });

  it('masks --set values of secret keys in argv', () => {
    const s = new SecretRegistry();
    expect(maskSetExpression('a=1,db.password=abcd1234,b=2', s)).toBe(`a=1,db.password=${MASK},b=2`);
    expect(maskHelmArgs(['upgrade', '--set', 'token=zzzz9999', '-f', 'x.yaml'], s)).toEqual(['upgrade', '--set', `token=${MASK}`, '-f', 'x.yaml']);
    expect(s.maskText('echo zzzz9999')).toBe(`echo ${MASK}`);
  });
});
