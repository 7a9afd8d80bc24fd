// Running the installer Job on the real node: the one change a test makes to a shipped (or
// KOTS-rendered) Job, and reading how it ended.
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { httpRequest } from '../../src/registry/registry-http.js';
import { getJson, waitFor, type KubectlOptions } from '../cluster/kube.js';
import { realNodePlacement } from '../cluster/real-node.js';
import type { KotsRenderResult } from './kots-render.js';

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: any };
  [key: string]: any;
}

/**
 * What this cluster needs and a customer's does not: no kube-proxy and no pod network (so
 * hostNetwork, and the API server on loopback), and the real node's selector and toleration (it is
 * tainted so that nothing else lands there). The image too, when given. Returns a changed copy.
 */
export function onRealNode<T extends { kind: string; spec?: any }>(job: T, apiServerPort: number, image?: string): T {
  const copy = structuredClone(job);
  const pod = copy.spec.template.spec;
  const { env, ...placement } = realNodePlacement(apiServerPort);
  Object.assign(pod, placement);
  if (image) pod.containers[0].image = image;
  pod.containers[0].env = [...(pod.containers[0].env ?? []), ...env];
  return copy;
}

/** What KOTS would apply from a rendering of kots/, as objects, its Job on the real node (onRealNode). */
export function kotsOnRealNode(r: KotsRenderResult, apiServerPort: number, image: string): K8sObject[] {
  return r.documents
    .map((d) => parseAllDocuments(d.content)[0]!.toJS() as K8sObject)
    .map((d) => (d.kind === 'Job' ? onRealNode(d, apiServerPort, image) : d));
}

export async function finishedJob(name: string, o: KubectlOptions, timeoutMs = 240_000): Promise<any> {
  return waitFor(
    `Job ${name} finished`,
    async () => {
      const j = await getJson(['get', 'job', name], o);
      return (j.status?.conditions ?? []).some(
        (c: any) => ['Complete', 'Failed'].includes(c.type) && c.status === 'True',
      )
        ? j
        : undefined;
    },
    { timeoutMs, intervalMs: 1000 },
  );
}

/** The Job's pods, oldest first. */
export async function jobPods(name: string, o: KubectlOptions): Promise<any[]> {
  const pods = await getJson<{ items: any[] }>(['get', 'pods', '-l', `job-name=${name}`], o);
  return pods.items.sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp));
}

export const terminatedOf = (pod: any) => pod.status?.containerStatuses?.[0]?.state?.terminated;

/** The installer's Events on a Job (events.k8s.io/v1, regarding that Job by uid), oldest first. */
export async function jobEvents(job: { metadata: { name: string; uid: string } }, o: KubectlOptions): Promise<any[]> {
  const list = await getJson<{ items: any[] }>(['get', 'events.events.k8s.io'], o);
  return list.items
    .filter(
      (e) =>
        e.reportingController === 'helm-installer.io/installer' &&
        e.regarding?.kind === 'Job' &&
        e.regarding?.uid === job.metadata.uid,
    )
    .sort((a, b) => a.eventTime.localeCompare(b.eventTime));
}

/** The manifest digest a plain-HTTP registry serves for `host:port/name:tag`. */
export async function registryDigest(reference: string): Promise<string> {
  const slash = reference.indexOf('/');
  const colon = reference.lastIndexOf(':');
  const [host, name, tag] = [reference.slice(0, slash), reference.slice(slash + 1, colon), reference.slice(colon + 1)];
  const response = await httpRequest({
    url: new URL(`http://${host}/v2/${name}/manifests/${tag}`),
    method: 'HEAD',
    headers: {
      Accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
    },
    timeoutMs: 10_000,
  });
  const digest = response.headers['docker-content-digest'];
  if (response.status !== 200 || typeof digest !== 'string')
    throw new Error(`${reference}: HTTP ${response.status}, no digest`);
  return digest;
}

/** The digest the kubelet ran (containerd reports `repo@digest`; the repo may be any name of that image). */
export const ranDigest = (pod: any): string => String(pod.status.containerStatuses[0].imageID).split('@')[1] ?? '';

/**
 * One pod watched from now on: every state the API server records for it, its last included (a
 * DELETED event carries the object as it was). A polled GET misses a pod that the Job controller
 * removes moments after it ended, as on a loaded machine (issue 40); the watch does not. Started
 * before the change it observes, and live once `ready` resolves (the pod's current state arrived).
 */
export async function watchPod(kubeconfig: string, namespace: string, name: string) {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  const states: { type: string; pod: any }[] = [];
  let ended: unknown;
  const controller = await new Watch(config).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { fieldSelector: `metadata.name=${name}` },
    (type, pod) => states.push({ type, pod }),
    (err) => (ended = err ?? 'the watch ended'),
  );
  /** The first state recorded that passes `test`. */
  const seen = (what: string, test: (pod: any, type: string) => boolean, timeoutMs: number) =>
    waitFor(
      what,
      () => {
        const hit = states.find((s) => test(s.pod, s.type));
        if (hit) return hit.pod;
        if (ended)
          throw new Error(
            `${String(ended)}; states seen: ${states.map((s) => `${s.type} ${s.pod.status?.phase}`).join(', ')}`,
          );
        return undefined;
      },
      { timeoutMs, intervalMs: 100 },
    );
  const ready = seen(`pod ${name} watched`, () => true, 30_000);
  return { ready, seen, stop: () => controller.abort() };
}
