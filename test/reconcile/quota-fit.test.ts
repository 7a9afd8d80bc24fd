// The chart's pods in all against the namespace's ResourceQuotas: replicas times each pod's
// requests (a limit alone counts as the request; an init container counts when larger), named
// where they do not fit, and whether they could fit at all.
import { describe, expect, it } from 'vitest';
import { parseQuantity, podDemand, quotaShortfalls } from '../../src/reconcile/quota-fit.js';

const container = (requests: object, limits?: object) => ({
  name: 'c',
  image: 'x',
  resources: { requests, ...(limits ? { limits } : {}) },
});
const objects = [
  {
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 3,
      template: { spec: { containers: [container({ cpu: '250m', memory: '64Mi' }), container({ cpu: '250m' })] } },
    },
  },
  {
    kind: 'StatefulSet',
    metadata: { name: 'db' },
    spec: {
      template: {
        spec: { initContainers: [container({ cpu: '2' })], containers: [container({}, { cpu: '1', memory: '1Gi' })] },
      },
    },
  },
  {
    kind: 'DaemonSet',
    metadata: { name: 'agent' },
    spec: { template: { spec: { containers: [container({ cpu: '1' })] } } },
  },
  { kind: 'ConfigMap', metadata: { name: 'settings' } },
];

describe('quota fit', () => {
  it('adds the pods up: replicas times requests; a limit alone is the request; the larger of init and main', () => {
    expect(Object.fromEntries(podDemand(objects))).toEqual({
      pods: 4,
      'requests.cpu': 3 * 0.5 + 2,
      'requests.memory': 3 * 64 * 2 ** 20 + 2 ** 30,
      'limits.cpu': 1,
      'limits.memory': 2 ** 30,
    });
  });
  it('names each quota they do not fit, with the figures; whether it could ever fit', () => {
    const demand = podDemand(objects);
    expect(
      quotaShortfalls(demand, [
        { name: 'roomy', hard: { pods: '10', 'requests.cpu': '8' }, used: { pods: '2', 'requests.cpu': '1' } },
        { name: 'busy', hard: { pods: '5', cpu: '4' }, used: { pods: '2', cpu: '1' } },
        { name: 'small', hard: { 'requests.memory': '1Gi' }, used: {} },
      ]),
    ).toEqual([
      {
        quota: 'busy',
        needs: 'pods=4, cpu=3500m',
        hard: 'pods=5, cpu=4000m',
        used: 'pods=2, cpu=1000m',
        neverFits: false,
      },
      {
        quota: 'small',
        needs: 'requests.memory=1216Mi',
        hard: 'requests.memory=1024Mi',
        used: 'requests.memory=0Mi',
        neverFits: true,
      },
    ]);
  });
  it('parses quantities', () => {
    expect(['500m', '2', '1.5Gi', '64Mi', '1e3', '100k', 'x'].map(parseQuantity)).toEqual([
      0.5,
      2,
      1.5 * 2 ** 30,
      64 * 2 ** 20,
      1000,
      100_000,
      Number.NaN,
    ]);
  });
});
