import { describe, it, expect } from 'vitest';
import {
  pullsKotsImage,
  formatImageReference,
  parseImageReference,
  parseRegistryAddress,
  planImageRewrites,
  rewriteImageReference,
} from '../../src/common/image-reference.js';
import { InvalidInputError, UsageError } from '../../src/common/errors.js';

const D = 'sha256:' + 'a'.repeat(64);
const D2 = 'sha256:' + '0123456789abcdef'.repeat(4);

// [input, registry, repository, tag, digest]
const valid: [string, string, string, string | undefined, string | undefined][] = [
  ['nginx', 'docker.io', 'library/nginx', 'latest', undefined],
  ['nginx:1.27', 'docker.io', 'library/nginx', '1.27', undefined],
  ['nginx:1.27.3-alpine', 'docker.io', 'library/nginx', '1.27.3-alpine', undefined],
  ['library/nginx', 'docker.io', 'library/nginx', 'latest', undefined],
  ['docker.io/nginx', 'docker.io', 'library/nginx', 'latest', undefined],
  ['docker.io/library/nginx:latest', 'docker.io', 'library/nginx', 'latest', undefined],
  ['index.docker.io/library/nginx:1', 'docker.io', 'library/nginx', '1', undefined],
  ['index.docker.io/nginx', 'docker.io', 'library/nginx', 'latest', undefined],
  ['registry-1.docker.io/library/redis:7', 'docker.io', 'library/redis', '7', undefined],
  ['Docker.IO/library/redis:7', 'docker.io', 'library/redis', '7', undefined],
  ['bitnami/redis:7.2.4-debian-12-r9', 'docker.io', 'bitnami/redis', '7.2.4-debian-12-r9', undefined],
  ['docker.io/bitnami/postgresql:16', 'docker.io', 'bitnami/postgresql', '16', undefined],
  ['grafana/grafana:7.3.5', 'docker.io', 'grafana/grafana', '7.3.5', undefined],
  ['quay.io/prometheus/node-exporter:v1.8.2', 'quay.io', 'prometheus/node-exporter', 'v1.8.2', undefined],
  [
    'quay.io/jetstack/cert-manager-controller:v1.15.3',
    'quay.io',
    'jetstack/cert-manager-controller',
    'v1.15.3',
    undefined,
  ],
  [
    'registry.k8s.io/ingress-nginx/controller:v1.11.2@' + D,
    'registry.k8s.io',
    'ingress-nginx/controller',
    'v1.11.2',
    D,
  ],
  ['registry.k8s.io/pause:3.9', 'registry.k8s.io', 'pause', '3.9', undefined],
  ['gcr.io/distroless/static-debian12:nonroot', 'gcr.io', 'distroless/static-debian12', 'nonroot', undefined],
  ['ghcr.io/fluxcd/helm-controller:v1.0.1', 'ghcr.io', 'fluxcd/helm-controller', 'v1.0.1', undefined],
  ['public.ecr.aws/docker/library/busybox:1.36', 'public.ecr.aws', 'docker/library/busybox', '1.36', undefined],
  [
    '123456789012.dkr.ecr.us-east-1.amazonaws.com/team/app:2024.05.01',
    '123456789012.dkr.ecr.us-east-1.amazonaws.com',
    'team/app',
    '2024.05.01',
    undefined,
  ],
  ['mcr.microsoft.com/dotnet/aspnet:8.0', 'mcr.microsoft.com', 'dotnet/aspnet', '8.0', undefined],
  ['localhost/myimage', 'localhost', 'myimage', 'latest', undefined],
  ['localhost:5000/myimage:dev', 'localhost:5000', 'myimage', 'dev', undefined],
  ['registry.local:5000/app/grafana:7.3.5', 'registry.local:5000', 'app/grafana', '7.3.5', undefined],
  ['10.96.0.10:5000/team/api:1.0.0', '10.96.0.10:5000', 'team/api', '1.0.0', undefined],
  ['[::1]:5000/app/web:1', '[::1]:5000', 'app/web', '1', undefined],
  ['myregistry:5000/thing', 'myregistry:5000', 'thing', 'latest', undefined],
  ['nginx@' + D, 'docker.io', 'library/nginx', undefined, D],
  ['nginx:1.27@' + D, 'docker.io', 'library/nginx', '1.27', D],
  ['quay.io/org/app@' + D2, 'quay.io', 'org/app', undefined, D2],
  ['ubuntu:22.04', 'docker.io', 'library/ubuntu', '22.04', undefined],
  ['my_org/my__image:v_1', 'docker.io', 'my_org/my__image', 'v_1', undefined],
  ['org/a--b.c_d:1', 'docker.io', 'org/a--b.c_d', '1', undefined],
  ['a/b/c/d/e:deep', 'docker.io', 'a/b/c/d/e', 'deep', undefined],
  ['localhost:5000', 'docker.io', 'library/localhost', '5000', undefined], // no slash: "5000" is a tag
  ['Registry.Example.com/ns/app:TAG_Upper', 'registry.example.com', 'ns/app', 'TAG_Upper', undefined],
  ['example.com/app:' + 'v'.repeat(128), 'example.com', 'app', 'v'.repeat(128), undefined],
  [
    'docker.io/library/redis:7@sha512:' + 'b'.repeat(128),
    'docker.io',
    'library/redis',
    '7',
    'sha512:' + 'b'.repeat(128),
  ],
];

const invalid: [string, RegExp][] = [
  ['', /empty/],
  ['   ', /whitespace/],
  ['nginx ', /whitespace/],
  ['NGINX', /lowercase/],
  ['docker.io/Library/nginx', /lowercase/],
  ['quay.io/Org/App:1', /lowercase/],
  ['nginx@sha256:abc', /64 lowercase hex/],
  ['nginx@sha256:' + 'A'.repeat(64), /64 lowercase hex/],
  ['nginx@md5:' + 'a'.repeat(32), /algorithm "md5"/],
  ['nginx@' + 'a'.repeat(64), /<algorithm>:<hex>/],
  ['nginx@' + D + '@' + D, /more than one "@"/],
  ['nginx:', /tag ""/],
  ['nginx:-bad', /tag "-bad"/],
  ['nginx:' + 'v'.repeat(129), /tag/],
  ['nginx:a:b', /tag "b"|lowercase|component/],
  [':tag', /empty/],
  ['/nginx', /empty path component/],
  ['nginx/', /empty path component/],
  ['docker.io//nginx', /empty path component/],
  ['quay.io/org/-app', /component "-app"/],
  ['quay.io/org/app_', /component "app_"/],
  ['quay.io/org/a___b', /component/],
  ['bad_host.io/app', /not a valid host/],
  ['-bad.io/app', /not a valid host/],
  ['a'.repeat(64), /image ID/],
  ['docker.io/' + 'a'.repeat(250), /longer than 255/],
];

describe('parseImageReference', () => {
  it.each(valid)('%s', (input, registry, repository, tag, digest) => {
    const ref = parseImageReference(input);
    expect(ref).toMatchObject({ registry, repository, original: input });
    expect(ref.tag).toBe(tag);
    expect(ref.digest).toBe(digest);
    expect(ref.normalized).toBe(formatImageReference(ref));
    // Normalised references are fixed points.
    expect(parseImageReference(ref.normalized).normalized).toBe(ref.normalized);
  });

  it.each(invalid)('refuses %j', (input, message) => {
    let error: unknown;
    try {
      parseImageReference(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toContain(`"${input}"`);
    expect((error as Error).message).toMatch(message);
    expect((error as InvalidInputError).exitCode).toBe(3);
    expect((error as InvalidInputError).hint).toBeTruthy();
  });

  it('has at least 40 real-world forms in its tables', () => {
    expect(valid.length + invalid.length).toBeGreaterThanOrEqual(40);
  });

  it('normalises equivalent spellings to one string', () => {
    const spellings = [
      'redis',
      'redis:latest',
      'library/redis',
      'docker.io/redis',
      'index.docker.io/library/redis:latest',
    ];
    expect(new Set(spellings.map((s) => parseImageReference(s).normalized))).toEqual(
      new Set(['docker.io/library/redis:latest']),
    );
  });
});

describe('parseRegistryAddress', () => {
  it.each([
    ['registry.local:5000', 'registry.local:5000', undefined],
    ['registry.local:5000/app', 'registry.local:5000', 'app'],
    ['Registry.Local/app/team', 'registry.local', 'app/team'],
    ['10.0.0.5:443/ns/', '10.0.0.5:443', 'ns'],
    [' kotsadm-registry \n', 'kotsadm-registry', undefined],
    ['[::1]:5000/x', '[::1]:5000', 'x'],
  ])('%j', (input, host, namespace) => {
    const r = parseRegistryAddress(input);
    expect(r.host).toBe(host);
    expect(r.namespace).toBe(namespace);
    expect(r.address).toBe(namespace ? `${host}/${namespace}` : host);
  });

  it.each([
    ['', /empty/],
    ['https://registry.local', /scheme/],
    ['registry.local/App', /namespace component "App"/],
    ['registry local', /whitespace/],
    ['user@registry.local', /"@"/],
    ['reg_istry:5000', /not a valid host/],
    ['registry.local//app', /namespace component ""/],
  ])('refuses %j', (input, message) => {
    expect(() => parseRegistryAddress(input)).toThrow(UsageError);
    expect(() => parseRegistryAddress(input)).toThrow(message);
  });
});

describe('rewriteImageReference', () => {
  const local = parseRegistryAddress('registry.local:5000/app');
  const root = parseRegistryAddress('registry.local:5000');
  it.each([
    ['docker.io/grafana/grafana:7.3.5', 'registry.local:5000/app/grafana:7.3.5'],
    ['nginx', 'registry.local:5000/app/nginx:latest'],
    ['quay.io/prometheus/node-exporter:v1.8.2', 'registry.local:5000/app/node-exporter:v1.8.2'],
    ['nginx@' + D, `registry.local:5000/app/nginx@${D}`],
    // KOTS (Docker's ParseDockerRef) drops the tag when a digest is given.
    ['nginx:1.27@' + D, `registry.local:5000/app/nginx@${D}`],
    ['localhost:5000/a/b/c:1', 'registry.local:5000/app/c:1'],
    ['registry.local:5000/app/grafana:7.3.5', 'registry.local:5000/app/grafana:7.3.5'],
  ])('%s', (input, expected) => {
    expect(rewriteImageReference(input, local)).toBe(expected);
  });

  it('without a namespace puts images at the registry root', () => {
    expect(rewriteImageReference('bitnami/redis:7', root)).toBe('registry.local:5000/redis:7');
  });

  it('renames a longer path on the local registry: KOTS only ever pushes <address>/<one component>', () => {
    expect(rewriteImageReference('registry.local:5000/other/redis:7', root)).toBe('registry.local:5000/redis:7');
    expect(rewriteImageReference('registry.local:5000/other/redis:7', local)).toBe('registry.local:5000/app/redis:7');
    expect(rewriteImageReference('registry.local:5000/app/bitnami/redis:7', local)).toBe(
      'registry.local:5000/app/redis:7',
    );
  });
});

describe('planImageRewrites', () => {
  const local = parseRegistryAddress('registry.local:5000/app');

  it('maps every spelling to its local name and skips images already local', () => {
    const plan = planImageRewrites(
      ['nginx', 'docker.io/library/nginx:latest', 'grafana/grafana:7.3.5', 'registry.local:5000/app/x:1'],
      local,
    );
    expect(Object.fromEntries(plan)).toEqual({
      nginx: 'registry.local:5000/app/nginx:latest',
      'docker.io/library/nginx:latest': 'registry.local:5000/app/nginx:latest',
      'grafana/grafana:7.3.5': 'registry.local:5000/app/grafana:7.3.5',
    });
  });

  it('refuses two sources that land on one local name, naming both', () => {
    expect(() => planImageRewrites(['bitnami/redis:7', 'docker.io/library/redis:7'], local)).toThrow(
      /"bitnami\/redis:7" and "docker.io\/library\/redis:7".*registry.local:5000\/app\/redis:7/,
    );
    expect(() => planImageRewrites(['bitnami/redis:7', 'redis:7'], local)).toThrow(InvalidInputError);
  });

  it('allows the same last component with different tags, and identical digests', () => {
    expect(planImageRewrites(['bitnami/redis:7', 'redis:6'], local).size).toBe(2);
    expect(planImageRewrites([`a/redis:7@${D}`, `b/redis:7@${D}`], local).size).toBe(2);
    expect(planImageRewrites([`a/redis@${D}`, `b/redis@${D2}`], local).size).toBe(2);
  });

  it('names the bad reference when one is invalid', () => {
    expect(() => planImageRewrites(['nginx', 'Bad Image'], local)).toThrow(/"Bad Image"/);
  });
});

describe('pullsKotsImage: what the runtime pulls from its KOTS name (a hook helm 3 leaves alone)', () => {
  const registry = parseRegistryAddress('registry.local:5000/acme');
  const D = `sha256:${'c'.repeat(64)}`;
  it.each([
    [`registry.local:5000/acme/controller:v1.15.1`, true],
    [`registry.local:5000/acme/controller@${D}`, true],
    // The digest is pulled; KOTS pushed it as registry.local:5000/acme/controller@<digest>.
    [`registry.local:5000/acme/controller:v1.15.1@${D}`, true],
    [`registry.local:5000/acme/ingress-nginx/controller:v1.15.1@${D}`, false],
    [`registry.local:5000/controller:v1.15.1@${D}`, false],
    [`registry.k8s.io/ingress-nginx/controller:v1.15.1@${D}`, false],
  ])('%s -> %s', (reference, expected) => {
    expect(pullsKotsImage(parseImageReference(reference), registry)).toBe(expected);
  });
});
