// How the export proofs compare what Flux applied from an export with what `install` applied for
// the same inputs (export-flux.test.ts, export-git-flux.test.ts): expected objects come from
// install's own releases (helm get manifest), never from the export's code; each live object is
// compared less what differs by nature between two copies in two namespaces.
import { execa } from 'execa';
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { KUSTOMIZATION } from '../cluster/flux.js';
import { getJson } from '../cluster/kube.js';
import { helm4 } from '../helpers.js';
import { kubeconfig } from './cluster-helpers.js';

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  [key: string]: any;
}

/** The release's objects as install applied them (helm's record), hooks apart. */
async function installed(release: string, ns: string): Promise<{ objects: K8sObject[]; hooks: K8sObject[] }> {
  const read = async (what: string) => {
    const r = await execa(helm4, ['get', what, release, '--namespace', ns], { env: { KUBECONFIG: kubeconfig() } });
    return parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as K8sObject)
      .filter((o) => o?.kind);
  };
  const hooks = (await read('hooks')).filter((h) => !String(h.metadata.annotations?.['helm.sh/hook']).includes('test'));
  return { objects: await read('manifest'), hooks };
}

/**
 * A live object less what differs by nature between two copies in two namespaces, and what each
 * applier adds of its own. `rendered`: helm's manifest of the object (the same for both sides): a
 * label helm adds when it applies (app.kubernetes.io/managed-by, unless the chart sets it) is
 * helm's, not the chart's; a node port the chart does not set is the API server's.
 */
function comparable(o: K8sObject, ns: string, rendered?: K8sObject): unknown {
  const c = structuredClone(o);
  if (rendered && !rendered.metadata.labels?.['app.kubernetes.io/managed-by'])
    delete c.metadata.labels?.['app.kubernetes.io/managed-by'];
  // A pod template's checksum of another rendered object (the storefront's checksum/config) hashes
  // that object's text, its namespace included: it differs with the namespace, as that object
  // does (which is compared itself, namespace aside).
  const template = c.spec?.template?.metadata;
  if (template?.annotations)
    template.annotations = Object.fromEntries(
      Object.entries(template.annotations as Record<string, string>).filter(([k]) => !k.startsWith('checksum/')),
    );
  delete c.status;
  for (const k of ['namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields'])
    delete c.metadata[k];
  const keep = (m: Record<string, string> | undefined, drop: RegExp) =>
    Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !drop.test(k)));
  // Who applied it: helm's ownership annotations, Flux's labels; the Deployment controller's revision.
  c.metadata.labels = keep(c.metadata.labels, /^kustomize\.toolkit\.fluxcd\.io\//);
  c.metadata.annotations = keep(
    c.metadata.annotations,
    /^(meta\.helm\.sh\/|deployment\.kubernetes\.io\/revision$|kustomize\.toolkit\.fluxcd\.io\/)/,
  );
  if (c.kind === 'Service') {
    for (const k of ['clusterIP', 'clusterIPs']) delete c.spec[k];
    // A NodePort or LoadBalancer Service's node ports are allocated by the API server, one per
    // copy, unless the chart sets them (ingress-nginx's controller Service).
    const fixed = new Set(
      ((rendered?.spec?.ports ?? []) as { name?: string; nodePort?: number }[])
        .filter((p) => p.nodePort)
        .map((p) => p.name),
    );
    for (const port of (c.spec.ports ?? []) as { name?: string; nodePort?: number }[])
      if (!fixed.has(port.name)) delete port.nodePort;
  }
  return JSON.parse(JSON.stringify(c).replaceAll(ns, '<namespace>'));
}

/** kubectl's name for the object's kind: `Deployment.apps`, `Promotion.storefront.example.com`, `ConfigMap`. */
function resourceOf(o: K8sObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return group ? `${o.kind}.${group}` : o.kind;
}

/** Install's objects of each release as it left them, comparable, keyed `<release>: <kind>/<name>`. */
export async function installSnapshot(releases: string[], installNs: string): Promise<Map<string, unknown>> {
  // Read before Flux applies anything: a cluster-scoped object (a ClusterRoleBinding, a CRD) is
  // the same object for both, and Flux's apply changes it.
  const byInstall = new Map<string, unknown>();
  for (const release of releases) {
    for (const o of (await installed(release, installNs)).objects) {
      const live = await getJson<K8sObject>(['get', resourceOf(o), o.metadata.name], {
        kubeconfig: kubeconfig(),
        namespace: installNs,
      });
      byInstall.set(`${release}: ${o.kind}/${o.metadata.name}`, comparable(live, installNs, o));
    }
  }
  return byInstall;
}

/** Each release's Flux inventory is install's objects plus its hooks (and CRDs); each object equals install's. */
export async function expectFluxEqualsInstall(
  at: { releases: string[]; installNs: string; appNs: string; fluxNs: string },
  byInstall: Map<string, unknown>,
): Promise<void> {
  for (const release of at.releases) {
    const { objects, hooks } = await installed(release, at.installNs);
    const k = await getJson(['get', KUSTOMIZATION, release], { kubeconfig: kubeconfig(), namespace: at.fluxNs });
    // Flux's inventory ids are <namespace>_<name>_<group>_<kind>.
    const applied = (k.status.inventory.entries as { id: string }[])
      .map((e) => {
        const [, name, , kind] = e.id.split('_');
        return `${kind}/${name}`;
      })
      .sort();
    const crds = applied.filter((x) => x.startsWith('CustomResourceDefinition/'));
    expect(applied, release).toEqual(
      [...new Set([...objects, ...hooks].map((o) => `${o.kind}/${o.metadata.name}`).concat(crds))].sort(),
    );
    for (const o of objects) {
      const live = await getJson<K8sObject>(['get', resourceOf(o), o.metadata.name], {
        kubeconfig: kubeconfig(),
        namespace: at.appNs,
      });
      const key = `${release}: ${o.kind}/${o.metadata.name}`;
      expect(comparable(live, at.appNs, o), key).toEqual(byInstall.get(key));
    }
  }
}
