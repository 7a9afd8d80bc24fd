// The post-render host's shim against real processes: every wait it has ends (installer gone
// before or after the request, host disposed before or during it), and no file of a request is
// left in the work directory, a shim killed with SIGKILL included. The installer that dies is a
// real Node process serving from the built code (npm run build first).
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { startPostRenderHost, type PostRenderHost } from '../../src/post-render/post-render-host.js';
import { installerNodeArgs, repoRoot } from '../helpers.js';

const STREAM = 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2}\n';
const STOPPED = 'helm-installer post-render: the installer stopped before the rewrite ended';

let dir: string;
let host: PostRenderHost | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'post-render-host-'));
});
afterEach(async () => {
  host?.dispose();
  host = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** The work directory's whole content: only what the host made, never a request's. */
const listing = () => readdirSync(dir).sort();
const HOST_FILES = ['post-render.sh', 'requests'];

/** A host whose rewrite starts (resolving `started`) and never ends. */
async function stuckHost(pid?: number): Promise<{ host: PostRenderHost; started: Promise<void>; calls: () => number }> {
  let calls = 0;
  let start!: () => void;
  const started = new Promise<void>((resolve) => (start = resolve));
  const h = await startPostRenderHost(
    dir,
    () => {
      calls += 1;
      start();
      return new Promise(() => undefined);
    },
    pid,
  );
  host = h;
  return { host: h, started, calls: () => calls };
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

/** Ended, or a zombie no one reaps (a reaped orphan's pid is simply gone). */
function ended(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .startsWith('Z');
  } catch {
    return true;
  }
}

async function timed<T>(run: Promise<T>): Promise<{ result: T; ms: number }> {
  const start = Date.now();
  const result = await run;
  return { result, ms: Date.now() - start };
}

describe('the post-render shim: every wait ends', () => {
  it('fails at once when the installer process is gone before it asks', async () => {
    const gone = await execa('/bin/sh', ['-c', 'echo $$']);
    const { host: h, calls } = await stuckHost(Number(gone.stdout));
    const r = await execa(h.shim, { input: STREAM, reject: false, timeout: 20_000 });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`helm-installer post-render: the installer (pid ${gone.stdout}) is not running`);
    expect(calls()).toBe(0);
    expect(listing()).toEqual(HOST_FILES);
  });

  it('fails when the host is disposed while the rewrite runs', async () => {
    const { host: h, started } = await stuckHost();
    const shim = execa(h.shim, { input: STREAM, reject: false, timeout: 20_000 });
    await started;
    h.dispose();
    const r = await shim;
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(STOPPED);
    expect(listing()).toEqual(HOST_FILES);
  });

  it('a request after dispose gets its answer (exit 1) at once, without a rewrite', async () => {
    const { host: h, calls } = await stuckHost();
    h.dispose();
    const { result: r, ms } = await timed(execa(h.shim, { input: STREAM, reject: false, timeout: 20_000 }));
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'helm-installer post-render: the installer no longer serves post-renders (its helm run has ended)',
    );
    expect(ms).toBeLessThan(5_000);
    expect(calls()).toBe(0);
    expect(listing()).toEqual(HOST_FILES);
  });

  it('exits 1 within seconds when the installer is killed between the request and its answer', async () => {
    // A real installer: a Node process hosting the post-render from the built code, whose rewrite
    // never ends, then SIGKILL (no exit handler runs, its descriptors just close).
    const module = join(repoRoot, 'dist', 'src', 'post-render', 'post-render-host.js');
    const script = `const { startPostRenderHost } = await import(process.env.HOST_MODULE);
      const host = await startPostRenderHost(process.env.HOST_DIR, () => { process.stdout.write('SERVING\\n'); return new Promise(() => {}); });
      process.stdout.write('READY ' + host.shim + '\\n');
      setInterval(() => {}, 60_000);`;
    const installer = execa(process.execPath, [...installerNodeArgs, '--input-type=module', '-e', script], {
      env: { HOST_MODULE: module, HOST_DIR: dir },
      reject: false,
      timeout: 60_000,
    });
    let out = '';
    installer.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await until('the installer to serve', () => /^READY /m.test(out));
    const shim = execa(join(dir, 'post-render.sh'), { input: STREAM, reject: false, timeout: 30_000 });
    await until('the request to reach the installer', () => out.includes('SERVING\n'));
    const askedAt = Date.now();
    installer.kill('SIGKILL');
    const r = await shim;
    expect(Date.now() - askedAt).toBeLessThan(5_000);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(STOPPED);
    expect((await installer).signal).toBe('SIGKILL');
    expect(listing()).toEqual(HOST_FILES);
  });
});

describe('a shim killed with SIGKILL leaves nothing of the stream', () => {
  it('while it waits for its answer: no file, and its watchdog ends too', async () => {
    const { started } = await stuckHost();
    const shim = execa(join(dir, 'post-render.sh'), { input: STREAM, reject: false, timeout: 20_000 });
    await started;
    // Even while it waits, the stream has no name on disk: the shim holds it by descriptor only.
    expect(listing()).toEqual(HOST_FILES);
    expect(readlinkSync(`/proc/${shim.pid}/fd/4`)).toMatch(
      new RegExp(`^${realpathSync(dir)}/request\\.\\w{6}/in \\(deleted\\)$`),
    );
    const children = readFileSync(`/proc/${shim.pid}/task/${shim.pid}/children`, 'utf8').trim().split(' ').map(Number);
    expect(children).toHaveLength(1); // the watchdog
    shim.kill('SIGKILL');
    expect((await shim).signal).toBe('SIGKILL');
    expect(listing()).toEqual(HOST_FILES);
    await until('the watchdog to end', () => children.every(ended), 5_000);
    host!.dispose();
    expect(listing()).toEqual(HOST_FILES);
  });

  it('while it writes the stream: no file, and nothing was served', async () => {
    const { calls } = await stuckHost();
    const shim: ResultPromise<{ stdin: 'pipe'; reject: false }> = execa(join(dir, 'post-render.sh'), {
      stdin: 'pipe',
      reject: false,
      timeout: 20_000,
    });
    shim.stdin.write(STREAM);
    // Written into its unlinked file, helm's stream not ended yet.
    const fd4 = `/proc/${shim.pid}/fd/4`;
    await until('the shim to write the stream', () => {
      try {
        return readlinkSync(fd4).endsWith('/in (deleted)') && statSync(fd4).size === Buffer.byteLength(STREAM);
      } catch {
        return false;
      }
    });
    expect(listing()).toEqual(HOST_FILES);
    shim.kill('SIGKILL');
    // Its cat still copies helm's stdin until that ends, into a file with no name.
    shim.stdin.end();
    expect((await shim).signal).toBe('SIGKILL');
    expect(listing()).toEqual(HOST_FILES);
    expect(calls()).toBe(0);
  });
});

describe("the installer's run directory", () => {
  it('is removed on process.exit inside withTempDir (a second signal, an uncaught exception)', async () => {
    const module = join(repoRoot, 'dist', 'src', 'common', 'temp-dir.js');
    const script = `const { withTempDir } = await import(process.env.TEMP_MODULE);
      await withTempDir('helm-installer', async (d) => { process.stdout.write(d); process.exit(7); });`;
    const r = await execa(process.execPath, ['--input-type=module', '-e', script], {
      env: { TEMP_MODULE: module, HELM_INSTALLER_TMPDIR: dir },
      reject: false,
      timeout: 20_000,
    });
    expect(r.exitCode).toBe(7);
    expect(r.stdout).toMatch(new RegExp(`^${dir}/helm-installer-\\w{6}$`));
    expect(listing()).toEqual([]);
  });
});
