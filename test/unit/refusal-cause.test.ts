// The kind and way out of each refusal, from the messages the API server and the scheduler gave
// on the test cluster (Kubernetes 1.34: a dry-run pod create refused by Pod Security, a quota and a
// LimitRange; a pod's PodScheduled condition), and the older scheduler's and webhooks' forms.
import { describe, expect, it } from 'vitest';
import { classifyRefusal, splitTopLevel } from '../../src/cluster/refusal-cause.js';

const ns = { namespace: 'shop' };

describe('classifyRefusal', () => {
  it('Pod Security: the level, the namespace label, each violation, the values that set them, the relabel', () => {
    const m =
      'pods "web-app-7d9c8b5f4-x2x7q" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';
    expect(classifyRefusal(m, ns)).toEqual({
      kind: 'pod-security',
      wayOut: [
        'namespace shop enforces Pod Security "restricted:latest" (label pod-security.kubernetes.io/enforce=restricted); the pods must fix:',
        '  - allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)',
        '  - unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"])',
        '  - runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)',
        '  - seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
        'charts set these through values such as podSecurityContext (the pod) and securityContext or containerSecurityContext (each container)',
        'or, where the cluster admin allows it: kubectl label namespace shop pod-security.kubernetes.io/enforce=baseline --overwrite',
      ],
    });
  });
  it("Pod Security in a namespace that only warns (a dry run's Warning header): the warn label", () => {
    const m =
      'would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';
    const r = classifyRefusal(m, ns);
    expect(r.kind).toBe('pod-security');
    expect(r.wayOut[0]).toBe(
      'namespace shop warns on Pod Security "restricted:latest" (label pod-security.kubernetes.io/warn=restricted); the pods must fix:',
    );
    expect(r.wayOut.at(-1)).toBe(
      'or, where the cluster admin allows it: kubectl label namespace shop pod-security.kubernetes.io/warn=baseline --overwrite',
    );
  });
  it('Pod Security baseline: host namespaces and privileged', () => {
    const m =
      'pods "db-0" is forbidden: violates PodSecurity "baseline:v1.30": host namespaces (hostNetwork=true), privileged (container "db" must not set securityContext.privileged=true)';
    expect(classifyRefusal(m, ns).wayOut.slice(0, 3)).toEqual([
      'namespace shop enforces Pod Security "baseline:v1.30" (label pod-security.kubernetes.io/enforce=baseline); the pods must fix:',
      '  - host namespaces (hostNetwork=true)',
      '  - privileged (container "db" must not set securityContext.privileged=true)',
    ]);
  });
  it('ResourceQuota with no room: its name, requested, used and hard', () => {
    const m =
      'pods "web-app-7d9c8b5f4-bq2lx" is forbidden: exceeded quota: tight, requested: pods=1, used: pods=1, limited: pods=1';
    expect(classifyRefusal(m, ns)).toEqual({
      kind: 'resource-quota',
      wayOut: [
        'ResourceQuota tight has no room: requested pods=1, used pods=1, hard pods=1',
        "raise it (kubectl -n shop edit resourcequota tight), free room in namespace shop, or lower the chart's replicas or resources.requests",
      ],
    });
    const cpu =
      'pods "w-1" is forbidden: exceeded quota: compute, requested: requests.cpu=2,requests.memory=1Gi, used: requests.cpu=0,requests.memory=0, limited: requests.cpu=1,requests.memory=512Mi';
    expect(classifyRefusal(cpu, ns).wayOut[0]).toBe(
      'ResourceQuota compute has no room: requested requests.cpu=2,requests.memory=1Gi, used requests.cpu=0,requests.memory=0, hard requests.cpu=1,requests.memory=512Mi',
    );
  });
  it('ResourceQuota that asks for limits the pods do not set', () => {
    const m =
      'pods "w-1" is forbidden: failed quota: compute: must specify limits.cpu for: app; limits.memory for: app';
    expect(classifyRefusal(m, ns)).toEqual({
      kind: 'resource-quota',
      wayOut: [
        'ResourceQuota compute requires it: must specify limits.cpu for: app; limits.memory for: app',
        "set them in the chart's values (resources.requests and resources.limits of each container), or have a LimitRange in namespace shop give defaults",
      ],
    });
  });
  it('LimitRange: each bound the pods break', () => {
    const one = 'pods "w-1" is forbidden: maximum cpu usage per Container is 500m, but limit is 2';
    expect(classifyRefusal(one, ns)).toEqual({
      kind: 'limit-range',
      wayOut: [
        'a LimitRange in namespace shop bounds the pods: maximum cpu usage per Container is 500m, but limit is 2',
        "set the chart's resources (resources.requests and resources.limits) within it (kubectl -n shop describe limitrange)",
      ],
    });
    const two =
      'pods "w-1" is forbidden: [maximum cpu usage per Container is 500m, but limit is 2, minimum memory usage per Pod is 64Mi, but request is 32Mi]';
    expect(classifyRefusal(two, ns).wayOut[0]).toBe(
      'a LimitRange in namespace shop bounds the pods: maximum cpu usage per Container is 500m, but limit is 2; minimum memory usage per Pod is 64Mi, but request is 32Mi',
    );
  });
  it('ValidatingAdmissionPolicy: the policy, the binding and its message', () => {
    const m =
      "pods \"w-1\" is forbidden: ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest-binding' denied request: images must not use the latest tag";
    expect(classifyRefusal(m, ns)).toEqual({
      kind: 'admission-policy',
      wayOut: [
        'ValidatingAdmissionPolicy no-latest (binding no-latest-binding) denied the pods: images must not use the latest tag',
        'change the values so the pods meet it, or ask the cluster admin (kubectl get validatingadmissionpolicy no-latest -o yaml)',
      ],
    });
  });
  it('an admission webhook that denies, or cannot be called', () => {
    expect(
      classifyRefusal(
        'admission webhook "validate.policy.example.com" denied the request: runAsNonRoot is required',
        ns,
      ),
    ).toEqual({
      kind: 'admission-webhook',
      wayOut: [
        'admission webhook validate.policy.example.com denied the pods: runAsNonRoot is required',
        'change the values so the pods meet its policy, or ask the cluster admin who runs the webhook',
      ],
    });
    const unreachable =
      'Internal error occurred: failed calling webhook "validate.policy.example.com": failed to call webhook: Post "https://policy.svc:443/validate": dial tcp 10.0.0.1:443: connect: connection refused';
    expect(classifyRefusal(unreachable, ns).wayOut[0]).toBe(
      'admission webhook validate.policy.example.com could not be called: failed to call webhook: Post "https://policy.svc:443/validate": dial tcp 10.0.0.1:443: connect: connection refused',
    );
  });
  it('the scheduler: the node selector named, taints, resources, an unbound claim', () => {
    const selector =
      "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {helm-installer.test/real-node: true}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    expect(
      classifyRefusal(selector, { namespace: 'shop', nodeSelector: { 'topology.kubernetes.io/zone': 'nowhere' } }),
    ).toEqual({
      kind: 'scheduler',
      wayOut: [
        "no node has the labels the pods ask for (nodeSelector topology.kubernetes.io/zone=nowhere): fix the chart's nodeSelector or affinity values, or label a node (kubectl get nodes --show-labels)",
        "nodes carry taints the pods do not tolerate ({helm-installer.test/real-node: true}): add tolerations in the chart's values, or schedule elsewhere",
      ],
    });
    // What the scheduler of Kubernetes 1.34 said on the test cluster (the real node is tainted).
    const now =
      "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";
    expect(classifyRefusal(now, { namespace: 'shop', nodeSelector: { zone: 'nowhere' } }).wayOut).toEqual([
      "no node has the labels the pods ask for (nodeSelector zone=nowhere): fix the chart's nodeSelector or affinity values, or label a node (kubectl get nodes --show-labels)",
      "nodes carry taints the pods do not tolerate (kubectl describe nodes | grep Taints): add tolerations in the chart's values, or schedule elsewhere",
    ]);
    expect(
      classifyRefusal(
        '0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
        ns,
      ).wayOut,
    ).toEqual([
      "no node has room for the pods' requests of cpu, memory: lower the chart's resources.requests or replicas, or add capacity",
    ]);
    expect(
      classifyRefusal(
        '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
        ns,
      ).wayOut,
    ).toEqual([
      'a PersistentVolumeClaim of the pods is not bound: kubectl -n shop get pvc (its StorageClass must exist and provision, or a PersistentVolume must match)',
    ]);
  });
  it('anything else: the message stands, with a plain way out', () => {
    expect(
      classifyRefusal('error looking up service account shop/runner: serviceaccount "runner" not found', ns),
    ).toEqual({
      kind: 'other',
      wayOut: ['the cluster refused to create the pods with the message above: fix what it names, then run again'],
    });
  });
});

describe('splitTopLevel', () => {
  it('splits at the commas outside parentheses, brackets and quotes', () => {
    expect(splitTopLevel('a (x, y), b ["1, 2"], c "d, e"')).toEqual(['a (x, y)', 'b ["1, 2"]', 'c "d, e"']);
  });
});
