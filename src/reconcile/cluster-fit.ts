// Before any change, what the API server already says of the release's pods: the classes the chart
// names that the cluster lacks (exit 3, listing those it has), and a server-side dry run of each
// pod template as a Pod in its namespace, which Pod Security, a ResourceQuota, a LimitRange and a
// ValidatingAdmissionPolicy or webhook judge as they will judge the controllers' creates, and the
// namespace's ResourceQuotas against all the pods the chart asks for (quota-fit.ts). A read
// the installer may not make (RBAC) or a namespace not created yet says nothing: the check is
// skipped for it, the wait's fail-fast still names the refusal.
import { apiMessage, apiStatus } from '../cluster/kube-errors.js';
import { collectionPath, type Obj, type ObjectClient } from '../cluster/object-client.js';
import { classifyRefusal, type RefusalKind } from '../cluster/refusal-cause.js';
import type { Logger } from 'pino';
import { manifestObjects } from '../drift/manifest-objects.js';
import { CLASS_KINDS, classReferences, missingClasses, type ClassKind, type MissingClass } from './named-classes.js';
import { isObj, podTemplates, type PodTemplate } from './pod-templates.js';
import { podDemand, quotaShortfalls } from './quota-fit.js';

interface PodRefusal {
  /** `Deployment/web`. */
  owner: string;
  /** The API server's words: a refusal (enforced) or a warning (Pod Security's warn mode). */
  message: string;
  enforced: boolean;
  kind: RefusalKind;
  wayOut: string[];
}

export interface ClusterFit {
  missing: MissingClass[];
  refusals: PodRefusal[];
}

export async function readClusterFit(
  client: ObjectClient,
  manifests: string,
  namespace: string,
  logger: Logger,
): Promise<ClusterFit> {
  // A CRD has no pods and names no class: the CRDs are not read.
  const objects = manifestObjects(manifests, { withoutCrds: true });
  const [missing, refusals, quotas] = await Promise.all([
    readMissingClasses(client, objects, logger),
    dryRunPods(client, podTemplates(objects), namespace, logger),
    readQuotaFit(client, objects, namespace, logger),
  ]);
  return { missing, refusals: [...refusals, ...quotas] };
}

/** The namespace's quotas the chart's pods do not fit in all (a dry run of one pod sees one pod). */
async function readQuotaFit(
  client: ObjectClient,
  objects: readonly Obj[],
  namespace: string,
  logger: Logger,
): Promise<PodRefusal[]> {
  const demand = podDemand(objects);
  if ((demand.get('pods') ?? 0) === 0) return [];
  let items: Obj[];
  try {
    const list = await client.list(`/api/v1/namespaces/${encodeURIComponent(namespace)}/resourcequotas`, {});
    items = (Array.isArray(list.items) ? list.items : []).filter(isObj);
  } catch (error) {
    logger.debug({ status: apiStatus(error), cause: apiMessage(error) }, 'cannot list the ResourceQuotas: not checked');
    return [];
  }
  const strings = (v: unknown): Record<string, string> =>
    isObj(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) : {};
  const quotas = items.map((q) => ({
    name: String((q.metadata as Obj | undefined)?.name),
    hard: strings((q.spec as Obj | undefined)?.hard),
    used: strings((q.status as Obj | undefined)?.used),
  }));
  return quotaShortfalls(demand, quotas).map((s) => ({
    owner: `ResourceQuota/${s.quota}`,
    message: `the chart's pods need ${s.needs} in all; ResourceQuota ${s.quota} has hard ${s.hard}, used ${s.used}${s.neverFits ? ': they cannot fit even when nothing else uses it' : " (on an upgrade the release's running pods are in used until replaced)"}`,
    enforced: false,
    kind: 'resource-quota' as const,
    wayOut: [
      `raise it (kubectl -n ${namespace} edit resourcequota ${s.quota}), free room in namespace ${namespace}, or lower the chart's replicas or resources`,
    ],
  }));
}

async function readMissingClasses(
  client: ObjectClient,
  objects: readonly Obj[],
  logger: Logger,
): Promise<MissingClass[]> {
  const refs = classReferences(objects);
  const kinds = [...new Set(refs.map((r) => r.kind))];
  const existing: Partial<Record<ClassKind, string[]>> = {};
  await Promise.all(
    kinds.map(async (kind) => {
      const k = CLASS_KINDS[kind];
      try {
        const list = await client.list(
          collectionPath(k.apiVersion, { group: '', resource: k.resource, namespaced: false }, undefined),
          {},
        );
        existing[kind] = (Array.isArray(list.items) ? list.items : []).filter(isObj).map(className).sort();
      } catch (error) {
        logger.debug(
          { kind, status: apiStatus(error), cause: apiMessage(error) },
          'cannot list the classes: not checked',
        );
      }
    }),
  );
  const made = new Set(objects.map((o) => `${o.kind}/${String((o.metadata as Obj | undefined)?.name ?? '')}`));
  return missingClasses(refs, existing, made);
}

/** `standard (default)` for the cluster's default class. */
function className(o: Obj): string {
  const metadata = isObj(o.metadata) ? o.metadata : {};
  const annotations = isObj(metadata.annotations) ? metadata.annotations : {};
  const isDefault =
    annotations['storageclass.kubernetes.io/is-default-class'] === 'true' ||
    annotations['ingressclass.kubernetes.io/is-default-class'] === 'true' ||
    o.globalDefault === true;
  return `${String(metadata.name)}${isDefault ? ' (default)' : ''}`;
}

async function dryRunPods(
  client: ObjectClient,
  templates: PodTemplate[],
  releaseNamespace: string,
  logger: Logger,
): Promise<PodRefusal[]> {
  const out = await Promise.all(templates.map((t) => dryRunPod(client, t, t.namespace ?? releaseNamespace, logger)));
  return out.flat();
}

async function dryRunPod(
  client: ObjectClient,
  t: PodTemplate,
  namespace: string,
  logger: Logger,
): Promise<PodRefusal[]> {
  const base = t.owner.split('/')[1]!.slice(0, 40).toLowerCase();
  // The namespace's default ServiceAccount: the chart's own is not there before a first install,
  // and the ServiceAccount admission would refuse the pod before Pod Security or a policy judged it.
  const { serviceAccountName: _name, serviceAccount: _legacy, ...spec } = t.spec;
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: `${base}-`, namespace, labels: t.metadata.labels, annotations: t.metadata.annotations },
    spec,
  };
  try {
    const { warnings } = await client.createDryRun(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, pod);
    return warnings.filter((w) => /PodSecurity/.test(w)).map((w) => refusal(t.owner, w, namespace, false));
  } catch (error) {
    const message = apiMessage(error);
    const found = refusal(t.owner, message, namespace, true);
    // Not a refusal of the pods' own: the namespace not there yet, a ServiceAccount the release
    // creates, a webhook that cannot take a dry run.
    if (found.kind === 'other') {
      logger.debug(
        { object: t.owner, status: apiStatus(error), cause: message },
        'dry run of the pods said nothing of their admission',
      );
      return [];
    }
    return [found];
  }
}

function refusal(owner: string, message: string, namespace: string, enforced: boolean): PodRefusal {
  const m = message.replace(/\s+/g, ' ').trim();
  const r = classifyRefusal(m, { namespace });
  return { owner, message: m.length > 600 ? `${m.slice(0, 597)}...` : m, enforced, kind: r.kind, wayOut: r.wayOut };
}
