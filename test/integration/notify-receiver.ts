// A real webhook receiver for the notification tests (node:http on 127.0.0.1): it records every
// request it gets, and answers as told: 200, 500, a redirect to itself (a loop), or never.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Received {
  method: string;
  /** Path and query, as the request line gave them. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request arrived (Date.now()). */
  at: number;
}

export type Behaviour = 'ok' | 'error500' | 'redirectLoop' | 'hang';

export interface Receiver {
  received: Received[];
  /** The URL with this token in its path and its query, as a Slack webhook carries one. */
  url(token: string): string;
  close(): Promise<void>;
}

export async function startReceiver(behaviour: Behaviour): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      if (behaviour === 'hang') return;
      if (behaviour === 'redirectLoop') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}${req.url}` }).end();
        return;
      }
      res
        .writeHead(behaviour === 'ok' ? 200 : 500, { 'content-type': 'text/plain' })
        .end(behaviour === 'ok' ? 'ok' : 'receiver broken');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    url: (token) => `http://127.0.0.1:${port}/hooks/${token}?key=${token}-q`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound, then released): connections to it are refused. */
export async function refusedUrl(token: string): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hooks/${token}?key=${token}-q`;
}
