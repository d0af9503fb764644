import assert from 'node:assert/strict';
import type { V1LabelSelector, V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { buildClusterSnapshot } from '../../src/observe/cluster-cache.js';

function pod(
  namespace: string,
  name: string,
  node: string,
  labels: Record<string, string>,
  extra: Partial<V1Pod> = {},
): V1Pod {
  return {
    metadata: { namespace, name, uid: `${namespace}-${name}`, labels },
    spec: { nodeName: node, containers: [] },
    status: { phase: 'Running' },
    ...extra,
  };
}

function pdb(
  namespace: string,
  name: string,
  selector: V1LabelSelector | undefined,
  allowed: number,
): V1PodDisruptionBudget {
  return {
    metadata: { namespace, name },
    spec: selector ? { selector } : {},
    status: { disruptionsAllowed: allowed, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 },
  };
}

describe('buildClusterSnapshot', () => {
  const nodes: V1Node[] = [
    {
      // Watch events carry plain strings for timestamps ...
      metadata: {
        name: 'b',
        creationTimestamp: '2024-01-01T00:00:00Z' as unknown as Date,
        annotations: { 'drydock.dev/phase': 'Cordoned' },
      },
      spec: { unschedulable: true, providerID: 'sim://w/i-2' },
      status: {
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-01T00:01:00Z' as unknown as Date }],
      },
    },
    {
      // ... and the initial list carries Dates.
      metadata: { name: 'a', creationTimestamp: new Date('2024-01-02T00:00:00Z') },
      spec: {},
      status: {
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date('2024-01-02T00:01:00Z') }],
      },
    },
  ];
  const pods: V1Pod[] = [
    pod('web', 'web-2', 'b', { app: 'web' }),
    pod(
      'web',
      'web-1',
      'a',
      { app: 'web' },
      {
        metadata: {
          namespace: 'web',
          name: 'web-1',
          uid: 'u1',
          labels: { app: 'web' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'r', controller: true }],
        },
      },
    ),
    pod('other', 'x', 'a', { app: 'web' }),
    pod('web', 'unscheduled', '', { app: 'web' }),
    pod(
      'kube-system',
      'mirror',
      'a',
      {},
      {
        metadata: { namespace: 'kube-system', name: 'mirror', annotations: { 'kubernetes.io/config.mirror': 'abc' } },
        spec: { nodeName: 'a', containers: [], volumes: [{ name: 'v', emptyDir: {} }] },
      },
    ),
  ];
  const pdbs = [
    pdb('web', 'web', { matchLabels: { app: 'web' } }, 0),
    pdb('web', 'all', {}, 1),
    pdb('web', 'none', undefined, 1),
  ];
  const snap = buildClusterSnapshot({ nodes, pods, pdbs, deployments: [], jobs: [] });

  it('sorts nodes by name and converts both timestamp forms', () => {
    assert.deepEqual(
      snap.nodes.map((n) => n.name),
      ['a', 'b'],
    );
    assert.equal(snap.nodes[0]?.createdAt, '2024-01-02T00:00:00.000Z');
    assert.equal(snap.nodes[1]?.readySince, '2024-01-01T00:01:00.000Z');
    assert.equal(snap.nodes[1]?.ready, true);
    assert.equal(snap.nodes[0]?.ready, false);
    assert.equal(snap.nodes[1]?.unschedulable, true);
    assert.equal(snap.nodes[1]?.providerID, 'sim://w/i-2');
    assert.equal(snap.nodes[1]?.annotations['drydock.dev/phase'], 'Cordoned');
  });

  it('drops unscheduled pods and sorts the rest by namespace/name', () => {
    assert.deepEqual(
      snap.pods.map((p) => `${p.namespace}/${p.name}`),
      ['kube-system/mirror', 'other/x', 'web/web-1', 'web/web-2'],
    );
  });

  it('lists the PDBs covering each pod: same namespace only, empty selector covers all, absent covers none', () => {
    const byName = new Map(snap.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
    assert.deepEqual(byName.get('web/web-1')?.pdbs, ['web/all', 'web/web']);
    assert.deepEqual(byName.get('other/x')?.pdbs, []);
  });

  it('reads owner, mirror and emptyDir', () => {
    const byName = new Map(snap.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
    assert.equal(byName.get('web/web-1')?.ownerKind, 'ReplicaSet');
    assert.equal(byName.get('web/web-1')?.ownerName, 'web-abc');
    assert.equal(byName.get('web/web-2')?.ownerKind, 'None');
    assert.equal(byName.get('kube-system/mirror')?.mirror, true);
    assert.equal(byName.get('kube-system/mirror')?.hasEmptyDir, true);
  });

  it('is frozen', () => {
    assert.ok(Object.isFrozen(snap));
    assert.ok(Object.isFrozen(snap.nodes));
    assert.ok(Object.isFrozen(snap.nodes[0]));
    assert.ok(Object.isFrozen(snap.nodes[0]?.labels));
  });
});

describe('buildClusterSnapshot: workloads for the health gate', () => {
  const owned = (namespace: string, name: string, kind: string, owner: string): V1Pod =>
    pod(
      namespace,
      name,
      'n1',
      {},
      {
        metadata: {
          namespace,
          name,
          uid: name,
          ownerReferences: [{ apiVersion: 'apps/v1', kind, name: owner, uid: owner, controller: true }],
        },
      },
    );
  const snap = buildClusterSnapshot({
    nodes: [],
    pods: [
      owned('web', 'web-abc-1', 'ReplicaSet', 'web-abc'),
      owned('db', 'db-0', 'StatefulSet', 'db'),
      owned('kube-system', 'proxy-x', 'DaemonSet', 'proxy'),
      owned('web', 'orphan-1', 'ReplicaSet', 'orphan'),
    ],
    pdbs: [],
    deployments: [
      { metadata: { namespace: 'web', name: 'web' }, spec: { replicas: 3 } as never, status: { readyReplicas: 2 } },
    ],
    statefulSets: [
      { metadata: { namespace: 'db', name: 'db' }, spec: {} as never, status: { readyReplicas: 1, replicas: 1 } },
    ],
    replicaSets: [
      {
        metadata: {
          namespace: 'web',
          name: 'web-abc',
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd', controller: true }],
        },
      },
    ],
    jobs: [],
  });

  it('names the Deployment (through its ReplicaSet) or StatefulSet each pod belongs to', () => {
    const byName = new Map(snap.pods.map((p) => [p.name, p.workload]));
    assert.equal(byName.get('web-abc-1'), 'Deployment/web/web');
    assert.equal(byName.get('db-0'), 'StatefulSet/db/db');
    assert.equal(byName.get('proxy-x'), undefined, 'a DaemonSet pod is no workload the gate waits for');
    assert.equal(byName.get('orphan-1'), undefined, 'a ReplicaSet no Deployment owns');
  });

  it('holds desired and ready replicas (absent spec.replicas means 1)', () => {
    assert.deepEqual(snap.workloads, [
      { kind: 'Deployment', namespace: 'web', name: 'web', desired: 3, ready: 2 },
      { kind: 'StatefulSet', namespace: 'db', name: 'db', desired: 1, ready: 1 },
    ]);
  });
});
