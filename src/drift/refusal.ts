// Why the API server refused an apply, pure: each field named (`spec.clusterIP: field is
// immutable`), never the value. An Invalid error quotes the value it refused, which may be a
// secret (a Secret's data, a password in a ConfigMap).
import { apiMessage } from '../cluster/kube-errors.js';
import { MASK } from '../common/secrets.js';
import { ObjectApiError } from '../cluster/object-client.js';

export function refusal(error: unknown): string {
  const body = error instanceof ObjectApiError ? safeJson(error.body) : undefined;
  const causes =
    (body as { details?: { causes?: { field?: string; message?: string }[] } } | undefined)?.details?.causes ?? [];
  const named = causes.filter((c) => c.field).map((c) => `${c.field}: ${withoutValue(c.message ?? 'invalid')}`);
  if (named.length > 0) return [...new Set(named)].join('; ');
  return withoutValue(apiMessage(error));
}

/** A server-side apply refused because the object does not fit its kind's schema (a stale CRD): HTTP 500, but no outage. */
export function isSchemaRefusal(error: unknown): boolean {
  return (
    error instanceof ObjectApiError &&
    error.code === 500 &&
    /failed to create typed patch object|field not declared in schema/.test(error.body)
  );
}

function withoutValue(message: string): string {
  // `Invalid value: "10.96.0.12": field is immutable` -> `field is immutable (value [REDACTED])`.
  const m = /Invalid value: .*: ([^:]+)$/s.exec(message);
  if (m) return `${message.slice(0, m.index)}${m[1]!.trim()} (value ${MASK})`;
  // `Duplicate value: "http"`, `Unsupported value: "x": supported values: ...`: the value masked.
  return message.replace(/(Invalid|Duplicate|Unsupported) value: .*/s, `$1 value: ${MASK}`);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
