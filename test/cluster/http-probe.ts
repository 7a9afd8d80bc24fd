// Status of one GET, for health checks: etcd's /health (plain HTTP) and the apiserver's
// /readyz (HTTPS with the admin client certificate, since anonymous requests may be refused).
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { StatePaths } from './paths.js';

/** The HTTP status of GET `url`, or 0 when nothing answers within `timeoutMs`. */
export function httpStatus(
  url: string,
  tls?: Pick<StatePaths, 'caCert' | 'adminCert' | 'adminKey'>,
  timeoutMs = 2_000,
): Promise<number> {
  return new Promise((resolve) => {
    const done = (status: number) => resolve(status);
    let options = {};
    if (tls) {
      try {
        options = { ca: readFileSync(tls.caCert), cert: readFileSync(tls.adminCert), key: readFileSync(tls.adminKey) };
      } catch {
        return done(0);
      }
    }
    const req = (url.startsWith('https:') ? httpsRequest : httpRequest)(
      url,
      { ...options, method: 'GET', timeout: timeoutMs },
      (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(0));
    req.end();
  });
}
