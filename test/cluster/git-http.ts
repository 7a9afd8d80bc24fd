// A git server on the loopback speaking git's own smart HTTP: `git http-backend` (git's CGI
// program, what Apache or nginx run behind a git host) run once per request by a tiny Node http
// server, as a CGI server would. Flux's source-controller clones from it as from any git host;
// pushes are allowed (http.receivepack) since only this machine can reach it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';

export interface GitHttpServer {
  /** `http://127.0.0.1:PORT/<name>.git` for a repository made by createRepository. */
  url(name: string): string;
  /** A bare repository with one branch name for its HEAD, pushable over HTTP. */
  createRepository(name: string, branch: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startGitHttpServer(root: string): Promise<GitHttpServer> {
  mkdirSync(root, { recursive: true });
  const { stdout: execPath } = await execa('git', ['--exec-path']);
  const backend = join(execPath.trim(), 'git-http-backend');
  const server = createServer((req, res) => runCgi(backend, root, req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}.git`,
    async createRepository(name, branch) {
      const dir = join(root, `${name}.git`);
      await execa('git', ['init', '--quiet', '--bare', `--initial-branch=${branch}`, dir]);
      await execa('git', ['-C', dir, 'config', 'http.receivepack', 'true']);
      return dir;
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** RFC 3875: the request as environment variables and stdin; the reply: CGI headers, a blank line, the body. */
function runCgi(backend: string, root: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const header = (name: string) => (req.headers[name] as string | undefined) ?? '';
  const child = spawn(backend, [], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: header('content-type'),
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: header('content-length') } : {}),
      HTTP_CONTENT_ENCODING: header('content-encoding'),
      HTTP_GIT_PROTOCOL: header('git-protocol'),
      REMOTE_ADDR: '127.0.0.1',
      SERVER_PROTOCOL: 'HTTP/1.1',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end =
      head.indexOf('\r\n\r\n') >= 0
        ? head.indexOf('\r\n\r\n') + 4
        : head.indexOf('\n\n') >= 0
          ? head.indexOf('\n\n') + 2
          : -1;
    if (end < 0) return;
    headersDone = true;
    writeHead(res, head.subarray(0, end).toString('latin1'));
    res.write(head.subarray(end));
  });
  child.on('close', (code) => {
    if (!headersDone) res.writeHead(502).end(`git http-backend exited ${code} before its headers`);
    else res.end();
  });
  child.on('error', (error) => (res.headersSent ? res.destroy(error) : res.writeHead(500).end(error.message)));
}

function writeHead(res: ServerResponse, text: string): void {
  let status = 200;
  for (const line of text.split(/\r?\n/).filter(Boolean)) {
    const i = line.indexOf(':');
    const [name, value] = [line.slice(0, i).trim(), line.slice(i + 1).trim()];
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
    else res.setHeader(name, value);
  }
  res.writeHead(status);
}
