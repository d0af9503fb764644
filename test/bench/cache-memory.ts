/**
 * What the pod cache holds per pod, without a control plane: the KWOK world's pods as the API
 * server sends them (JSON text, managedFields and all, in pages of 500), parsed and typed as
 * client-node parses a list, trimmed as the informer stores them (listInPages, trim.ts), kept in
 * the informer's map, and converted into a snapshot with the conversion memo, as the service
 * holds them between rounds. Prints the JS heap used over the baseline after GC, per pod.
 * `node dist/test/bench/cache-memory.js 1000` (nodes; ten pods each); add `--heapsnapshot` to
 * write a heap snapshot of the result into the working directory.
 */
import { writeHeapSnapshot, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { KubernetesListObject, V1Pod } from '@kubernetes/client-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js';
import { buildClusterSnapshot, newConversionMemo } from '../../src/observe/cluster-cache.js';
import { listInPages, type ListPage } from '../../src/kube/pages.js';
import { trimPDB, trimPod, trimReplicaSet } from '../../src/observe/trim.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const REPLICAS = 10;
const at = (s: number) => new Date(Date.UTC(2026, 10, 24, 10, 0, s)).toISOString().replace('.000', '');

/** Pod `r` of Deployment `d` as a KWOK world's list returns it. */
function podJson(d: number, r: number): unknown {
  const app = `app-${String(d).padStart(5, '0')}`;
  const rs = `${app}-5d8f7c9b6`;
  const uid = (k: string) => `${k}0c6a5f0e-${String(d).padStart(4, '0')}-4b1e-9c2d-${String(r).padStart(12, '0')}`;
  const t = at(d % 60);
  return {
    metadata: {
      name: `${rs}-${String(r).padStart(5, 'x')}`,
      generateName: `${rs}-`,
      namespace: `fleet-${String(Math.floor(d / 50)).padStart(3, '0')}`,
      uid: uid(''),
      resourceVersion: String(100000 + d * REPLICAS + r),
      creationTimestamp: t,
      labels: { app, 'pod-template-hash': '5d8f7c9b6' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: rs,
          uid: uid('r'),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: t,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': {} },
        },
        {
          manager: 'kwok',
          operation: 'Update',
          apiVersion: 'v1',
          time: t,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:conditions': {}, 'f:phase': {}, 'f:podIP': {} } },
          subresource: 'status',
        },
      ],
    },
    spec: {
      volumes: [
        { name: 'kube-api-access-abcde', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
      ],
      containers: [
        {
          name: 'app',
          image: 'registry.example/app:1',
          resources: { requests: { cpu: '10m' } },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `idle-${String(d).padStart(5, '0')}`,
      schedulerName: 'default-scheduler',
      tolerations: [{ operator: 'Exists' }],
      priority: 0,
    },
    status: {
      phase: 'Running',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: t,
      })),
      hostIP: '10.0.0.1',
      podIP: `10.${d % 250}.${r}.1`,
      startTime: t,
      containerStatuses: [
        {
          name: 'app',
          state: { running: { startedAt: t } },
          ready: true,
          restartCount: 0,
          image: 'app:1',
          imageID: '',
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

/** The pod list's pages, as text and parsed as client-node parses them. */
function podList(deployments: number): (page: ListPage) => Promise<KubernetesListObject<V1Pod>> {
  const total = deployments * REPLICAS;
  return (page) => {
    const from = page._continue === undefined ? 0 : Number(page._continue);
    const to = Math.min(total, from + (page.limit ?? total));
    const items = Array.from({ length: to - from }, (_, i) =>
      podJson(Math.floor((from + i) / REPLICAS), (from + i) % REPLICAS),
    );
    const text = JSON.stringify({
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '999999', ...(to < total ? { continue: String(to) } : {}) },
      items,
    });
    return Promise.resolve(
      ObjectSerializer.deserialize(JSON.parse(text), 'V1PodList', '') as KubernetesListObject<V1Pod>,
    );
  };
}

function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

export async function podCacheBytes(nodes: number, snapshotFile?: boolean): Promise<number> {
  // The heap before holds nothing of the fleet; PDBs and ReplicaSets are charged with the pods.
  const before = heapUsed();
  const listed = await listInPages(podList(nodes), trimPod);
  // The informer's store: namespace → name → object.
  const store = new Map<string, Map<string, V1Pod>>();
  for (const pod of listed.items) {
    const ns = pod.metadata?.namespace ?? '';
    let names = store.get(ns);
    if (!names) store.set(ns, (names = new Map<string, V1Pod>()));
    names.set(pod.metadata?.name ?? '', pod);
  }
  listed.items.length = 0;
  // Each Deployment's PDB and ReplicaSet: which PDBs cover a pod, which workload it is of.
  const namespace = (d: number) => `fleet-${String(Math.floor(d / 50)).padStart(3, '0')}`;
  const app = (d: number) => `app-${String(d).padStart(5, '0')}`;
  const pdbs = Array.from({ length: nodes }, (_, d) =>
    trimPDB({
      metadata: { name: app(d), namespace: namespace(d), resourceVersion: '1' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: app(d) } } },
      status: { currentHealthy: 10, desiredHealthy: 9, disruptionsAllowed: 1, expectedPods: 10 },
    }),
  );
  const replicaSets = Array.from({ length: nodes }, (_, d) =>
    trimReplicaSet({
      metadata: {
        name: `${app(d)}-5d8f7c9b6`,
        namespace: namespace(d),
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: app(d), uid: 'u', controller: true }],
      },
    }),
  );
  const memo = newConversionMemo();
  const all = () => [...store.values()].flatMap((m) => [...m.values()]);
  const base = { nodes: [], pdbs, deployments: [], jobs: [], replicaSets };
  const snapshot = buildClusterSnapshot({ ...base, pods: all() }, memo);
  const held = heapUsed() - before;
  if (snapshotFile) console.log(`heap snapshot: ${writeHeapSnapshot()}`);
  // Kept alive until measured.
  if (snapshot.pods.length !== nodes * REPLICAS || store.size === 0) throw new Error('pods missing');
  return held;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const nodes = Number(process.argv[2] ?? 1000);
  const held = await podCacheBytes(nodes, process.argv.includes('--heapsnapshot'));
  console.log(
    `${nodes * REPLICAS} pods: ${(held / 2 ** 20).toFixed(1)} MiB of JS heap held, ${(held / (nodes * REPLICAS)).toFixed(0)} bytes per pod`,
  );
}
