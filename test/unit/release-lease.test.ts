// The Lease's takeover decision, row by row: whether a holder is provably gone (judgeHolder, pure),
// what to do with the Lease given that (decideLease, pure), the annotation a holder writes, and
// the same-host reads on real processes (a child process alive, then SIGKILLed with its group).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { KubeClients } from '../../src/cluster/kube-client.js';
import {
  judgeHolder,
  parseHolderRecord,
  podFact,
  readHolderFacts,
  selfRecord,
  type HolderFacts,
  type HolderRecord,
  type HolderVerdict,
} from '../../src/cluster/lease-holder.js';
import { decideLease, type LeaseState } from '../../src/cluster/lease-decision.js';

const self: HolderRecord = {
  pid: 700,
  boot: 'boot-a',
  pidNamespace: 'pid:[1]',
  start: '5000',
  group: 700,
  pod: { namespace: 'shop', name: 'installer-b' },
};
const here = (h: Partial<HolderRecord> = {}): HolderRecord => ({
  pid: 42,
  boot: 'boot-a',
  pidNamespace: 'pid:[1]',
  start: '100',
  group: 42,
  ...h,
});
const inPod = (h: Partial<HolderRecord> = {}): HolderRecord => ({
  pid: 1,
  boot: 'boot-b',
  pidNamespace: 'pid:[9]',
  start: '7',
  group: 1,
  pod: { namespace: 'shop', name: 'installer-a' },
  ...h,
});
const pod = (
  phase: string,
  containers: ('running' | 'terminated' | 'waiting')[],
  restartPolicy = 'Never',
  ready?: boolean,
) => ({ kind: 'found' as const, phase, restartPolicy, containers, ready });

describe('judgeHolder: provably gone, provably alive, or unsure (wait as before)', () => {
  const rows: [string, HolderRecord | undefined, HolderFacts, HolderVerdict['kind'], RegExp][] = [
    // No record: an installer from before this annotation; nothing can be proved.
    ['older installer, no record', undefined, {}, 'unsure', /older installer/],
    // The same host (boot and PID namespace): its pid, then its process group (helm).
    [
      'same host, pid and group gone',
      here(),
      { process: { kind: 'absent' }, groupMembers: 0 },
      'gone',
      /^pid 42 no longer exists on this host, nor anything of its process group/,
    ],
    [
      'same host, pid gone, its helm still runs in its group',
      here(),
      { process: { kind: 'absent' }, groupMembers: 1 },
      'unsure',
      /1 process\(es\) of its group 42 \(its helm\?\) still run/,
    ],
    [
      'same host, pid gone, group not looked up',
      here(),
      { process: { kind: 'absent' } },
      'unsure',
      /process group was not looked up/,
    ],
    [
      'same host, pid gone, group is 1 (kill(-1) would mean every process)',
      here({ group: 1 }),
      { process: { kind: 'absent' }, groupMembers: 0 },
      'unsure',
      /process group is unknown/,
    ],
    [
      'same host, pid gone, group unknown',
      here({ group: undefined }),
      { process: { kind: 'absent' }, groupMembers: 0 },
      'unsure',
      /process group is unknown/,
    ],
    [
      'same host, pid alive, same start time',
      here(),
      { process: { kind: 'present', start: '100' } },
      'alive',
      /^pid 42 still runs on this host$/,
    ],
    [
      'same host, pid reused by another process',
      here(),
      { process: { kind: 'present', start: '999' }, groupMembers: 0 },
      'gone',
      /^pid 42 is now another process/,
    ],
    [
      'same host, pid exists, start unknown',
      here({ start: undefined }),
      { process: { kind: 'present', start: '100' } },
      'unsure',
      /start time is unknown/,
    ],
    ['same host, pid not looked up', here(), {}, 'unsure', /not looked up/],
    // Another PID namespace or boot with the same hostname (hostNetwork pods, a container
    // restarted): its pid means nothing here.
    [
      'same boot, other PID namespace, no pod',
      here({ pidNamespace: 'pid:[2]' }),
      { process: { kind: 'absent' }, groupMembers: 0 },
      'unsure',
      /another host/,
    ],
    [
      'other boot, no pod',
      here({ boot: 'boot-z' }),
      { process: { kind: 'absent' }, groupMembers: 0 },
      'unsure',
      /another host/,
    ],
    ['no boot id (no /proc), no pod', here({ boot: undefined }), {}, 'unsure', /another host/],
    // In a pod of this cluster: the pod, read through the API.
    ['pod deleted', inPod(), { pod: { kind: 'absent' } }, 'gone', /^its pod shop\/installer-a no longer exists$/],
    ['pod Failed', inPod(), { pod: pod('Failed', ['terminated']) }, 'gone', /has ended \(Failed\)/],
    ['pod Succeeded', inPod(), { pod: pod('Succeeded', ['terminated']) }, 'gone', /has ended \(Succeeded\)/],
    [
      'pod Running, its container terminated, never restarts',
      inPod(),
      { pod: pod('Running', ['terminated']) },
      'gone',
      /every container of its pod shop\/installer-a has terminated/,
    ],
    [
      'pod Running, container terminated but restarts (OnFailure)',
      inPod(),
      { pod: pod('Running', ['terminated'], 'OnFailure') },
      'unsure',
      /is Running/,
    ],
    [
      'pod Running, container running, readiness unknown',
      inPod(),
      { pod: pod('Running', ['running']) },
      'unsure',
      /is Running, not Ready$/,
    ],
    // Its node's kubelet vouches for it, however late its renewals (a node under pressure).
    [
      'pod Running and Ready, container running',
      inPod(),
      { pod: pod('Running', ['running'], 'Never', true) },
      'alive',
      /^its pod shop\/installer-a is Running and Ready$/,
    ],
    // Its node lost: the node controller marks its pods not Ready; the Lease then expires as before.
    [
      'pod Running, not Ready (node lost)',
      inPod(),
      { pod: pod('Running', ['running'], 'Never', false) },
      'unsure',
      /is Running, not Ready$/,
    ],
    [
      'pod Running and Ready, installer terminated, a sidecar runs',
      inPod(),
      { pod: pod('Running', ['terminated', 'running'], 'OnFailure', true) },
      'unsure',
      /is Running$/,
    ],
    [
      'pod Running, installer terminated, a sidecar runs',
      inPod(),
      { pod: pod('Running', ['terminated', 'running']) },
      'unsure',
      /is Running/,
    ],
    [
      'pod Pending, no container status yet (the kubelet has not reported)',
      inPod(),
      { pod: pod('Pending', []) },
      'unsure',
      /is Pending/,
    ],
    ['pod Pending, container waiting', inPod(), { pod: pod('Pending', ['waiting']) }, 'unsure', /is Pending/],
    [
      'pod unreadable: RBAC',
      inPod(),
      { pod: { kind: 'unreadable', why: 'RBAC forbids reading pods (get pods)' } },
      'unsure',
      /cannot read its pod shop\/installer-a: RBAC forbids/,
    ],
    [
      'pod unreadable: API error',
      inPod(),
      { pod: { kind: 'unreadable', why: 'API call timed out after 3000 ms' } },
      'unsure',
      /timed out/,
    ],
    ['pod not read', inPod(), {}, 'unsure', /was not read/],
    // A retry pod's container may get its predecessor's PID namespace number (reused once that
    // namespace is gone): pid 1 is now this run, its group is 1, so the pod decides.
    [
      'same PID namespace number, pid 1 is us now, its pod Failed',
      inPod({ boot: 'boot-a', pidNamespace: 'pid:[1]' }),
      { process: { kind: 'present', start: '5000' }, pod: pod('Failed', ['terminated']) },
      'gone',
      /has ended \(Failed\)/,
    ],
    [
      'same PID namespace number, pid 1 is us now, its pod Running',
      inPod({ boot: 'boot-a', pidNamespace: 'pid:[1]' }),
      { process: { kind: 'present', start: '5000' }, pod: pod('Running', ['running']) },
      'unsure',
      /^pid 1 is now another process, but its process group is unknown$/,
    ],
    // The same host wins over the pod: a holder in our own PID namespace is judged by its pid.
    [
      'in our pod and PID namespace, pid alive',
      here({ pod: self.pod }),
      { process: { kind: 'present', start: '100' }, pod: { kind: 'absent' } },
      'alive',
      /still runs/,
    ],
  ];
  it.each(rows)('%s', (_name, holder, facts, kind, why) => {
    const v = judgeHolder(holder, self, facts);
    expect(v.kind).toBe(kind);
    expect(v.why).toMatch(why);
  });
});

describe('decideLease: take, take over, or wait', () => {
  const held: LeaseState = { kind: 'held', holder: 'pod-a/1/abcdef', renewedSecondsAgo: 3, expiresInSeconds: 12 };
  const expired: LeaseState = { kind: 'expired', holder: 'pod-a/1/abcdef', renewedSecondsAgo: 17 };
  const gone: HolderVerdict = { kind: 'gone', why: 'its pod shop/pod-a no longer exists' };
  const alive: HolderVerdict = { kind: 'alive', why: 'pid 1 still runs on this host' };
  const unsure: HolderVerdict = {
    kind: 'unsure',
    why: 'cannot read its pod shop/pod-a: RBAC forbids reading pods (get pods)',
  };
  const rows: [string, LeaseState, HolderVerdict | undefined, ReturnType<typeof decideLease>][] = [
    ['free: take', { kind: 'free' }, undefined, { action: 'take' }],
    ['ours: take', { kind: 'ours' }, undefined, { action: 'take' }],
    [
      'held, holder gone: take over at once',
      held,
      gone,
      { action: 'take over', holder: 'pod-a/1/abcdef', why: gone.why, expired: false, renewedSecondsAgo: 3 },
    ],
    ['held, holder unsure: wait', held, unsure, { action: 'wait', holder: 'pod-a/1/abcdef', why: unsure.why }],
    ['held, holder alive: wait', held, alive, { action: 'wait', holder: 'pod-a/1/abcdef', why: alive.why }],
    ['held, nothing known: wait', held, undefined, { action: 'wait', holder: 'pod-a/1/abcdef', why: undefined }],
    [
      'expired, holder gone: take over, saying why',
      expired,
      gone,
      { action: 'take over', holder: 'pod-a/1/abcdef', why: gone.why, expired: true, renewedSecondsAgo: 17 },
    ],
    [
      'expired, holder unsure: take over as before',
      expired,
      unsure,
      {
        action: 'take over',
        holder: 'pod-a/1/abcdef',
        why: 'it has not renewed its Lease for 17s',
        expired: true,
        renewedSecondsAgo: 17,
      },
    ],
    [
      'expired, nothing known: take over as before',
      expired,
      undefined,
      {
        action: 'take over',
        holder: 'pod-a/1/abcdef',
        why: 'it has not renewed its Lease for 17s',
        expired: true,
        renewedSecondsAgo: 17,
      },
    ],
    // Stalled past its duration but provably running (its helm may still apply): never taken.
    [
      'expired, holder provably alive: wait',
      expired,
      alive,
      {
        action: 'wait',
        holder: 'pod-a/1/abcdef',
        why: 'it has not renewed its Lease for 17s, but pid 1 still runs on this host',
      },
    ],
  ];
  it.each(rows)('%s', (_name, state, verdict, decision) => {
    expect(decideLease(state, verdict)).toEqual(decision);
  });
});

describe('the holder record (annotation helm-installer/holder)', () => {
  it("reads what a holder wrote, only when its pid is the identity's", () => {
    const record = inPod({ pid: 7, group: 7 });
    const text = JSON.stringify(record);
    expect(parseHolderRecord(text, 'installer-a/7/abcdef')).toEqual(record);
    expect(parseHolderRecord(text, 'installer-a/8/abcdef')).toBeUndefined();
    expect(parseHolderRecord(undefined, 'installer-a/7/abcdef')).toBeUndefined();
    expect(parseHolderRecord('{not json', 'installer-a/7/abcdef')).toBeUndefined();
    expect(parseHolderRecord('"a string"', 'installer-a/7/abcdef')).toBeUndefined();
    expect(parseHolderRecord(JSON.stringify({ pid: 7, pod: { name: 'x' } }), 'h/7/n')).toEqual({
      pid: 7,
      boot: undefined,
      pidNamespace: undefined,
      start: undefined,
      group: undefined,
      pod: undefined,
    });
    expect(parseHolderRecord(JSON.stringify({ pid: -7 }), 'h/-7/n')).toBeUndefined();
  });

  it('names its pod only from the downward API, and only when it talks to its own cluster', () => {
    const env = {
      POD_NAME: 'installer-x',
      POD_NAMESPACE: 'shop',
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
    };
    expect(selfRecord('https://10.96.0.1:443', env).pod).toEqual({ namespace: 'shop', name: 'installer-x' });
    expect(selfRecord('https://[fd00::1]:443', { ...env, KUBERNETES_SERVICE_HOST: 'fd00::1' }).pod).toEqual({
      namespace: 'shop',
      name: 'installer-x',
    });
    // A kubeconfig for another cluster: its pod is not there.
    expect(selfRecord('https://api.other.example:6443', env).pod).toBeUndefined();
    // No POD_NAME: the hostname is not trusted (hostNetwork pods carry the node's).
    expect(selfRecord('https://10.96.0.1:443', { ...env, POD_NAME: undefined }).pod).toBeUndefined();
    // Outside a pod.
    expect(selfRecord('https://10.96.0.1:443', { POD_NAME: 'installer-x', POD_NAMESPACE: 'shop' }).pod).toBeUndefined();
  });

  it('this process: its boot, PID namespace, start time and process group, from /proc', () => {
    const me = selfRecord('https://127.0.0.1:6443', {});
    expect(me.pid).toBe(process.pid);
    expect(me.boot).toMatch(/^[0-9a-f-]{36}$/);
    expect(me.pidNamespace).toMatch(/^pid:\[\d+\]$/);
    expect(me.start).toMatch(/^\d+$/);
    expect(me.group).toBeGreaterThan(0);
  });

  it("reads a pod's state as the judgement needs it", () => {
    expect(
      podFact({
        spec: { restartPolicy: 'Never', containers: [] },
        status: {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'installer',
              image: '',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 137 } },
            } as never,
          ],
        },
      }),
    ).toEqual({ kind: 'found', phase: 'Running', restartPolicy: 'Never', containers: ['terminated'], ready: false });
    expect(
      podFact({
        spec: { restartPolicy: 'Never', containers: [] },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [
            {
              name: 'installer',
              image: '',
              imageID: '',
              ready: true,
              restartCount: 0,
              state: { running: {} },
            } as never,
          ],
        },
      }),
    ).toEqual({ kind: 'found', phase: 'Running', restartPolicy: 'Never', containers: ['running'], ready: true });
  });
});

/** Whether a process whose parent is `pid` exists (from /proc). */
function childOf(pid: number): boolean {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .some((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

describe('a holder on this host, as real processes', () => {
  // The pod path is never taken for a holder in our own PID namespace: no API client is used.
  const noCluster = {} as KubeClients;

  it('alive while it runs; gone once it and its process group (a child standing in for helm) are killed', async () => {
    const me = selfRecord('https://127.0.0.1:6443', {});
    // A holder in its own process group with a child of its own, as the installer runs helm.
    const holder = spawn('sh', ['-c', 'sleep 300 & wait'], { detached: true, stdio: 'ignore' });
    await once(holder, 'spawn');
    const stat = readFileSync(`/proc/${holder.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const record: HolderRecord = {
      ...me,
      pid: holder.pid!,
      start: fields[19],
      group: Number(fields[2]),
      pod: undefined,
    };
    expect(record.group).toBe(holder.pid);
    const judge = async () => judgeHolder(record, me, await readHolderFacts(noCluster, record, me, {}));
    // Its child started (sh forks sleep a moment later).
    for (let i = 0; i < 100 && !childOf(holder.pid!); i++) await new Promise((r) => setTimeout(r, 20));
    expect(childOf(holder.pid!)).toBe(true);
    expect(await judge()).toEqual({ kind: 'alive', why: `pid ${holder.pid} still runs on this host` });

    // The holder alone is killed: its child (helm) still runs in the group, so not proved gone.
    const exited = once(holder, 'exit');
    process.kill(holder.pid!, 'SIGKILL');
    await exited;
    const orphaned = await judge();
    expect(orphaned.kind).toBe('unsure');
    expect(orphaned.why).toMatch(/still run/);

    process.kill(-holder.pid!, 'SIGKILL');
    let v = await judge();
    for (let i = 0; i < 50 && v.kind !== 'gone'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      v = await judge();
    }
    expect(v).toEqual({
      kind: 'gone',
      why: `pid ${holder.pid} no longer exists on this host, nor anything of its process group (helm)`,
    });
  });
});
