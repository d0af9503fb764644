/**
 * An idle round without a control plane, for profiling: the objects the benchmark's KWOK world
 * holds (N nodes, ten pods each in Deployments under PDBs), trimmed as the caches trim them,
 * and the service's round on top (snapshot → observe → plan → metrics → status key). Rounds
 * run either with nothing changed or after one node changed each (a new node object, as the
 * informer stores an update, so the snapshot is rebuilt).
 * `node --cpu-prof dist/test/bench/idle-round.js 1000 [unchanged|changed] [rounds]` profiles it.
 */
import type { V1Node, V1Pod, V1PodDisruptionBudget, V1Deployment, V1ReplicaSet } from '@kubernetes/client-node';
import { pino } from 'pino';
import { buildClusterSnapshot, newConversionMemo, type ClusterCache } from '../../src/observe/cluster-cache.js';
import { InstanceSightings } from '../../src/observe/cloud.js';
import { trimDeployment, trimNode, trimPDB, trimPod, trimReplicaSet } from '../../src/observe/trim.js';
import { plan } from '../../src/plan/index.js';
import { createMetrics } from '../../src/service/metrics.js';
import { reconcileOnce } from '../../src/service/reconciler.js';
import { buildStatus, statusKey } from '../../src/service/status.js';
import { fakeNode } from '../../src/sandbox/control-plane/kwok.js';
import type { CloudProvider } from '../../src/cloud/provider.js';
import { config, desired, nodeImage, scalingGroup } from '../plan/fixtures.js';

const IMAGE = 'registry.example/node-os:v1.0.0';
const REPLICAS = 10;

function nodeObject(i: number, beat: number): V1Node {
  const n = fakeNode(`idle-${String(i).padStart(5, '0')}`);
  const t = new Date(Date.UTC(2026, 0, 1, 0, 0, beat)).toISOString();
  const condition = (type: string, status: string) => ({
    type,
    status,
    lastHeartbeatTime: t as unknown as Date,
    lastTransitionTime: '2026-01-01T00:00:00Z' as unknown as Date,
    reason: `Kubelet${type}`,
    message: `kubelet says ${type}`,
  });
  n.metadata = { ...n.metadata, resourceVersion: String(1000 + beat), creationTimestamp: new Date(0) };
  n.status = {
    ...n.status,
    conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'].map((c) =>
      condition(c, 'False'),
    ),
    nodeInfo: { bootID: '', machineID: '', kernelVersion: '', osImage: '' } as NonNullable<
      V1Node['status']
    >['nodeInfo'],
  };
  n.status.conditions?.push(condition('Ready', 'True'));
  return trimNode(n);
}

function world(nodes: number) {
  const ns = (d: number) => `fleet-${String(Math.floor(d / 50)).padStart(3, '0')}`;
  const pods: V1Pod[] = [];
  const pdbs: V1PodDisruptionBudget[] = [];
  const deployments: V1Deployment[] = [];
  const replicaSets: V1ReplicaSet[] = [];
  for (let d = 0; d < nodes; d++) {
    const name = `app-${String(d).padStart(5, '0')}`;
    const namespace = ns(d);
    const labels = { app: name, 'pod-template-hash': 'abc' };
    const pdb: V1PodDisruptionBudget = {
      metadata: { name, namespace, resourceVersion: '1' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: name } } },
      status: { currentHealthy: 10, desiredHealthy: 9, disruptionsAllowed: 1, expectedPods: 10 },
    };
    pdbs.push(trimPDB(pdb));
    const dep: V1Deployment = {
      metadata: { name, namespace, resourceVersion: '1' },
      spec: { replicas: REPLICAS, selector: { matchLabels: { app: name } }, template: {} },
      status: { readyReplicas: REPLICAS },
    };
    deployments.push(trimDeployment(dep));
    const rs: V1ReplicaSet = {
      metadata: {
        name: `${name}-abc`,
        namespace,
        resourceVersion: '1',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid: `u-${d}`, controller: true }],
      },
    };
    replicaSets.push(trimReplicaSet(rs));
    for (let r = 0; r < REPLICAS; r++) {
      const p: V1Pod = {
        metadata: {
          name: `${name}-abc-${r}`,
          namespace,
          uid: `pod-${d}-${r}`,
          resourceVersion: '1',
          labels,
          creationTimestamp: new Date(0),
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${name}-abc`, uid: 'x', controller: true },
          ],
        },
        spec: { nodeName: `idle-${String(d).padStart(5, '0')}`, containers: [{ name: 'app', image: 'app:1' }] },
        status: {
          phase: 'Running',
          conditions: [
            { type: 'Ready', status: 'True', lastTransitionTime: new Date(0) },
            { type: 'Initialized', status: 'True', lastTransitionTime: new Date(0) },
          ],
        },
      };
      pods.push(trimPod(p));
    }
  }
  return { nodes: Array.from({ length: nodes }, (_, i) => nodeObject(i, 0)), pods, pdbs, deployments, replicaSets };
}

const sim: CloudProvider = {
  name: 'sim',
  listGroups: () => Promise.resolve(['workers']),
  describeGroup: (groupId) =>
    Promise.resolve({
      groupId,
      image: IMAGE,
      targetSize: 3,
      instances: [0, 1, 2].map((i) => ({
        id: `sim-${i}`,
        providerID: `sim://workers/sim-${i}`,
        image: IMAGE,
        state: 'running' as const,
        createdAt: '2026-01-01T00:00:00Z',
      })),
    }),
  setGroupImage: () => Promise.resolve(),
  addCapacity: () => Promise.resolve([]),
  removeInstance: () => Promise.resolve(),
  instanceForProviderID: () => undefined,
};

export async function measureIdleRounds(nodes: number, rounds: number, changed: boolean): Promise<number> {
  const w = world(nodes);
  const memo = newConversionMemo();
  let current: ReturnType<typeof buildClusterSnapshot> | undefined;
  const cluster: ClusterCache = {
    synced: () => Promise.resolve(),
    isSynced: () => true,
    snapshot: () =>
      (current ??= buildClusterSnapshot({ ...w, jobs: [], statefulSets: [], replicaSets: w.replicaSets }, memo)),
    node: (name) => w.nodes.find((n) => n.metadata?.name === name),
    openshift: () => undefined,
    // An idle round writes nothing, so nothing is waited for.
    whenSeen: () => Promise.resolve(true),
    whenPdbSettled: () => Promise.resolve(true),
    stop: () => Promise.resolve(),
  };
  const spec = desired({
    config: config(),
    scalingGroups: [scalingGroup('workers', 'worker')],
    nodeImages: [nodeImage('worker', IMAGE)],
  });
  const metrics = createMetrics({ defaultMetrics: false });
  const sightings = new InstanceSightings();
  const logger = pino({ level: 'silent' });
  const round = async (): Promise<void> => {
    const outcome = await reconcileOnce(spec, {
      cluster,
      providers: () => sim,
      planner: (d, o, now) => plan(d, o, now),
      actionDeps: undefined as never,
      events: undefined as never,
      logger,
      metrics,
      now: () => new Date(),
      sightings,
      mayAct: () => false,
      settleMs: 250,
      resyncMs: 60_000,
    });
    statusKey(buildStatus({ cluster: 'idle', plan: outcome.plan, results: outcome.results }));
  };
  for (let i = 0; i < 20; i++) await round();
  const t0 = process.cpuUsage();
  for (let i = 0; i < rounds; i++) {
    if (changed) {
      const k = i % nodes;
      w.nodes[k] = nodeObject(k, i + 1);
      current = undefined;
    }
    await round();
  }
  const cpu = process.cpuUsage(t0);
  return (cpu.user + cpu.system) / 1000 / rounds;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const nodes = Number(process.argv[2] ?? 1000);
  const rounds = Number(process.argv[4] ?? 200);
  const modes = process.argv[3] ? [process.argv[3] === 'changed'] : [false, true];
  for (const changed of modes) {
    const ms = await measureIdleRounds(nodes, rounds, changed);
    console.log(
      `${nodes} nodes: ${ms.toFixed(2)} ms CPU per ${changed ? 'round after one node changed' : 'unchanged round'}`,
    );
  }
}
