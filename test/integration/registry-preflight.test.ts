// The registry check against a real registry: Debian's docker-registry (Distribution 2.8) on
// loopback, anonymous, behind htpasswd, and behind TLS with a private CA.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { checkImagesExist } from '../../src/registry/registry-preflight.js';
import { PreflightError } from '../../src/common/errors.js';
import { pushTestImage, registryAvailable, startRegistry, type TestRegistry } from '../images/registry.js';

const creds = { user: 'kots', password: 'pa:ss word' };
const dockerConfig = (host: string, user: string, password: string) =>
  JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${user}:${password}`).toString('base64') } } });

const registries: TestRegistry[] = [];
let open: TestRegistry;
let locked: TestRegistry;
let tls: TestRegistry;
let digest: string;

beforeAll(async () => {
  if (!registryAvailable()) {
    throw new Error(
      'These tests need Debian packages docker-registry and apache2-utils: apt-get install -y docker-registry apache2-utils',
    );
  }
  [open, locked, tls] = await Promise.all([
    startRegistry(),
    startRegistry({ htpasswd: creds }),
    startRegistry({ tls: true, htpasswd: creds }),
  ]);
  registries.push(open, locked, tls);
  digest = await pushTestImage(open, 'app/web', '1.0.0');
  await pushTestImage(open, 'app/worker', '2');
  await pushTestImage(locked, 'app/web', '1.0.0', creds);
  await pushTestImage(tls, 'app/web', '1.0.0', creds);
});
afterAll(async () => {
  await Promise.all(registries.map((r) => r.stop()));
});

describe('checkImagesExist against docker-registry', () => {
  it('tells present images from missing ones (tag and repository)', async () => {
    const result = await checkImagesExist([
      `${open.host}/app/web:1.0.0`,
      `${open.host}/app/worker:2`,
      `${open.host}/app/web:9.9`,
      `${open.host}/app/nothing:1`,
    ]);
    expect(result.present).toEqual([`${open.host}/app/web:1.0.0`, `${open.host}/app/worker:2`]);
    expect(result.missing.map((m) => [m.image, m.status])).toEqual([
      [`${open.host}/app/web:9.9`, 404],
      [`${open.host}/app/nothing:1`, 404],
    ]);
  });

  it('checks digest references, with and without a tag', async () => {
    const other = `sha256:${'0'.repeat(64)}`;
    const result = await checkImagesExist([
      `${open.host}/app/web@${digest}`,
      `${open.host}/app/web:1.0.0@${digest}`,
      `${open.host}/app/web@${other}`,
    ]);
    expect(result.present).toEqual([`${open.host}/app/web@${digest}`, `${open.host}/app/web:1.0.0@${digest}`]);
    expect(result.missing).toEqual([expect.objectContaining({ image: `${open.host}/app/web@${other}`, status: 404 })]);
  });

  it('uses htpasswd credentials from the dockerconfigjson, and reports bad ones', async () => {
    const image = `${locked.host}/app/web:1.0.0`;
    expect(
      (await checkImagesExist([image], { dockerConfigJson: dockerConfig(locked.host, creds.user, creds.password) }))
        .present,
    ).toEqual([image]);
    const bad = await checkImagesExist([image], { dockerConfigJson: dockerConfig(locked.host, creds.user, 'wrong') });
    expect(bad.missing).toEqual([{ image, status: 401, reason: expect.stringMatching(/refused the credentials/) }]);
    expect((await checkImagesExist([image])).missing[0]!.reason).toMatch(/has none for it/);
  });

  it('trusts a TLS registry through the CA file', async () => {
    const image = `${tls.host}/app/web:1.0.0`;
    const options = {
      dockerConfigJson: dockerConfig(tls.host, creds.user, creds.password),
      plainHttpHosts: [] as string[],
    };
    expect(
      (await checkImagesExist([image, `${tls.host}/app/web:2`], { ...options, caFile: tls.caFile })).missing.map(
        (m) => m.status,
      ),
    ).toEqual([404]);
    const untrusted = (await checkImagesExist([image], options).catch((e: unknown) => e)) as PreflightError;
    expect(untrusted).toBeInstanceOf(PreflightError);
    expect(untrusted.message).toContain(tls.host);
    expect(untrusted.hint).toMatch(/caFile/);
  });
});
