// The classes a chart names and those the cluster lacks: named before any change with those the
// cluster has; a class the chart makes itself, an empty storageClassName (no class) and a kind the
// installer could not list are not judged.
import { describe, expect, it } from 'vitest';
import {
  classReferences,
  describeMissingClasses,
  missingClasses,
  missingClassesHint,
} from '../../src/reconcile/named-classes.js';

const objects = [
  {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data' },
    spec: { storageClassName: 'fast-ssd' },
  },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'scratch' }, spec: { storageClassName: '' } },
  {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db' },
    spec: {
      volumeClaimTemplates: [{ spec: { storageClassName: 'fast-ssd' } }],
      template: { spec: { priorityClassName: 'critical-app', containers: [] } },
    },
  },
  {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'report' },
    spec: { jobTemplate: { spec: { template: { spec: { runtimeClassName: 'gvisor', containers: [] } } } } },
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'web' },
    spec: { ingressClassName: 'nginx' },
  },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'critical-app' }, value: 1000 },
];

describe('named classes', () => {
  it('finds each reference with what names it', () => {
    expect(classReferences(objects)).toEqual([
      { kind: 'StorageClass', name: 'fast-ssd', by: 'PersistentVolumeClaim/data' },
      { kind: 'StorageClass', name: 'fast-ssd', by: 'StatefulSet/db volumeClaimTemplates' },
      { kind: 'IngressClass', name: 'nginx', by: 'Ingress/web' },
      { kind: 'PriorityClass', name: 'critical-app', by: 'StatefulSet/db' },
      { kind: 'RuntimeClass', name: 'gvisor', by: 'CronJob/report' },
    ]);
  });
  it("names the missing ones with the classes the cluster has; the chart's own and unread kinds pass", () => {
    const made = new Set(['PriorityClass/critical-app']);
    const missing = missingClasses(
      classReferences(objects),
      { StorageClass: ['standard (default)'], IngressClass: ['nginx'], PriorityClass: [] },
      made,
    );
    expect(describeMissingClasses(missing)).toEqual([
      'StorageClass fast-ssd (named by PersistentVolumeClaim/data, StatefulSet/db volumeClaimTemplates) does not exist; the cluster has: standard (default)',
    ]);
    expect(missingClassesHint(missing)).toBe(
      "Set the chart's values to a class the cluster has (values such as persistence.storageClass, storageClassName), or have the cluster admin create the class; nothing was changed.",
    );
    expect(
      missingClasses(classReferences(objects), { StorageClass: ['fast-ssd'], RuntimeClass: [] }, made).map(
        (m) => `${m.kind}/${m.name}: ${m.existing.join(',') || 'none'}`,
      ),
    ).toEqual(['RuntimeClass/gvisor: none']);
  });
});
