// The values of one release as Flux reads them: a ConfigMap per layer (the vendor's, the
// customer's, the airgap's registry hints), the secret-looking values of each layer under their
// own key of one Secret, and the valuesFrom list that merges them in our order (later wins):
// vendor, vendor secrets, customer, customer secrets, generated.
import { InvalidInputError } from '../../common/errors.js';
import type { HelmReleaseInput, Values } from './input.js';
import type { ReleaseNames } from './names.js';
import { checkExpressible, splitValues } from './values-split.js';
import { toYaml } from './yaml-text.js';

// Kubernetes refuses a ConfigMap or Secret whose data passes 1 MiB; a little is left for the rest.
const MAX_DATA_BYTES = 1024 * 1024 - 4096;
const VALUES_KEY = 'values.yaml';

export interface ValuesObjects {
  configMaps: Array<{ layer: string; object: object }>;
  /** Absent when no value looks secret. */
  secret?: object;
  valuesFrom: object[];
}

type Layer = 'vendor' | 'customer' | 'generated';

export function valuesObjects(r: HelmReleaseInput, names: ReleaseNames, namespace: string): ValuesObjects {
  const layers: Array<[Layer, Values | undefined, string]> = [
    ['vendor', r.values.vendor, names.vendorValues],
    ['customer', r.values.customer, names.customerValues],
    ['generated', r.values.generated, names.generatedValues],
  ];
  const out: ValuesObjects = { configMaps: [], valuesFrom: [] };
  const secretData: Record<string, string> = {};
  for (const [layer, values, name] of layers) {
    // The generated layer only when the airgap made one; the vendor's and the customer's always,
    // so an overlay has its ConfigMap to change.
    if (values === undefined) continue;
    checkExpressible(values, { release: `${r.namespace}/${r.release}`, layer });
    const split = splitValues(values, r.secretPaths);
    const text = sized(toYaml(split.plain), r, `${layer} values`);
    out.configMaps.push({ layer, object: configMap(name, namespace, text) });
    out.valuesFrom.push({ kind: 'ConfigMap', name, valuesKey: VALUES_KEY });
    if (Object.keys(split.secret).length === 0) continue;
    const key = `${layer}.yaml`;
    secretData[key] = toYaml(split.secret);
    out.valuesFrom.push({ kind: 'Secret', name: names.secretValues, valuesKey: key });
  }
  if (Object.keys(secretData).length > 0) {
    sized(Object.values(secretData).join(''), r, 'secret values');
    out.secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: names.secretValues, namespace },
      type: 'Opaque',
      stringData: secretData,
    };
  }
  return out;
}

function configMap(name: string, namespace: string, text: string): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { [VALUES_KEY]: text } };
}

function sized(text: string, r: HelmReleaseInput, what: string): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= MAX_DATA_BYTES) return text;
  throw new InvalidInputError(
    `release ${r.namespace}/${r.release}: the ${what} take ${bytes} bytes, more than a ConfigMap or Secret holds (1 MiB)`,
    {
      key: what,
      hint: 'Flux reads values from ConfigMaps and Secrets: make the values smaller, or use export --format rendered.',
    },
  );
}
