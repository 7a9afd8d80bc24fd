// The registry check's HTTP protocol against a tiny scripted server on 127.0.0.1: anonymous,
// Basic, Bearer token flow, 404, and an unreachable registry.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { parseDockerConfigJson } from '../../src/common/docker-config.js';
import { checkImagesExist, parseChallenge } from '../../src/registry/registry-preflight.js';
import { InvalidInputError, PreflightError } from '../../src/common/errors.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server;
let host: string;
let handler: Handler = (_req, res) => res.end();
const seen: { method: string; url: string; authorization?: string; accept?: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({
      method: req.method!,
      url: req.url!,
      authorization: req.headers.authorization,
      accept: req.headers.accept,
    });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  host = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const dockerConfig = (h: string, user: string, password: string) =>
  JSON.stringify({ auths: { [h]: { auth: Buffer.from(`${user}:${password}`).toString('base64') } } });

function respond(status: number, headers: Record<string, string> = {}, body = ''): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
}

describe('checkImagesExist protocol', () => {
  it('HEADs the manifest with every manifest media type and sorts present from missing', async () => {
    seen.length = 0;
    handler = (req, res) => respond(req.url === '/v2/app/web/manifests/1' ? 200 : 404)(res);
    const result = await checkImagesExist([`${host}/app/web:1`, `${host}/app/gone:2`, `${host}/app/web:1`]);
    expect(result).toEqual({
      present: [`${host}/app/web:1`],
      missing: [{ image: `${host}/app/gone:2`, status: 404, reason: `not in ${host} (manifest unknown)` }],
    });
    expect(seen.map((s) => s.method)).toEqual(['HEAD', 'HEAD']);
    expect(seen[0]!.accept).toContain('application/vnd.oci.image.index.v1+json');
    expect(seen[0]!.accept).toContain('application/vnd.docker.distribution.manifest.v2+json');
  });

  it('asks by digest when the reference has one', async () => {
    seen.length = 0;
    handler = (_req, res) => respond(200)(res);
    const digest = `sha256:${'d'.repeat(64)}`;
    await checkImagesExist([`${host}/app/web:1@${digest}`]);
    expect(seen[0]!.url).toBe(`/v2/app/web/manifests/${digest}`);
  });

  it('answers a Basic challenge with the pull secret credentials', async () => {
    seen.length = 0;
    handler = (req, res) => {
      if (req.headers.authorization === basic('kots', 's3cret')) return respond(200)(res);
      respond(401, { 'WWW-Authenticate': 'Basic realm="registry"' })(res);
    };
    const ok = await checkImagesExist([`${host}/app/a:1`, `${host}/app/b:1`], {
      dockerConfigJson: dockerConfig(host, 'kots', 's3cret'),
      concurrency: 1,
    });
    expect(ok.present).toHaveLength(2);
    // The second image reuses the host's Basic credentials without a fresh challenge.
    expect(seen.map((s) => Boolean(s.authorization))).toEqual([false, true, true]);

    const bad = await checkImagesExist([`${host}/app/a:1`], {
      dockerConfigJson: dockerConfig(`https://${host}/v1/`, 'kots', 'wrong'),
    });
    expect(bad.missing).toEqual([
      {
        image: `${host}/app/a:1`,
        status: 401,
        reason: `${host} refused the credentials of the pull secret (HTTP 401)`,
      },
    ]);
    expect(JSON.stringify(bad)).not.toContain('wrong');

    const none = await checkImagesExist([`${host}/app/a:1`]);
    expect(none.missing[0]!.reason).toMatch(/requires credentials and the pull secret has none/);
  });

  it('follows the Bearer token flow with the scope the registry asks for', async () => {
    seen.length = 0;
    handler = (req, res) => {
      const url = new URL(req.url!, `http://${host}`);
      if (url.pathname === '/token') {
        expect(url.searchParams.get('service')).toBe('test-registry');
        expect(url.searchParams.get('scope')).toBe('repository:app/web:pull,push');
        if (req.headers.authorization !== basic('robot', 'tok,en')) return respond(401)(res);
        return respond(200, { 'Content-Type': 'application/json' }, JSON.stringify({ token: 'T0KEN' }))(res);
      }
      if (req.headers.authorization === 'Bearer T0KEN') return respond(200)(res);
      respond(401, {
        'WWW-Authenticate': `Bearer realm="http://${host}/token",service="test-registry",scope="repository:app/web:pull,push"`,
      })(res);
    };
    const config = JSON.stringify({ auths: { [host]: { username: 'robot', password: 'tok,en' } } });
    expect((await checkImagesExist([`${host}/app/web:1`], { dockerConfigJson: config })).present).toEqual([
      `${host}/app/web:1`,
    ]);
    expect(seen.map((s) => `${s.method} ${s.url.split('?')[0]}`)).toEqual([
      'HEAD /v2/app/web/manifests/1',
      'GET /token',
      'HEAD /v2/app/web/manifests/1',
    ]);

    const refused = await checkImagesExist([`${host}/app/web:1`], {
      dockerConfigJson: dockerConfig(host, 'robot', 'nope'),
    });
    expect(refused.missing[0]).toMatchObject({
      status: 401,
      reason: expect.stringMatching(/token service .* refused/),
    });
  });

  it('falls back to GET when HEAD is not allowed', async () => {
    handler = (req, res) => respond(req.method === 'HEAD' ? 405 : 200)(res);
    expect((await checkImagesExist([`${host}/app/web:1`])).present).toHaveLength(1);
  });

  it('reports other statuses as missing with the status', async () => {
    handler = (_req, res) => respond(500)(res);
    expect((await checkImagesExist([`${host}/app/web:1`])).missing[0]).toMatchObject({
      status: 500,
      reason: `${host} answered HTTP 500`,
    });
  });

  it('throws a PreflightError naming an unreachable registry and the cause', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const error = await checkImagesExist([`127.0.0.1:${closed}/app/web:1`]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreflightError);
    expect((error as PreflightError).message).toMatch(
      new RegExp(`Cannot reach the registry 127.0.0.1:${closed} .*ECONNREFUSED`),
    );
    expect((error as PreflightError).exitCode).toBe(6);
  });

  it('speaks HTTPS to non-loopback hosts unless listed as plain HTTP', async () => {
    handler = (_req, res) => respond(200)(res);
    // Plain HTTP server, HTTPS client: the hint points at plainHttpHosts.
    const error = (await checkImagesExist([`${host}/app/web:1`], { plainHttpHosts: [] }).catch(
      (e: unknown) => e,
    )) as PreflightError;
    expect(error).toBeInstanceOf(PreflightError);
    expect(error.hint).toMatch(/plainHttpHosts/);
    expect((await checkImagesExist([`${host}/app/web:1`], { plainHttpHosts: [host] })).present).toHaveLength(1);
  });
});

describe('parseChallenge', () => {
  it('reads schemes and quoted parameters with commas', () => {
    expect(
      parseChallenge('Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull,push"'),
    ).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.example/token', service: 'reg', scope: 'repository:a/b:pull,push' },
    });
    expect(parseChallenge('Basic realm="Registry Realm"')).toEqual({
      scheme: 'basic',
      params: { realm: 'Registry Realm' },
    });
    expect(parseChallenge('')).toBeUndefined();
  });
});

describe('parseDockerConfigJson', () => {
  it('reads auth and username/password entries under any key spelling', () => {
    const creds = parseDockerConfigJson(
      JSON.stringify({
        auths: {
          'https://index.docker.io/v1/': { auth: Buffer.from('hub:pw:with:colons').toString('base64') },
          'Registry.Local:5000': { username: 'u', password: 'p' },
          'empty.example': {},
        },
      }),
    );
    expect(Object.fromEntries(creds)).toEqual({
      'docker.io': { username: 'hub', password: 'pw:with:colons' },
      'registry.local:5000': { username: 'u', password: 'p' },
    });
  });

  it('refuses malformed content without echoing it', () => {
    expect(() => parseDockerConfigJson('{"auths": {"x": {"auth": "bm9jb2xvbg=="}}}')).toThrow(
      /not base64 of user:password/,
    );
    let error: unknown;
    try {
      parseDockerConfigJson('{secret-ish');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).not.toContain('secret-ish');
  });
});
