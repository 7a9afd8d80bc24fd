import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/common/exit-codes.js';
import { classifyHelmFailure, extractCause, namedResources } from '../../src/helm/helm-errors.js';

const base = { release: 'shop', action: 'install/upgrade', exitCode: 1 };

describe('classifyHelmFailure', () => {
  const cases: [string, string, number][] = [
    [
      'busy',
      'Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress',
      ExitCode.releaseBusy,
    ],
    [
      'unreachable v4',
      'Error: kubernetes cluster unreachable: Get "https://127.0.0.1:6443/version": dial tcp 127.0.0.1:6443: connect: connection refused',
      ExitCode.transient,
    ],
    [
      'unreachable v3',
      'Error: Kubernetes cluster unreachable: the server has asked for the client to provide credentials',
      ExitCode.transient,
    ],
    ['bad --set', 'Error: failed parsing --set data: key "a" has no value', ExitCode.usage],
    ['unknown flag', 'Error: unknown flag: --bogus', ExitCode.usage],
    [
      'schema',
      "Error: values don't meet the specifications of the schema(s) in the following chart(s):\nstorefront:\n- web.replicaCount: Invalid type. Expected: integer, given: string",
      ExitCode.invalidInput,
    ],
    [
      'template',
      'Error: template: storefront/templates/web.yaml:12:3: executing "x" at <.Values.a.b>: nil pointer evaluating interface {}.b',
      ExitCode.invalidInput,
    ],
    [
      'rbac',
      'Error: UPGRADE FAILED: deployments.apps "web" is forbidden: User "system:serviceaccount:x:y" cannot patch resource',
      ExitCode.preflightFailed,
    ],
    [
      'immutable field (not RBAC)',
      "Error: UPGRADE FAILED: an error occurred while rolling back the release. original upgrade error: StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy' are forbidden: StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec",
      ExitCode.helmFailed,
    ],
    [
      'rolled back',
      'Error: UPGRADE FAILED: release shop failed, and has been rolled back due to rollback-on-failure being set: context deadline exceeded',
      ExitCode.helmFailed,
    ],
    [
      'hook failed',
      'Error: UPGRADE FAILED: pre-upgrade hooks failed: 1 error occurred:\n\t* job shop-migrate failed: BackoffLimitExceeded',
      ExitCode.helmFailed,
    ],
  ];
  for (const [name, stderr, code] of cases) {
    it(`${name} -> exit ${code}`, () => {
      expect(classifyHelmFailure({ ...base, stderr }).exitCode).toBe(code);
    });
  }

  it('says the release was rolled back and names the timed-out resource', () => {
    const err = classifyHelmFailure({
      ...base,
      stderr:
        'resource Deployment/shop/shop-web not ready. status: InProgress, message: Available: 0/1\nError: UPGRADE FAILED: release shop failed, and has been rolled back due to rollback-on-failure being set: context deadline exceeded',
    });
    expect(err.message).toContain('rolled back to its previous revision');
    expect(err.message).toContain('Deployment/shop/shop-web not ready');
    expect(err.hint).toContain('kubectl describe Deployment/shop-web');
  });

  it('a helm killed by a signal not ours (the OOM killer at the pod memory limit) is transient: the Job retries it', () => {
    const err = classifyHelmFailure({
      ...base,
      stderr: 'Release "shop" does not exist. Installing it now.\n',
      killedBy: 'SIGKILL',
    });
    expect(err.exitCode).toBe(ExitCode.transient);
    expect(err.message).toBe(
      `${base.action} of release shop stopped: helm was killed by SIGKILL (in a pod, usually the out-of-memory killer at the container memory limit)`,
    );
    expect(err.hint).toMatch(/raise the Job's memory limit/);
  });

  it('an interrupted helm is transient, and a spawn failure is "helm not found"', () => {
    expect(classifyHelmFailure({ ...base, stderr: '', canceled: true }).exitCode).toBe(ExitCode.transient);
    const notFound = classifyHelmFailure({ ...base, stderr: '', spawnError: 'ENOENT' });
    expect(notFound.name).toBe('HelmNotFoundError');
  });
});

describe('failures every run repeats: the meaning and the way out, never "fix the cause above"', () => {
  // helm's and the API server's words, as seen in upgrades of public charts (issue 29).
  const cases: [string, string, number, string, string][] = [
    [
      'stale CRD',
      'Error: UPGRADE FAILED: failed to create typed patch object (ns/main; example.com/v1, Kind=Widget): .spec.color: field not declared in schema',
      ExitCode.invalidInput,
      "the cluster's CRD is older than the chart's",
      '--crds create-replace',
    ],
    [
      'stored version dropped',
      'Error: UPGRADE FAILED: cannot patch "policies.example.com" with kind CustomResourceDefinition: CustomResourceDefinition.apiextensions.k8s.io "policies.example.com" is invalid: status.storedVersions[0]: Invalid value: "v2alpha1": missing from spec.versions',
      ExitCode.invalidInput,
      'drops a version in which objects are still stored',
      'still serves that version',
    ],
    [
      'owned elsewhere',
      'Error: UPGRADE FAILED: Unable to continue with update: CustomResourceDefinition "widgets.example.com" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata; annotation validation error: missing key "meta.helm.sh/release-name": must be set to "shop"',
      ExitCode.helmFailed,
      'another release owns it, or it was made without helm',
      '--take-ownership always',
    ],
    [
      'immutable',
      "Error: UPGRADE FAILED: release shop failed, and has been rolled back due to rollback-on-failure being set: cannot patch \"db\" with kind StatefulSet: StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ExitCode.helmFailed,
      'never lets change',
      '--recreate-immutable auto',
    ],
    [
      // helm 4.1's words, and helm 3.17's on the same record (issue 36).
      'removed API in the stored record (helm 4)',
      'Error: UPGRADE FAILED: unable to build kubernetes objects from current release manifest: resource mapping not found for name: "web" namespace: "shop" from "": no matches for kind "PodDisruptionBudget" in version "policy/v1beta1"\nensure CRDs are installed first',
      ExitCode.helmFailed,
      'names an API version this cluster no longer serves',
      'helm mapkubeapis',
    ],
    [
      'removed API in the stored record (helm 3)',
      'Error: UPGRADE FAILED: current release manifest contains removed kubernetes api(s) for this kubernetes version and it is therefore unable to build the kubernetes objects for performing the diff. error from kubernetes: [resource mapping not found for name: "web" namespace: "" from "": no matches for kind "HorizontalPodAutoscaler" in version "autoscaling/v2beta2"',
      ExitCode.helmFailed,
      'no value is at fault',
      'helm mapkubeapis',
    ],
    [
      'kind not served in a rollback target',
      'Error: unable to build kubernetes objects from new release manifest: [resource mapping not found for name: "web" namespace: "" from "": no matches for kind "PodDisruptionBudget" in version "policy/v1beta1"\nensure CRDs are installed first]',
      ExitCode.helmFailed,
      'the target revision was recorded before the cluster was upgraded',
      'helm mapkubeapis',
    ],
    [
      'release too large',
      'Error: UPGRADE FAILED: create: failed to create: Request entity too large: limit is 3145728',
      ExitCode.invalidInput,
      'helm keeps each revision in one Secret of at most 1 MiB',
      'release plan',
    ],
  ];
  for (const [name, stderr, code, meaning, way] of cases) {
    it(`${name} -> exit ${code}, named, with its way out`, () => {
      const err = classifyHelmFailure({ ...base, stderr });
      expect(err.exitCode).toBe(code);
      expect(err.message).toContain(meaning);
      expect(err.message).not.toContain('the next run upgrades it again');
      expect(err.hint).toContain(way);
      expect(err.hint).not.toContain('Fix the cause above');
    });
  }

  it('a rolled-back one says so, and that every run repeats it', () => {
    const err = classifyHelmFailure({
      ...base,
      stderr:
        'Error: UPGRADE FAILED: release shop failed, and has been rolled back due to rollback-on-failure being set: Service "web" is invalid: spec.clusterIP: Invalid value: "10.0.0.9": field is immutable',
    });
    expect(err.message).toContain(
      'The release was rolled back to its previous revision; every run fails the same way until this is fixed.',
    );
  });
});

describe('extractCause / namedResources', () => {
  it('takes the last Error: line as the cause', () => {
    expect(extractCause('W1 warning\nError: first\nError: UPGRADE FAILED: boom\n').cause).toBe('UPGRADE FAILED: boom');
  });
  it('finds resources in kstatus and job forms', () => {
    expect(namedResources('resource StatefulSet/ns1/db not ready; job "migrate" failed')).toEqual([
      'StatefulSet/db',
      'job/migrate',
    ]);
  });
});
