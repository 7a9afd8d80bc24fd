// Whether the installer that holds a release Lease is provably gone, so the next run may take the
// Lease over at once instead of waiting for it to expire. The holder writes beside its
// holderIdentity (pod/pid/nonce, unchanged) an annotation that says where its process lives: the
// kernel boot and PID namespace it ran in, its pid's start time and process group (helm runs in
// it), and the pod it ran in. A waiting run reads what it can (/proc on the same host, the pod
// through the API), and judgeHolder decides, purely: "gone" only on proof, "alive" only on proof,
// everything else (another host, RBAC forbids reading pods, an API error, an older installer's
// Lease without the annotation) is "unsure", which waits as before.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { apiStatus, withCallTimeout } from './kube-errors.js';
import type { KubeClients } from './kube-client.js';

export const HOLDER_ANNOTATION = 'helm-installer/holder';
const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** Where a holder's process lives (the annotation's JSON). Every field but pid may be unknown. */
export interface HolderRecord {
  pid: number;
  /** /proc/sys/kernel/random/boot_id: the same kernel boot. */
  boot?: string;
  /** readlink /proc/self/ns/pid ("pid:[4026531836]"): within a boot, the same PID namespace. */
  pidNamespace?: string;
  /** Start time of the pid (clock ticks after boot, /proc/<pid>/stat field 22): a reused pid differs. */
  start?: string;
  /** Its process group: helm and the post-render shims run in it, and may outlive the installer. */
  group?: number;
  /** Its pod, only when it talks to the API server of that pod's own cluster. */
  pod?: { namespace: string; name: string };
}

/** What was read about a holder's pod. */
export type PodFact =
  | { kind: 'absent' }
  | {
      kind: 'found';
      phase?: string;
      restartPolicy?: string;
      containers: ('running' | 'terminated' | 'waiting' | 'unknown')[];
      ready?: boolean;
    }
  | { kind: 'unreadable'; why: string };

export interface HolderFacts {
  /** Its pid in our PID namespace (read only when the holder shares it); a zombie is absent. */
  process?: { kind: 'absent' } | { kind: 'present'; start?: string };
  /** Live (not zombie) processes left in its process group, ours included. */
  groupMembers?: number;
  pod?: PodFact;
}

export type HolderVerdict =
  { kind: 'gone'; why: string } | { kind: 'alive'; why: string } | { kind: 'unsure'; why: string };

/** Pure. Proof that the holder's process (and its helm) no longer runs, or that it does. */
export function judgeHolder(holder: HolderRecord | undefined, self: HolderRecord, facts: HolderFacts): HolderVerdict {
  if (!holder) return { kind: 'unsure', why: 'its Lease does not say where it runs (an older installer)' };
  if (sameProcessSpace(holder, self)) {
    // A PID namespace's number is reused once the namespace is gone (a retry pod's container on
    // the same node often gets its predecessor's): what its pid cannot prove, its pod may.
    const byProcess = judgeProcess(holder, facts);
    if (byProcess.kind !== 'unsure' || !holder.pod) return byProcess;
    const byPod = judgePod(holder.pod, facts.pod);
    return byPod.kind === 'gone' ? byPod : byProcess;
  }
  if (holder.pod) return judgePod(holder.pod, facts.pod);
  return { kind: 'unsure', why: 'it runs on another host, not in a pod of this cluster' };
}

function sameProcessSpace(a: HolderRecord, b: HolderRecord): boolean {
  return !!a.boot && !!a.pidNamespace && a.boot === b.boot && a.pidNamespace === b.pidNamespace;
}

function judgeProcess(holder: HolderRecord, facts: HolderFacts): HolderVerdict {
  const p = facts.process;
  if (!p) return { kind: 'unsure', why: `pid ${holder.pid} was not looked up` };
  if (p.kind === 'present') {
    if (!holder.start || !p.start)
      return { kind: 'unsure', why: `pid ${holder.pid} exists (its start time is unknown)` };
    if (p.start === holder.start) return { kind: 'alive', why: `pid ${holder.pid} still runs on this host` };
  }
  const ended =
    p.kind === 'absent'
      ? `pid ${holder.pid} no longer exists on this host`
      : `pid ${holder.pid} is now another process`;
  // helm runs in the installer's process group and outlives an installer killed alone.
  if (holder.group === undefined || holder.group <= 1)
    return { kind: 'unsure', why: `${ended}, but its process group is unknown` };
  if (facts.groupMembers === undefined)
    return { kind: 'unsure', why: `${ended}, but its process group was not looked up` };
  if (facts.groupMembers > 0)
    return {
      kind: 'unsure',
      why: `${ended}, but ${facts.groupMembers} process(es) of its group ${holder.group} (its helm?) still run`,
    };
  return { kind: 'gone', why: `${ended}, nor anything of its process group (helm)` };
}

function judgePod(pod: NonNullable<HolderRecord['pod']>, fact: PodFact | undefined): HolderVerdict {
  const name = `${pod.namespace}/${pod.name}`;
  if (!fact) return { kind: 'unsure', why: `its pod ${name} was not read` };
  if (fact.kind === 'unreadable') return { kind: 'unsure', why: `cannot read its pod ${name}: ${fact.why}` };
  if (fact.kind === 'absent') return { kind: 'gone', why: `its pod ${name} no longer exists` };
  if (fact.phase === 'Succeeded' || fact.phase === 'Failed')
    return { kind: 'gone', why: `its pod ${name} has ended (${fact.phase})` };
  // A container that never restarts and has terminated cannot hold anything any more; with
  // restarts, a terminated status may be an earlier instance of a container that runs again.
  if (
    fact.restartPolicy === 'Never' &&
    fact.containers.length > 0 &&
    fact.containers.every((c) => c === 'terminated')
  ) {
    return { kind: 'gone', why: `every container of its pod ${name} has terminated` };
  }
  // Running, every container running and Ready: its node's kubelet vouches for it, however late
  // its renewals (a node under pressure starves the installer; issue 40). A node lost stops
  // vouching: the node controller marks its pods not Ready, and the Lease expires as before.
  if (
    fact.phase === 'Running' &&
    fact.ready &&
    fact.containers.length > 0 &&
    fact.containers.every((c) => c === 'running')
  ) {
    return { kind: 'alive', why: `its pod ${name} is Running and Ready` };
  }
  return {
    kind: 'unsure',
    why: `its pod ${name} is ${fact.phase ?? 'in an unknown phase'}${fact.phase === 'Running' && !fact.ready ? ', not Ready' : ''}`,
  };
}

/** The annotation's value, or undefined when it is missing, malformed or names another pid. */
export function parseHolderRecord(annotation: string | undefined, identity: string): HolderRecord | undefined {
  if (!annotation) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(annotation);
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const int = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);
  const pid = int(r.pid);
  // The record must be the identity's own (pod/pid/nonce): a pid that disagrees proves nothing.
  if (pid === undefined || identity.split('/').at(-2) !== String(pid)) return undefined;
  const pod = r.pod as Record<string, unknown> | undefined;
  const podName = text(pod?.name);
  const podNamespace = text(pod?.namespace);
  return {
    pid,
    boot: text(r.boot),
    pidNamespace: text(r.pidNamespace),
    start: text(r.start),
    group: int(r.group),
    pod: podName && podNamespace ? { namespace: podNamespace, name: podName } : undefined,
  };
}

let selfCache: HolderRecord | undefined;

/** This process's record (read once): what a later run needs to prove it gone. */
export function selfRecord(server: string, env: NodeJS.ProcessEnv = process.env): HolderRecord {
  if (!selfCache) {
    const stat = procStat('self');
    selfCache = {
      pid: process.pid,
      boot: tryRead(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
      pidNamespace: tryRead(() => readlinkSync('/proc/self/ns/pid')),
      start: stat?.start,
      group: stat?.group,
    };
  }
  return { ...selfCache, pod: ownPod(server, env) };
}

/**
 * The pod this runs in, from the downward API (POD_NAME; POD_NAMESPACE or the service account's
 * namespace), and only when the API server is this pod's own cluster (the in-cluster address):
 * a run that talks to another cluster would have its pod looked up where it does not exist. The
 * hostname is not used: with hostNetwork (or spec.hostname) it is not the pod's name.
 */
function ownPod(server: string, env: NodeJS.ProcessEnv): HolderRecord['pod'] {
  const name = env.POD_NAME;
  const host = env.KUBERNETES_SERVICE_HOST;
  if (!name || !host) return undefined;
  const namespace = env.POD_NAMESPACE || tryRead(() => readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim());
  if (!namespace) return undefined;
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return undefined;
  }
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (
    url.hostname.replace(/^\[|\]$/g, '') !== host.replace(/^\[|\]$/g, '') ||
    port !== (env.KUBERNETES_SERVICE_PORT ?? '443')
  )
    return undefined;
  return { namespace, name };
}

/** The small reads judgeHolder needs: /proc for a holder on this host, else its pod (one GET). */
export async function readHolderFacts(
  kube: KubeClients,
  holder: HolderRecord | undefined,
  self: HolderRecord,
  podsReadable: { forbidden?: string },
): Promise<HolderFacts> {
  if (!holder) return {};
  let facts: HolderFacts = {};
  if (sameProcessSpace(holder, self)) {
    const stat = procStat(String(holder.pid));
    const process: HolderFacts['process'] =
      stat && !stat.zombie ? { kind: 'present', start: stat.start } : { kind: 'absent' };
    const ended =
      process.kind === 'absent' ||
      (holder.start !== undefined && process.start !== undefined && process.start !== holder.start);
    facts = {
      process,
      groupMembers: ended && holder.group && holder.group > 1 ? groupMembers(holder.group) : undefined,
    };
    if (judgeProcess(holder, facts).kind !== 'unsure') return facts;
  }
  if (!holder.pod) return facts;
  return { ...facts, pod: await readPod(kube, holder.pod, podsReadable) };
}

async function readPod(
  kube: KubeClients,
  holder: NonNullable<HolderRecord['pod']>,
  podsReadable: { forbidden?: string },
): Promise<PodFact> {
  if (podsReadable.forbidden) return { kind: 'unreadable', why: podsReadable.forbidden };
  try {
    return podFact(
      await withCallTimeout(kube.core.readNamespacedPod({ name: holder.name, namespace: holder.namespace }), 3000),
    );
  } catch (err) {
    const status = apiStatus(err);
    if (status === 404) return { kind: 'absent' };
    if (status === 403) {
      // Not asked again this run: without `get` on pods, the Lease is waited for as before.
      podsReadable.forbidden = 'RBAC forbids reading pods (get pods)';
      return { kind: 'unreadable', why: podsReadable.forbidden };
    }
    return { kind: 'unreadable', why: (err as Error).message?.split('\n')[0] ?? String(err) };
  }
}

export function podFact(pod: V1Pod): PodFact {
  const statuses = [
    ...(pod.status?.initContainerStatuses ?? []),
    ...(pod.status?.containerStatuses ?? []),
    ...(pod.status?.ephemeralContainerStatuses ?? []),
  ];
  return {
    kind: 'found',
    phase: pod.status?.phase,
    restartPolicy: pod.spec?.restartPolicy,
    containers: statuses.map((s) =>
      s.state?.running ? 'running' : s.state?.terminated ? 'terminated' : s.state?.waiting ? 'waiting' : 'unknown',
    ),
    ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
  };
}

/** /proc/<pid>/stat: state, process group, start time; undefined when there is no such process. */
function procStat(pid: string): { start?: string; group?: number; zombie: boolean } | undefined {
  const stat = tryRead(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  if (!stat) return undefined;
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ")".
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const group = Number(fields[2]);
  return {
    zombie: fields[0] === 'Z' || fields[0] === 'X',
    group: Number.isSafeInteger(group) && group > 0 ? group : undefined,
    start: fields[19] || undefined,
  };
}

/** Live processes of a process group (zombies excluded: they run nothing). */
function groupMembers(group: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  let n = 0;
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const s = procStat(e);
    if (s && !s.zombie && s.group === group) n++;
  }
  return n;
}

function tryRead<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
