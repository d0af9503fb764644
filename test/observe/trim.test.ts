import assert from 'node:assert/strict';
import type { V1Deployment, V1Job, V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import {
  toObservedDeployment,
  toObservedJob,
  toObservedNode,
  toObservedPDB,
  toObservedPod,
} from '../../src/observe/convert.js';
import { buildClusterSnapshot, forgetPods, newConversionMemo } from '../../src/observe/cluster-cache.js';
import { sameTrimmed, trimDeployment, trimJob, trimNode, trimPDB, trimPod } from '../../src/observe/trim.js';
import { JOB_NAME_LABEL } from '../../src/protocol/job-outcome.js';

const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:x': {} } } }];

function fullNode(): V1Node {
  return {
    metadata: {
      name: 'n1',
      resourceVersion: '42',
      uid: 'u-n1',
      creationTimestamp: new Date('2024-01-01T00:00:00Z'),
      labels: { pool: 'general' },
      annotations: { 'drydock.dev/phase': 'Cordoned', 'node.alpha.kubernetes.io/ttl': '0' },
      managedFields,
    },
    spec: {
      providerID: 'sim://w/i-1',
      unschedulable: true,
      podCIDR: '10.0.0.0/24',
      taints: [{ key: 'k', effect: 'NoSchedule', value: 'v' }],
    },
    status: {
      conditions: [
        { type: 'MemoryPressure', status: 'False' },
        { type: 'Ready', status: 'True', lastTransitionTime: new Date('2024-01-01T00:01:00Z') },
      ],
      nodeInfo: {
        bootID: 'boot-1',
        architecture: 'amd64',
        containerRuntimeVersion: 'x',
        kernelVersion: 'x',
        kubeProxyVersion: 'x',
        kubeletVersion: 'x',
        machineID: 'x',
        operatingSystem: 'linux',
        osImage: 'x',
        systemUUID: 'x',
      },
      images: [{ names: ['registry.example/a:1'], sizeBytes: 1 }],
      capacity: { cpu: '4' },
    },
  };
}

function fullPod(): V1Pod {
  return {
    metadata: {
      namespace: 'web',
      name: 'web-1',
      uid: 'u-1',
      resourceVersion: '7',
      labels: { app: 'web' },
      annotations: { 'kubernetes.io/config.mirror': 'x', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'r', controller: true }],
      deletionTimestamp: new Date('2024-01-01T00:02:00Z'),
      managedFields,
    },
    spec: {
      nodeName: 'n1',
      containers: [{ name: 'c', image: 'nginx', env: [{ name: 'A', value: 'b' }] }],
      volumes: [
        { name: 'cfg', configMap: { name: 'x' } },
        { name: 'tmp', emptyDir: {} },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True' },
        { type: 'Ready', status: 'True', lastTransitionTime: new Date('2024-01-01T00:01:30Z') },
      ],
      containerStatuses: [{ name: 'c', image: 'nginx', imageID: 'x', ready: true, restartCount: 0 }],
    },
  };
}

function fullPdb(): V1PodDisruptionBudget {
  return {
    metadata: { namespace: 'web', name: 'web', resourceVersion: '3', generation: 2, managedFields },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
    status: {
      currentHealthy: 3,
      desiredHealthy: 2,
      disruptionsAllowed: 1,
      expectedPods: 3,
      observedGeneration: 1,
      disruptedPods: { 'web-0': new Date() },
    },
  };
}

function fullDeployment(): V1Deployment {
  return {
    metadata: {
      namespace: 'kube-system',
      name: 'cluster-autoscaler',
      resourceVersion: '9',
      annotations: { 'drydock.dev/previous-replicas': '2', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
      managedFields,
    },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: 'ca' } },
      template: { spec: { containers: [{ name: 'c', image: 'ca' }] } },
    },
    status: { replicas: 0 },
  };
}

function fullJob(): V1Job {
  return {
    metadata: { namespace: 'drydock', name: 'op-n1', resourceVersion: '5', labels: { 'drydock.dev/node': 'n1' } },
    spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    status: {
      conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
      failed: 3,
      succeeded: 0,
      completionTime: new Date('2024-01-01T00:03:00Z'),
    },
  };
}

function trimsSafely<T extends { metadata?: { name?: string; resourceVersion?: string } }>(
  make: () => T,
  trim: (obj: T) => T,
  convert: (obj: T) => unknown,
): void {
  const whole = make();
  const trimmed = trim(make());
  assert.deepEqual(convert(trimmed), convert(whole));
  assert.ok(JSON.stringify(trimmed).length < JSON.stringify(whole).length);
  assert.equal((trimmed.metadata as Record<string, unknown> | undefined)?.managedFields, undefined);
  // The informer's cache keys and compares by these.
  assert.equal(trimmed.metadata?.name, whole.metadata?.name);
  assert.equal(trimmed.metadata?.resourceVersion, whole.metadata?.resourceVersion);
}

describe('trim: what the caches keep of each object', () => {
  it('a trimmed Node converts exactly as the whole one, and is smaller', () =>
    trimsSafely(fullNode, trimNode, toObservedNode));
  it('a trimmed Pod converts exactly as the whole one, and is smaller', () =>
    trimsSafely(fullPod, trimPod, (p) => toObservedPod(p, ['web/web'])));
  it("a reboot pod keeps the boot it reboots from (drydock's boot-id); no other pod has one", () => {
    const reboot = fullPod();
    reboot.metadata = { ...reboot.metadata, annotations: { 'drydock.dev/boot-id': 'b-1', other: 'x' } };
    const trimmed = trimPod(reboot);
    assert.deepEqual(trimmed.metadata?.annotations, { 'drydock.dev/boot-id': 'b-1' });
    assert.equal(toObservedPod(trimmed, []).rebootsFrom, 'b-1');
    assert.equal(toObservedPod(trimPod(fullPod()), []).rebootsFrom, undefined);
  });
  it('a trimmed PodDisruptionBudget converts exactly as the whole one, and is smaller', () =>
    trimsSafely(fullPdb, trimPDB, toObservedPDB));

  it('a PDB keeps what says whether its controller has a write to make: its pods in disruptedPods, its generation observed or not', () => {
    const p = toObservedPDB(trimPDB(fullPdb()));
    assert.deepEqual(Object.keys(p.disruptedPods ?? {}), ['web-0']);
    assert.equal(p.unobserved, true, 'generation 2, observed 1');
    const observed = fullPdb();
    observed.status = { ...observed.status, observedGeneration: 2 } as typeof observed.status;
    assert.equal(toObservedPDB(trimPDB(observed)).unobserved, undefined);
    // From a watch event the times are strings; the same instant either way.
    const fromWatch = fullPdb();
    const at = new Date('2026-11-28T07:00:00.000Z');
    fromWatch.status = {
      ...fromWatch.status,
      disruptedPods: { 'web-0': at.toISOString() as unknown as Date },
    } as typeof fromWatch.status;
    assert.equal(toObservedPDB(trimPDB(fromWatch)).disruptedPods?.['web-0'], at.toISOString());
  });
  it('a trimmed Deployment converts exactly as the whole one, and is smaller', () =>
    trimsSafely(fullDeployment, trimDeployment, toObservedDeployment));
  it('a trimmed Job converts exactly as the whole one, and is smaller', () =>
    trimsSafely(fullJob, trimJob, toObservedJob));
  it('a trimmed Job the controller has decided (no pod left running) reads as decided, as the whole one', () => {
    const decided = (): V1Job => ({
      ...fullJob(),
      status: {
        active: 0,
        terminating: 0,
        uncountedTerminatedPods: { succeeded: ['uid-1'] },
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: new Date('2024-01-01T00:03:00Z') },
        ],
      },
    });
    trimsSafely(decided, trimJob, toObservedJob);
    assert.equal(toObservedJob(trimJob(decided())).succeeded, true);
  });
  it("a trimmed Job of one completion reads its pod's success as the whole one; one of three does not", () => {
    const pod: V1Pod = {
      metadata: {
        name: 'op-n1-a',
        namespace: 'drydock',
        labels: { [JOB_NAME_LABEL]: 'op-n1', 'batch.kubernetes.io/controller-uid': 'u-1' },
      },
      status: { phase: 'Succeeded' },
    };
    const running = (completions?: number) => (): V1Job => ({
      ...fullJob(),
      metadata: { ...fullJob().metadata, uid: 'u-1' },
      spec: { ...(completions !== undefined ? { completions } : {}), template: fullJob().spec?.template ?? {} },
      status: { active: 1 },
    });
    trimsSafely(running(), trimJob, (j) => toObservedJob(j, [pod]));
    assert.equal(toObservedJob(trimJob(running()()), [trimPod(pod)]).succeeded, true);
    assert.equal(toObservedJob(trimJob(running(3)()), [trimPod(pod)]).succeeded, false);
  });

  it('drops what the planner never reads', () => {
    const node = trimNode(fullNode());
    assert.equal(node.status?.images, undefined);
    assert.deepEqual(
      node.status?.conditions?.map((c) => c.type),
      ['Ready'],
    );
    const pod = trimPod(fullPod());
    assert.deepEqual(pod.spec?.containers, []);
    assert.equal(pod.status?.containerStatuses, undefined);
    assert.deepEqual(pod.metadata?.annotations, { 'kubernetes.io/config.mirror': 'x' });
    const dep = trimDeployment(fullDeployment());
    assert.deepEqual(dep.metadata?.annotations, { 'drydock.dev/previous-replicas': '2' });
  });
});

describe('buildClusterSnapshot with a conversion memo', () => {
  it('reuses unchanged conversions and re-derives pods when the PDBs change', () => {
    const memo = newConversionMemo();
    const pod = fullPod();
    const node = fullNode();
    const raw = { nodes: [node], pods: [pod], pdbs: [fullPdb()], deployments: [], jobs: [] };
    const first = buildClusterSnapshot(raw, memo);
    const second = buildClusterSnapshot(raw, memo);
    assert.equal(second.pods[0], first.pods[0]);
    assert.equal(second.nodes[0], first.nodes[0]);
    assert.deepEqual(first.pods[0]?.pdbs, ['web/web']);
    // The PDB is gone: the cache forgets the namespace's pods, and the pod is no longer covered.
    forgetPods(memo, 'web');
    const third = buildClusterSnapshot({ ...raw, pdbs: [] }, memo);
    assert.deepEqual(third.pods[0]?.pdbs, []);
    assert.equal(third.nodes[0], first.nodes[0]);
  });
});

describe('sameTrimmed: which watch updates are no change to drydock', () => {
  const trimmed = (edit: (n: V1Node) => void): V1Node => {
    const n = fullNode();
    edit(n);
    return trimNode(n);
  };
  const ready = (n: V1Node) => n.status?.conditions?.find((c) => c.type === 'Ready');

  it('a heartbeat, a new resourceVersion or another condition is no change', () => {
    const before = trimmed(() => undefined);
    const after = trimmed((n) => {
      n.metadata = { ...n.metadata, resourceVersion: '43' };
      const r = ready(n);
      if (r) Object.assign(r, { lastHeartbeatTime: new Date('2024-01-02T00:00:00Z'), reason: 'KubeletReady' });
      n.status?.conditions?.push({ type: 'DiskPressure', status: 'True' });
    });
    assert.ok(sameTrimmed(before, after));
  });

  it('a timestamp from the watch (text) equals the same instant from the list (Date)', () => {
    const fromList = trimmed(() => undefined);
    const fromWatch = trimmed((n) => {
      const r = ready(n);
      if (r) r.lastTransitionTime = '2024-01-01T00:01:00Z' as unknown as Date;
    });
    assert.ok(sameTrimmed(fromList, fromWatch));
  });

  it('what the planner reads is a change: Ready, its transition, a label, an annotation, cordon', () => {
    const before = trimmed(() => undefined);
    const edits: ((n: V1Node) => void)[] = [
      (n) => Object.assign(ready(n) ?? {}, { status: 'False' }),
      (n) => Object.assign(ready(n) ?? {}, { lastTransitionTime: new Date('2024-01-01T00:02:00Z') }),
      (n) => Object.assign(n.metadata?.labels ?? {}, { pool: 'other' }),
      (n) => Object.assign(n.metadata?.annotations ?? {}, { 'drydock.dev/phase': 'Draining' }),
      (n) => Object.assign(n.spec ?? {}, { unschedulable: false }),
    ];
    for (const edit of edits) assert.equal(sameTrimmed(before, trimmed(edit)), false, edit.toString());
  });
});

describe('the pod memo across PDB updates', () => {
  it("keeps a namespace's pod conversions while only a PDB's status moves", () => {
    const memo = newConversionMemo();
    const pod = fullPod();
    const raw = { nodes: [fullNode()], pods: [pod], pdbs: [fullPdb()], deployments: [], jobs: [] };
    const first = buildClusterSnapshot(raw, memo);
    const moved = fullPdb();
    moved.status = { ...moved.status, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 2, expectedPods: 2 };
    const second = buildClusterSnapshot({ ...raw, pdbs: [moved] }, memo);
    assert.equal(second.pods[0], first.pods[0]);
    assert.equal(second.pdbs[0]?.disruptionsAllowed, 0);
  });
});

describe('the compact pod: what the cache stores instead of the whole pod', () => {
  /** The same pod as the list (Dates, typed) and the watch (JSON text) give it. */
  const asWatched = (p: V1Pod): V1Pod => JSON.parse(JSON.stringify(p)) as V1Pod;

  it('converts exactly as the whole pod, from the list or the watch, and holds no field the planner does not read', () => {
    for (const whole of [fullPod(), asWatched(fullPod())]) {
      const compact = trimPod(whole);
      assert.deepEqual(
        toObservedPod(compact, ['web/web'], 'Deployment/web/web'),
        toObservedPod(whole, ['web/web'], 'Deployment/web/web'),
      );
      assert.deepEqual(JSON.parse(JSON.stringify(compact)), {
        metadata: {
          name: 'web-1',
          namespace: 'web',
          resourceVersion: '7',
          labels: { app: 'web' },
          annotations: { 'kubernetes.io/config.mirror': 'x' },
          uid: 'u-1',
          deletionTimestamp: '2024-01-01T00:02:00.000Z',
          ownerReferences: [{ kind: 'ReplicaSet', name: 'web-abc', controller: true }],
        },
        spec: { containers: [], nodeName: 'n1', volumes: [{ name: 'tmp', emptyDir: {} }] },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-01T00:01:30.000Z' }],
        },
      });
    }
  });

  it('shares its labels, owner, Ready condition and timestamps with its ObservedPod and its siblings', () => {
    const a = trimPod(fullPod());
    const other = fullPod();
    other.metadata = { ...other.metadata, name: 'web-2', labels: { app: 'web' } };
    const b = trimPod(asWatched(other));
    const observed = toObservedPod(a, []);
    assert.equal(observed.labels, a.metadata?.labels);
    assert.equal(observed.readySince, a.status?.conditions?.[0]?.lastTransitionTime);
    assert.equal(b.metadata?.ownerReferences, a.metadata?.ownerReferences);
    assert.equal(b.status?.conditions, a.status?.conditions);
    assert.ok(Object.isFrozen(a.metadata?.labels) && Object.isFrozen(a.status?.conditions?.[0]));
  });

  it("keeps a Job pod's creation time and ended containers: the Job's outcome reads them", () => {
    const jobPod = (name: string, created: string, message: string): V1Pod => ({
      metadata: {
        namespace: 'drydock',
        name,
        resourceVersion: '1',
        labels: { [JOB_NAME_LABEL]: 'op-n1' },
        creationTimestamp: new Date(created),
      },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
      status: {
        phase: 'Failed',
        containerStatuses: [
          {
            name: 'c',
            image: 'x',
            imageID: 'x',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 1, message } },
          },
        ],
      },
    });
    // Created later but named first: only the creation time makes op-n1-b the last attempt.
    const pods = [
      jobPod('op-n1-b', '2024-01-01T00:05:00Z', 'second try'),
      jobPod('op-n1-a', '2024-01-01T00:01:00Z', 'first try'),
    ];
    assert.equal(toObservedJob(fullJob(), pods).message, 'second try');
    assert.deepEqual(toObservedJob(fullJob(), pods.map(trimPod)), toObservedJob(fullJob(), pods));
    // Any other pod's creation time is not kept.
    assert.equal(trimPod(fullPod()).metadata?.creationTimestamp, undefined);
  });
});
