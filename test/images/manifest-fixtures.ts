// Rendered-manifest fixtures shaped like `helm template` output (`---` + `# Source:` per document).
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';

export const WORKLOADS = `---
# Source: demo/templates/pod.yaml
apiVersion: v1
kind: Pod
metadata:
  name: pod
spec:
  containers:
    - name: main
      image: nginx:1.27
  ephemeralContainers:
    - name: debug
      image: busybox
---
# Source: demo/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      initContainers:
      - name: migrate
        image: "quay.io/acme/migrate:2.0"
      containers:
      - name: web
        image: 'grafana/grafana:7.3.5'
      - name: sidecar
        image: docker.io/library/envoy@sha256:${'e'.repeat(64)}
---
# Source: demo/templates/statefulset.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template: {spec: {containers: [{name: db, image: bitnami/postgresql:16}]}}
---
# Source: demo/templates/daemonset.yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  template:
    spec:
      containers:
        - name: agent
          image: quay.io/prometheus/node-exporter:v1.8.2
---
# Source: demo/templates/replicaset.yaml
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: rs
spec:
  template:
    spec:
      containers:
        - name: rs
          image: ghcr.io/acme/rs:1
---
# Source: demo/templates/job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: once
          image: registry.k8s.io/kubectl:v1.33.0
---
# Source: demo/templates/cronjob.yaml
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          initContainers:
            - name: wait
              image: busybox:1.36
          containers:
            - name: backup
              image: acme/backup:3
---
# Source: demo/templates/rc.yaml
apiVersion: v1
kind: ReplicationController
metadata:
  name: legacy
spec:
  template:
    spec:
      containers:
        - name: legacy
          image: acme/legacy:0.1
---
# Source: demo/templates/hook.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: pre-install
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
    "helm.sh/hook-delete-policy": before-hook-creation
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: hook
          image: acme/hook:1
---
# Source: demo/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  image: not-a-pod/so-untouched:1
`;

/** Every document as plain data (YAML 1.1, as helm's consumers read it). */
export function parseStream(text: string): unknown[] {
  return parseAllDocuments(text, { version: '1.1', uniqueKeys: false }).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS({ maxAliasCount: -1 });
  });
}

/** Index paths like `spec.template.spec.containers.0.image` into plain data. */
export function setAt(root: unknown, path: (string | number)[], value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = value;
}
