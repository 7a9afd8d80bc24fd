// The Dockerfile's base (BASE_IMAGE), assembled here because these machines cannot pull from
// Docker Hub: what `node:24-bookworm-slim` is, made from what the registries here offer. A Debian
// minbase rootfs from Debian's own packages (debootstrap, the machine's apt mirror and release),
// plus the Node 24 binary that the npm `node` package ships (the one tests run on), stripped of its
// symbols and debug info (binutils' strip: 127 MB to 109 MB, what every image layer built on it carries), and
// npm itself from the npm registry (the build stage runs `npm ci`). Cached: the rootfs as a tarball, the
// image in buildah's storage under a tag naming its parts, so later builds start at once.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { cacheRoot, repoRoot } from '../cluster/paths.js';
import { buildah, imageExists } from './buildah.js';

export interface BaseImage {
  name: string;
  nodeVersion: string;
  npmVersion: string;
  suite: string;
}

/** The Debian release of this machine (the image gets the same) and a mirror from its apt sources. */
function debianSource(): { suite: string; mirror: string } {
  const osRelease = readFileSync('/etc/os-release', 'utf8');
  const suite = /^VERSION_CODENAME=(\S+)/m.exec(osRelease)?.[1];
  if (!suite)
    throw new Error(
      "/etc/os-release names no VERSION_CODENAME: the base image is built from this machine's Debian release",
    );
  const candidates: string[] = [];
  const dir = '/etc/apt/sources.list.d';
  const files = [...(existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : []), '/etc/apt/sources.list'];
  for (const file of files.filter((f) => /\.(sources|list)$/.test(f) && existsSync(f))) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
        const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? [];
        if (uri && suites.includes(suite)) candidates.push(uri);
      }
    } else {
      for (const m of text.matchAll(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/gm))
        if (m[2] === suite) candidates.push(m[1]!);
    }
  }
  if (!candidates[0])
    throw new Error(
      `no apt source for Debian ${suite} in /etc/apt: the base rootfs is bootstrapped from the machine's own mirror`,
    );
  return { suite, mirror: candidates[0] };
}

async function debianRootfsTarball(suite: string, mirror: string, log: (line: string) => void): Promise<string> {
  const dir = join(cacheRoot(), 'image');
  const tarball = join(dir, `debian-${suite}-minbase.tar`);
  if (existsSync(tarball)) return tarball;
  if (!existsSync('/usr/sbin/debootstrap'))
    throw new Error("debootstrap not found: apt-get install debootstrap (it builds the image's Debian base)");
  const rootfs = join(dir, `rootfs-${suite}.tmp`);
  await rm(rootfs, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  log(`debootstrap --variant=minbase ${suite} (about a minute, once)`);
  const boot = await execa('debootstrap', ['--variant=minbase', suite, rootfs, mirror], { reject: false, all: true });
  if (boot.exitCode !== 0)
    throw new Error(
      `debootstrap failed (exit ${boot.exitCode}):\n${String(boot.all).split('\n').slice(-15).join('\n')}`,
    );
  // What a slim image leaves out; /dev, /proc, /sys are the runtime's to provide.
  const slim = [
    'dev',
    'proc',
    'sys',
    'usr/share/doc',
    'usr/share/man',
    'usr/share/info',
    'usr/share/locale',
    'var/cache/apt',
    'var/lib/apt/lists',
    'var/log',
    'tmp',
  ];
  await execa('sh', ['-c', slim.map((p) => `rm -rf ./${p}/* ./${p}/.[!.]* 2>/dev/null; mkdir -p ./${p}`).join('; ')], {
    cwd: rootfs,
  });
  await execa('chmod', ['1777', join(rootfs, 'tmp')]);
  await execa('tar', ['--numeric-owner', '--xattrs', '-C', rootfs, '-cf', `${tarball}.tmp`, '.']);
  await rename(`${tarball}.tmp`, tarball);
  await rm(rootfs, { recursive: true, force: true });
  return tarball;
}

/** npm for the image, from the npm registry through npm itself; cached as its tarball. */
async function npmTarball(log: (line: string) => void): Promise<{ file: string; version: string }> {
  const dir = join(cacheRoot(), 'image');
  await mkdir(dir, { recursive: true });
  const cached = readdirSync(dir).find((f) => /^npm-\d+\.\d+\.\d+\.tgz$/.test(f));
  if (cached) return { file: join(dir, cached), version: /npm-(.*)\.tgz/.exec(cached)![1]! };
  log('npm pack npm@11 (once)');
  const packed = await execa('npm', ['pack', 'npm@11', '--pack-destination', dir, '--silent'], { cwd: dir });
  const name = String(packed.stdout).trim().split('\n').pop()!;
  return { file: join(dir, name), version: /npm-(.*)\.tgz/.exec(name)![1]! };
}

/** The node binary tests run on (the `node` devDependency). */
function nodeBinary(): { path: string; version: string } {
  const path = join(repoRoot(), 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(path))
    throw new Error(`${path} missing: run npm ci (the image's Node comes from the pinned \`node\` package)`);
  const version =
    /"version":\s*"([^"]+)"/.exec(
      readFileSync(join(repoRoot(), 'node_modules', 'node', 'package.json'), 'utf8'),
    )?.[1] ?? 'unknown';
  return { path, version };
}

/** Returns the local base image, assembling it the first time. */
export async function ensureBaseImage(log: (line: string) => void): Promise<BaseImage> {
  const { suite, mirror } = debianSource();
  const node = nodeBinary();
  const npm = await npmTarball(log);
  const name = `localhost/helm-installer-base:node${node.version}-npm${npm.version}-${suite}-stripped`;
  if (await imageExists(name)) return { name, nodeVersion: node.version, npmVersion: npm.version, suite };
  const rootfs = await debianRootfsTarball(suite, mirror, log);
  log(`assembling ${name}`);
  const ctr = await buildah(['from', '--pull=false', 'scratch']);
  try {
    await buildah(['add', ctr, rootfs, '/']);
    const stripped = join(cacheRoot(), 'image', `node-${node.version}-stripped`);
    if (!existsSync(stripped)) {
      if (!existsSync('/usr/bin/strip'))
        throw new Error(
          "strip not found: apt-get install binutils (it strips the debug info off the image's Node binary)",
        );
      await mkdir(join(cacheRoot(), 'image'), { recursive: true });
      await execa('/usr/bin/strip', ['--strip-all', '-o', `${stripped}.tmp`, node.path]);
      await rename(`${stripped}.tmp`, stripped);
    }
    await buildah(['copy', '--chmod', '0755', ctr, stripped, '/usr/local/bin/node']);
    // npm's tarball has its bundled dependencies; extracted where the official image has it.
    await buildah(['add', ctr, npm.file, '/usr/local/lib/']);
    await buildah([
      'run',
      ctr,
      '--',
      'sh',
      '-c',
      'mv /usr/local/lib/package /usr/local/lib/node_modules/npm 2>/dev/null || (mkdir -p /usr/local/lib/node_modules && mv /usr/local/lib/package /usr/local/lib/node_modules/npm)' +
        ' && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm' +
        ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx' +
        ' && node --version && npm --version',
    ]);
    await buildah([
      'config',
      '--env',
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--env',
      `NODE_VERSION=${node.version}`,
      '--cmd',
      'node',
      ctr,
    ]);
    await buildah(['commit', '--rm', ctr, name]);
  } catch (error) {
    await buildah(['rm', ctr]).catch(() => undefined);
    throw error;
  }
  return { name, nodeVersion: node.version, npmVersion: npm.version, suite };
}
