// YAML as the exported files are written: the same text for the same input (keys in the order
// the objects are built, no timestamps), lines never folded, and strings that YAML 1.1 readers
// (Kubernetes' and Flux's) would take for booleans or numbers (`yes`, `on`, `0777`) quoted.
import { stringify } from 'yaml';

export function toYaml(value: unknown): string {
  return stringify(value, { version: '1.1', lineWidth: 0, minContentWidth: 0 });
}
