/**
 * The world of the rollout benchmarks (makespan, API writes per node): the real control plane
 * with the sim cloud playing the hosts (boots after a delay, Job pods, reboots), two worker
 * groups — `solo` (one node, the per-node reference) and `fleet` (N nodes) — each with pods
 * under a PDB roomy enough not to serialise drains, a fleet repository on a real Git server,
 * and `drydock run` as a child process reaching the API server only through the counting proxy.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, type KubeConfig, type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { ANNOTATIONS, nodeOpRecordKey } from '../../src/protocol/keys.js';
import { parseSimConfigText } from '../../src/cloud/index.js';
import { runSimCloud, type RunningSimCloud } from '../../src/sim-host/index.js';
import { applyObjects } from '../../src/sandbox/workloads.js';
import { watchCollection, type WatchedCollection } from '../../src/kube/informer.js';
import { eventually, type ControlPlane } from '../support/control-plane.js';
import { isEventPath, startCountingProxy, type CountingProxy } from '../service/counting-proxy.js';
import {
  drydockArgs,
  specDoc,
  startDrydockChild,
  startFleetRepo,
  stopWorld,
  tempDir,
  type DrydockChild,
  type FleetRepo,
} from '../e2e/world.js';

export const GROUPS = ['solo', 'fleet'] as const;
export type Group = (typeof GROUPS)[number];
export const IMAGE = (v: number): string => `os-v${v}`;
/** Pods per node, drained on every replace and in-place step. */
export const PODS_PER_NODE = 2;
export const GROUP_LABEL = 'sim.drydock.dev/group';
const NAMESPACE = 'bench';
/** drydock's namespace in the world (drydockArgs' default): where its Jobs and reboot pods go. */
export const DRYDOCK_NAMESPACE = 'kube-system';

/**
 * A KWOK Stage the rollout world adds: a Running pod whose containers are ready but whose Ready
 * condition is False is made Ready again after 10 s. The node-lifecycle controller marks the
 * pods of a NotReady node not Ready; under load it does so late, after the sim's reboot is
 * over and a pod has been scheduled onto the node again, and KWOK never turns a Running pod
 * Ready again (a 16-node NodeOp waited for such a pod until its time ran out). A real kubelet
 * would: its next status update says Ready. The delay stands for that update: 2 s (it was 10 s,
 * and a 16-node NodeOp's health gate then waited up to 9 s for one such pod after its node was
 * back). The benchmark's reboots drain their node first, so no pod of the benchmark's workload
 * is on a node while it is down.
 */
export const KWOK_POD_READY_AGAIN = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready-again
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
    - key: '.status.conditions.[] | select( .type == "ContainersReady" ) | .status'
      operator: 'In'
      values:
      - 'True'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values:
      - 'True'
  delay:
    durationMilliseconds: 2000
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: PodScheduled
`;

export interface RolloutWorldOptions {
  readonly nodes: number;
  readonly concurrency: number;
  readonly bootDelaySeconds: number;
  readonly rebootSeconds: number;
  readonly jobRunSeconds: number;
  /** Deployments (each with its PDB) the fleet's pods are split into; 1 unless given. */
  readonly workloads?: number;
  /**
   * drydock's Events answered by the counting proxy instead of the API server (still counted):
   * an experiment that shows what writing them costs the world's API server. Written unless given.
   */
  readonly eventsAbsorbed?: boolean;
}

export interface RolloutWorld {
  readonly proxy: CountingProxy;
  readonly repo: FleetRepo;
  /** The drydock running now (a new child after startDrydock). */
  readonly drydock: DrydockChild;
  readonly kc: KubeConfig;
  /** Stops drydock (the floor driver runs without it); startDrydock starts a new one on the same repository. */
  stopDrydock(): Promise<void>;
  startDrydock(): Promise<void>;
  /** The log lines of every drydock the world ran, the stopped ones' first. */
  drydockLog(): readonly string[];
  /** The sim cloud's URL, for a plan's observation of the groups. */
  readonly cloudUrl: string;
  /**
   * The group's nodes as a watch of them holds them, not a list: the benchmarks ask this
   * several times a second until a rollout is done, and as lists (5 a second of a few hundred
   * nodes) they weighed on the API server, and this process, while drydock rolled and not while
   * the floor did.
   */
  groupNodes(group: Group): Promise<V1Node[]>;
  close(): Promise<void>;
}

/** The rollout every spec of the benchmark shares: `concurrency` nodes at a time, no canary. */
export function rollout(o: RolloutWorldOptions): Record<string, unknown> {
  return {
    maxSurge: o.concurrency,
    maxUnavailable: o.concurrency,
    concurrency: o.concurrency,
    joinTimeout: '300s',
    healthGate: { minReadySeconds: 1 },
    drain: { timeoutSeconds: 300, onTimeout: 'halt' },
    approval: { required: 'none' },
  };
}

export function imageDoc(group: Group, image: string, o: RolloutWorldOptions): string {
  return specDoc('NodeImage', group, { image, strategy: 'replace', rollout: rollout(o) });
}

/** A NodeOp over one group: cordon, drain, a Job, a reboot; `concurrency` nodes at a time. */
export function nodeOpDoc(name: string, group: Group, o: RolloutWorldOptions): string {
  return specDoc('NodeOp', name, {
    nodeSelector: { matchLabels: { [GROUP_LABEL]: group } },
    image: 'busybox:1.36',
    command: ['sh', '-c', 'echo patched'],
    cordon: true,
    drainOptions: { enabled: true, timeoutSeconds: 300 },
    rebootOnSuccess: true,
    backoffLimit: 0,
    concurrency: group === 'solo' ? 1 : o.concurrency,
    rollout: { healthGate: { minReadySeconds: 1 }, approval: { required: 'none' } },
  });
}

/** The fleet repository's files at the start: drydock.yaml, and each group with its NodeImage at IMAGE(1). */
export function repoFiles(o: RolloutWorldOptions): Record<string, string> {
  const files: Record<string, string> = {
    'drydock.yaml': stringify({
      apiVersion: 'drydock.dev/v1alpha1',
      kind: 'RepoConfig',
      cluster: 'bench',
      budget: { maxUnavailable: o.concurrency },
      paths: ['specs'],
      statusBranch: 'drydock/status',
    }),
  };
  for (const g of GROUPS) {
    files[`specs/${g}-group.yaml`] = specDoc('ScalingGroup', g, {
      provider: 'sim',
      groupId: g,
      nodeImage: g,
      role: 'worker',
    });
    files[`specs/${g}-image.yaml`] = imageDoc(g, IMAGE(1), o);
  }
  return files;
}

/**
 * PODS_PER_NODE pods per node of `group` in `o.workloads` Deployments (one for the one-node
 * group), each under its own PDB allowing a wave's drains. With one PDB, a wave's evictions all
 * update that one object, and the API server makes them wait on each other's writes.
 */
function workloads(group: Group, size: number, o: RolloutWorldOptions): KubernetesObject[] {
  const count = group === 'fleet' ? Math.min(o.workloads ?? 1, size) : 1;
  return Array.from({ length: count }, (_, i) => {
    const name = count === 1 ? group : `${group}-${i + 1}`;
    const labels = { app: name };
    // Replicas spread as evenly as whole numbers allow.
    const replicas =
      Math.floor(((i + 1) * size * PODS_PER_NODE) / count) - Math.floor((i * size * PODS_PER_NODE) / count);
    return [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: NAMESPACE, labels },
        spec: {
          replicas,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeSelector: { [GROUP_LABEL]: group },
              containers: [{ name: 'app', image: 'registry.example/app:1' }],
            },
          },
        },
      } as KubernetesObject,
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name, namespace: NAMESPACE },
        spec: { maxUnavailable: o.concurrency * PODS_PER_NODE, selector: { matchLabels: labels } },
      } as KubernetesObject,
    ];
  }).flat();
}

export async function startRolloutWorld(cp: ControlPlane, o: RolloutWorldOptions): Promise<RolloutWorld> {
  const dirs = [tempDir('drydock-bench-rollout-sim-'), tempDir('drydock-bench-rollout-cache-')];
  const [stateDir = '', cacheDir = ''] = dirs;
  const sizes: Record<Group, number> = { solo: 1, fleet: o.nodes };
  const config = parseSimConfigText(
    stringify({
      bootDelaySeconds: o.bootDelaySeconds,
      terminateDelaySeconds: 1,
      groups: GROUPS.map((g) => ({ id: g, role: 'worker', size: sizes[g], image: IMAGE(1) })),
      host: { rebootSeconds: o.rebootSeconds, jobRunSeconds: o.jobRunSeconds },
    }),
  );
  let sim: RunningSimCloud | undefined;
  let repo: FleetRepo | undefined;
  let proxy: CountingProxy | undefined;
  let drydock: DrydockChild | undefined;
  const kc = cp.adminKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const listGroup = async (g: Group): Promise<V1Node[]> =>
    (await core.listNode({ labelSelector: `${GROUP_LABEL}=${g}` })).items;
  let nodes: WatchedCollection<V1Node> | undefined;
  try {
    sim = await runSimCloud({ config, stateDir, kubeconfigPath: cp.kubeconfigPath, host: '127.0.0.1', port: 0 });
    await eventually(
      `${o.nodes + 1} Ready hosts`,
      async () => {
        const all = [...(await listGroup('solo')), ...(await listGroup('fleet'))];
        return all.filter((n) => n.status?.nodeInfo?.bootID && ready(n)).length === o.nodes + 1;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    await applyObjects(
      kc,
      [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
        ...GROUPS.flatMap((g) => workloads(g, sizes[g], o)),
      ],
      'drydock-bench',
    );
    const want = (o.nodes + 1) * PODS_PER_NODE;
    await eventually(
      `${want} pods Running`,
      async () => {
        const pods = await core.listNamespacedPod({ namespace: NAMESPACE });
        return pods.items.filter((p) => p.status?.phase === 'Running').length === want;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    nodes = watchCollection<V1Node>({
      kubeConfig: kc,
      logger: pino({ level: 'warn' }),
      name: 'bench-nodes',
      path: '/api/v1/nodes',
      labelSelector: GROUP_LABEL,
      list: () => core.listNode({ labelSelector: GROUP_LABEL }),
      onChange: () => undefined,
    });
    await nodes.synced;
    repo = await startFleetRepo(repoFiles(o));
    proxy = await startCountingProxy(
      kc,
      o.eventsAbsorbed === true ? { answerLocally: (method, p) => method === 'POST' && isEventPath(p) } : {},
    );
    const kubeconfig = path.join(cacheDir, 'proxy.kubeconfig');
    writeFileSync(kubeconfig, proxy.kubeconfig);
    drydock = await startReadyDrydock(drydockArgs(repo, kubeconfig, sim.url, cacheDir));
  } catch (err) {
    await proxy?.close();
    await nodes?.stop();
    await stopWorld({ drydock, sim, repo, dirs });
    throw err;
  }
  const watched = nodes;
  const args = drydockArgs(repo, path.join(cacheDir, 'proxy.kubeconfig'), sim.url, cacheDir);
  const world = { sim, repo, proxy };
  let running = drydock;
  let runningStopped = false;
  const stoppedLines: string[] = [];
  return {
    ...world,
    get drydock() {
      return running;
    },
    kc,
    cloudUrl: sim.url,
    groupNodes: (g) => Promise.resolve(watched.list().filter((n) => n.metadata?.labels?.[GROUP_LABEL] === g)),
    stopDrydock: async () => {
      running.kill('SIGTERM');
      await running.exited;
      stoppedLines.push(...running.lines);
      runningStopped = true;
    },
    startDrydock: async () => {
      running = await startReadyDrydock(args);
      runningStopped = false;
    },
    drydockLog: () => (runningStopped ? [...stoppedLines] : [...stoppedLines, ...running.lines]),
    close: async () => {
      await watched.stop();
      await stopWorld({ ...world, drydock: running, dirs });
      await world.proxy.close();
    },
  };
}

async function startReadyDrydock(args: readonly string[]): Promise<DrydockChild> {
  const drydock = startDrydockChild(args);
  const url = await drydock.url;
  await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 60_000 });
  return drydock;
}

export function ready(n: V1Node): boolean {
  return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export const annotations = (n: V1Node): Record<string, string> => n.metadata?.annotations ?? {};
/** Ready, schedulable, and not held by an operation (a replacement keeps its lock with phase Done). */
export const settled = (n: V1Node): boolean =>
  ready(n) &&
  n.spec?.unschedulable !== true &&
  (annotations(n)[ANNOTATIONS.operation] === undefined || annotations(n)[ANNOTATIONS.phase] === 'Done');

/** Every node of `group` runs `image` and is settled: a replace rollout is over. */
export async function replaced(w: RolloutWorld, group: Group, size: number, image: string): Promise<boolean> {
  const ns = await w.groupNodes(group);
  return ns.length === size && ns.every((n) => annotations(n)['sim.drydock.dev/image'] === image && settled(n));
}

/** Every node of `group` records NodeOp `op` and is settled: the NodeOp is over. */
export async function operated(w: RolloutWorld, group: Group, op: string): Promise<boolean> {
  const ns = await w.groupNodes(group);
  return ns.every((n) => annotations(n)[nodeOpRecordKey(op)] !== undefined && settled(n));
}
