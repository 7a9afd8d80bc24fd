// Where a run's Events go: on the Job the installer runs in (its namespace), else on the
// release's namespace. Pure but for reading the pod's namespace; the tellers (src/tell/events.ts)
// write there, and the RBAC preflight (src/reconcile/checks.ts) asks for `create events` there.
import type { KubeConfig } from '@kubernetes/client-node';
import { readPodNamespace } from '../cluster/kube-client.js';
import type { Outcome } from './outcome.js';

/** What the Event is about (its `regarding`): `kubectl describe` matches kind, name, namespace and uid. */
export interface ObjectReference {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid?: string;
}

/** The Job the installer runs in (HELM_INSTALLER_JOB_NAME, _UID, _NAMESPACE: the downward API). */
export interface JobRef {
  name: string;
  namespace: string;
  /** Without it `kubectl get events` still shows the Event, `kubectl describe job` does not. */
  uid?: string;
}

export interface EventPlace {
  /** Where the Event object is created (the `create events` permission is needed there). */
  namespace: string;
  regarding: ObjectReference;
}

/** The Job a run is in, as its options name it (install's --job-name, --job-uid, --job-namespace). */
export interface JobOptions {
  jobName?: string;
  jobUid?: string;
  jobNamespace?: string;
}

/**
 * The Job from the options, or undefined outside a Job. Its namespace, when not given, is the
 * pod's own (a Job's pods run in its namespace): POD_NAMESPACE, the service account's, else the
 * kubeconfig context's.
 */
export function jobOf(
  o: JobOptions,
  env: NodeJS.ProcessEnv,
  podNamespace: () => string | undefined,
  contextNamespace: string | undefined,
): JobRef | undefined {
  if (!o.jobName) return undefined;
  const namespace = o.jobNamespace ?? (env.POD_NAMESPACE || podNamespace() || contextNamespace || 'default');
  return { name: o.jobName, namespace, ...(o.jobUid ? { uid: o.jobUid } : {}) };
}

/**
 * Where an outcome's Event goes: on the Job, in the Job's namespace (a release plan's releases
 * elsewhere included); outside a Job on the release's namespace, kept in that namespace. A
 * Namespace is cluster-scoped, and the API keeps an Event about a cluster-scoped object in
 * `default` unless its reference names a namespace: naming the namespace itself keeps the Event
 * where `kubectl get events -n <release namespace>` shows it.
 */
export function placeOf(outcome: Pick<Outcome, 'namespace'>, job: JobRef | undefined): EventPlace {
  if (job) {
    return {
      namespace: job.namespace,
      regarding: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: job.name,
        namespace: job.namespace,
        ...(job.uid ? { uid: job.uid } : {}),
      },
    };
  }
  return {
    namespace: outcome.namespace,
    regarding: { apiVersion: 'v1', kind: 'Namespace', name: outcome.namespace, namespace: outcome.namespace },
  };
}

/** The Job from the run's options (undefined outside a Job). */
export function runJob(
  o: JobOptions,
  config: Pick<KubeConfig, 'getContextObject' | 'getCurrentContext'>,
  env = process.env,
): JobRef | undefined {
  return jobOf(o, env, readPodNamespace, config.getContextObject(config.getCurrentContext())?.namespace);
}

/** The namespace a release's Events go to: the RBAC preflight names `create events` there. */
export function eventNamespace(
  o: JobOptions,
  config: Pick<KubeConfig, 'getContextObject' | 'getCurrentContext'>,
  releaseNamespace: string,
): string {
  return placeOf({ namespace: releaseNamespace }, runJob(o, config)).namespace;
}
