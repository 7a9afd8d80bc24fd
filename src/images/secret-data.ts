// A Secret's `data` holds base64: images an app names for pods it starts itself (a notebook hub's
// values file with the user pod's image) sit in the decoded text. Pure: decode strictly (what is
// not valid base64, or decodes to bytes that are not UTF-8 text, is never touched), re-encode
// after an edit (the decoded bytes outside the edited references are the same bytes), and say
// when a values file does not parse (left untouched rather than edited line by line).
import { parseDocument } from 'yaml';

export type DecodedSecretValue = { text: string } | { problem: string } | { binary: true };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The text of one value of a Secret's `data` (line breaks inside the base64 ignored, as the API server does not: it refuses them, helm's b64enc writes none). */
export function decodeSecretValue(value: string): DecodedSecretValue {
  if (!BASE64.test(value)) return { problem: 'not valid base64' };
  const bytes = Buffer.from(value, 'base64');
  try {
    return { text: UTF8.decode(bytes) };
  } catch {
    return { binary: true }; // a keystore, a certificate in DER: no image is named in it
  }
}

export function encodeSecretValue(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

const VALUES_FILE = /\.(?:ya?ml|json)$/i;

/** Why a key named like a values file (`*.yaml`, `*.yml`, `*.json`) cannot be read as one; undefined when it parses or is not one. */
export function valuesFileProblem(key: string, text: string): string | undefined {
  if (!VALUES_FILE.test(key)) return undefined;
  const doc = parseDocument(text, { uniqueKeys: false });
  const error = doc.errors[0];
  // The first line only, without the excerpt of the text the parser quotes after it: a Secret's content.
  return error ? `its values file does not parse (${error.message.split('\n')[0]!.replace(/:$/, '')})` : undefined;
}
