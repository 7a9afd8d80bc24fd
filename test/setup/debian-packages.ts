// The Debian packages the integration tests, the demo and the local cluster need, each with a file
// that proves it is installed. One list: a new need is one line here. `npm test` (through the
// cluster start) installs the missing ones, so a fresh machine needs no step of its own.
import { existsSync } from 'node:fs';
import { execa } from 'execa';

export interface DebianPackage {
  name: string;
  /** A file the package installs: present means installed. */
  provides: string;
  why: string;
}

const DEBIAN_PACKAGES: readonly DebianPackage[] = [
  { name: 'openssl', provides: '/usr/bin/openssl', why: "the control plane's and the TLS registry's certificates" },
  { name: 'ca-certificates', provides: '/etc/ssl/certs/ca-certificates.crt', why: 'TLS trust store' },
  {
    name: 'docker-registry',
    provides: '/usr/bin/docker-registry',
    why: 'the real local registry (airgap tests, demo)',
  },
  { name: 'apache2-utils', provides: '/usr/bin/htpasswd', why: 'credentials for the registry behind htpasswd' },
  { name: 'containerd', provides: '/usr/bin/containerd', why: "the real node's container runtime (CRI)" },
  { name: 'runc', provides: '/usr/sbin/runc', why: "the real node's OCI runtime" },
  {
    name: 'containernetworking-plugins',
    provides: '/usr/lib/cni/loopback',
    why: "the real node's CNI config (NetworkReady)",
  },
  { name: 'gcc', provides: '/usr/bin/gcc', why: "the kubelet (cgo) and the real node's static pause program" },
  { name: 'libc6-dev', provides: '/usr/lib/x86_64-linux-gnu/libc.a', why: 'static linking of the pause program' },
  { name: 'buildah', provides: '/usr/bin/buildah', why: 'npm run image:build (the installer image)' },
  {
    name: 'debootstrap',
    provides: '/usr/sbin/debootstrap',
    why: "the installer image's Debian base, assembled locally",
  },
  {
    name: 'binutils',
    provides: '/usr/bin/strip',
    why: "strip: the Node binary of the image's base without its symbols and debug info (18 MB)",
  },
];

function missingPackages(packages: readonly DebianPackage[] = DEBIAN_PACKAGES): DebianPackage[] {
  return packages.filter((p) => !existsSync(p.provides));
}

/**
 * Installs the missing packages with apt-get (root only); otherwise fails naming each one and the
 * command that installs them. apt's own lock keeps two concurrent installs apart.
 */
export async function ensureDebianPackages(
  log: (line: string) => void,
  packages: readonly DebianPackage[] = DEBIAN_PACKAGES,
): Promise<void> {
  const missing = missingPackages(packages);
  if (!missing.length) return;
  const names = missing.map((p) => p.name);
  const list = missing.map((p) => `${p.name} (${p.why})`).join(', ');
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing Debian packages: ${list}. Install them as root, then run again: sudo apt-get install -y --no-install-recommends ${names.join(' ')}`,
    );
  }
  log(`installing Debian packages: ${list}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const argv of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...names],
  ]) {
    const run = await execa('apt-get', argv, { env, all: true, reject: false });
    if (run.exitCode !== 0) {
      const tail = String(run.all ?? '')
        .trim()
        .split('\n')
        .slice(-8)
        .join('\n');
      throw new Error(
        `apt-get ${argv.join(' ')} failed (exit ${run.exitCode}); install ${names.join(' ')} by hand and run again:\n${tail}`,
      );
    }
  }
  const still = missingPackages(missing);
  if (still.length)
    throw new Error(
      `apt-get installed ${names.join(' ')} but these files are still missing: ${still.map((p) => p.provides).join(', ')}`,
    );
}
