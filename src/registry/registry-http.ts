// One HTTP(S) request with node:http/https, for the registry API. Not fetch: fetch cannot take a
// per-request CA, and an airgapped registry almost always has a private one.
import type { IncomingHttpHeaders } from 'node:http';
import type https from 'node:https';
import { createRequire } from 'node:module';
import { rootCertificates } from 'node:tls';

// require(), not import: an ES import of node:http reads every export, and its WebSocket getter
// loads node's bundled undici (40-300 ms on every run, preflight or not; issue 10).
const require = createRequire(import.meta.url);
const http = () => require('node:http') as typeof import('node:http');
const httpsModule = () => require('node:https') as typeof import('node:https');

export interface HttpRequest {
  url: URL;
  method: 'GET' | 'HEAD' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Extra trusted CA certificates (PEM), added to Node's built-in roots. */
  ca?: string[];
  timeoutMs: number;
  /** Bodies above this are cut off (token and error bodies are small). */
  maxBodyBytes?: number;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export function httpRequest(request: HttpRequest): Promise<HttpResponse> {
  const { url } = request;
  const maxBody = request.maxBodyBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = {
      method: request.method,
      headers: {
        ...request.headers,
        ...(request.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(request.body)) } : {}),
      },
      ...(url.protocol === 'https:' && request.ca?.length ? { ca: [...rootCertificates, ...request.ca] } : {}),
      // A one-shot check: no keep-alive pool holding the process open afterwards.
      agent: false,
    };
    const send = url.protocol === 'https:' ? httpsModule().request : http().request;
    const req = send(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= maxBody) chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(request.timeoutMs, () => req.destroy(new Error(`no answer within ${request.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(request.body);
  });
}
