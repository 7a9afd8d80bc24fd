// KWOK v0.8 simulates nothing unless its Stages are passed by --config. We take kwok's own
// "fast" stages (the set its kustomize/stage/fast bundles) from the module source, widen
// pod-complete to bare run-to-completion pods, and add two: one that fails annotated pods,
// one that returns released pool volumes to the pool.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMap, isSeq, parseDocument } from 'yaml';

/** Annotation a test puts on a pod (template) to steer KWOK. */
export const KWOK_PHASE_ANNOTATION = 'helm-installer.test/kwok-phase';
/** Label on the pre-created PersistentVolumes that the recycle stage manages. */
export const PV_POOL_LABEL = 'helm-installer.test/pv-pool';

const UPSTREAM_STAGES = [
  'node/fast/node-initialize.yaml',
  'node/heartbeat-with-lease/node-heartbeat-with-lease.yaml',
  'pod/fast/pod-ready.yaml',
  'pod/fast/pod-complete.yaml',
  'pod/fast/pod-delete.yaml',
];

// `helm-installer.test/kwok-phase: Failed`: a running pod ends Failed, its containers terminated
// with exit code 1 and reason Error, the way a crashed hook Job pod looks (podFailurePolicy
// rules on exit codes see it too).
const POD_FAIL_STAGE = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: helm-installer-pod-fail
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.annotations["${KWOK_PHASE_ANNOTATION}"]'
      operator: 'In'
      values:
      - 'Failed'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        reason: PodFailed
        status: "False"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        reason: PodFailed
        status: "False"
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 1
            finishedAt: {{ $now | Quote }}
            reason: Error
            message: "failed on purpose (${KWOK_PHASE_ANNOTATION}: Failed)"
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Failed
`;

// Pool volumes use reclaimPolicy Retain, so a deleted claim leaves its volume Released for
// good. Dropping the claimRef makes the PV controller mark it Available again.
const PV_RECYCLE_STAGE = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: helm-installer-pv-recycle
spec:
  resourceRef:
    apiGroup: v1
    kind: PersistentVolume
  selector:
    matchLabels:
      ${PV_POOL_LABEL}: "true"
    matchExpressions:
    - cel:
        expression: >-
          !has(self.metadata.deletionTimestamp)
    - cel:
        expression: >-
          has(self.status.phase) && self.status.phase == 'Released'
  steps:
  - patch:
      root: spec
      type: merge
      template: |
        claimRef: null
`;

/**
 * Upstream pod-complete completes Job-owned pods only. A kubelet also runs a bare Pod with
 * restartPolicy Never/OnFailure (helm test pods, hook Pods) to completion, and every Job pod has
 * one of those policies, so we select on the policy instead. Pods carrying our annotation are
 * left to the fail stage, or kept running.
 */
function adaptPodComplete(stageYaml: string, file: string): string {
  const doc = parseDocument(stageYaml);
  const path = ['spec', 'selector', 'matchExpressions'];
  const expressions = doc.getIn(path, true);
  const items = isSeq(expressions) ? expressions.items : [];
  const ownerIndex = items.findIndex((item) => isMap(item) && item.get('key') === '.metadata.ownerReferences.[].kind');
  if (ownerIndex < 0)
    throw new Error(`${file}: no ownerReferences selector to replace; has kwok's stage format changed?`);
  doc.setIn(
    [...path, ownerIndex],
    doc.createNode({ key: '.spec.restartPolicy', operator: 'In', values: ['Never', 'OnFailure'] }),
  );
  doc.addIn(path, { key: `.metadata.annotations["${KWOK_PHASE_ANNOTATION}"]`, operator: 'DoesNotExist' });
  return doc.toString();
}

/** Writes kwok's --config file: upstream fast stages (pod-complete adapted) plus ours. */
export async function writeKwokConfig(stagesDir: string, target: string): Promise<void> {
  const docs: string[] = [];
  for (const file of UPSTREAM_STAGES) {
    let text: string;
    try {
      text = await readFile(join(stagesDir, file), 'utf8');
    } catch {
      throw new Error(`kwok stage ${file} missing under ${stagesDir}; re-run test/cluster/build-binaries.sh`);
    }
    docs.push(file === 'pod/fast/pod-complete.yaml' ? adaptPodComplete(text, file) : text);
  }
  docs.push(POD_FAIL_STAGE, PV_RECYCLE_STAGE);
  await writeFile(target, docs.map((d) => d.trim()).join('\n---\n') + '\n');
}
