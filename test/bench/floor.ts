/**
 * The floor of the makespan benchmark: a minimal driver that rolls the same nodes, the same
 * number at a time, with only the calls the protocol needs, each made as soon as the world has
 * answered the one before — no planning, no status, no Git, no annotations. What it takes is
 * what this world on this machine needs for the rollout; drydock's makespan ÷ this is what
 * drydock adds.
 *
 * replace, per node: a surge instance (the sim cloud's HTTP interface, as drydock uses it), its
 * Node Ready for the health gate's minReadySeconds, cordon the old node, evict its pods (one
 * after another), wait for them gone and their workloads back at their ready replicas, remove
 * the old instance and delete its Node. NodeOp, per node: cordon, evictions, the Job (run by
 * the sim host), a reboot pod once it completed (the sim host reboots the node), the node back
 * with a new bootID, uncordon, the health gate (Ready for minReadySeconds, its pods Ready, the
 * evicted workloads back), then the Job and the reboot pod deleted. The waits are the spec's
 * own (health gate, evicted workloads back) and the world's answers; a slot frees as soon as
 * its node is done. It reaches the API server through the same counting proxy as drydock.
 */
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Deployment,
  type V1Job,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { SimHttpProvider } from '../../src/cloud/sim/http-client.js';
import { nodeNameFor, parseSimProviderID } from '../../src/cloud/sim/nodes.js';
import { pinnedJob } from '../../src/execute/jobs/node-job.js';
import { rebootPod } from '../../src/execute/jobs/reboot-pod.js';
import { JOB_NAME_LABEL, jobOutcome } from '../../src/protocol/job-outcome.js';
import { watchCollection, type WatchedCollection } from '../../src/kube/informer.js';
import type { OperationRef } from '../../src/protocol/jobs.js';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** A refused eviction (a PDB's 429, a 409 on it) is asked again after this long: the floor's own cadence, no Retry-After. */
const EVICTION_RETRY_MS = 250;
const WAIT_MS = 600_000;

export interface FloorOptions {
  /** Through the counting proxy, as drydock's. */
  readonly kc: KubeConfig;
  readonly cloudUrl: string;
  readonly group: string;
  /** The label that marks the group's Nodes, and its value. */
  readonly groupLabel: string;
  readonly concurrency: number;
  readonly minReadySeconds: number;
  /** Where the NodeOp's Job and reboot pod go (drydock's namespace). */
  readonly jobNamespace: string;
}

/** Per node, the instant (ms) each step of the floor answered; `start` when its slot took it. */
export type NodeTimes = Record<string, number>;

export interface FloorRun {
  readonly ms: number;
  readonly nodes: ReadonlyMap<string, NodeTimes>;
}

const isReady = (n: V1Node | undefined): boolean =>
  n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

function readySince(n: V1Node): number {
  const c = n.status?.conditions?.find((x) => x.type === 'Ready');
  return c?.lastTransitionTime ? new Date(c.lastTransitionTime).getTime() : 0;
}

const podReady = (p: V1Pod): boolean =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const finished = (p: V1Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/** What a drain moves (kubectl drain's rules as drydock applies them): not DaemonSet or mirror pods. */
function drained(p: V1Pod): boolean {
  const owner = p.metadata?.ownerReferences?.find((o) => o.controller === true)?.kind;
  return owner !== 'DaemonSet' && p.metadata?.annotations?.['kubernetes.io/config.mirror'] === undefined;
}

/** The Deployment a pod's ReplicaSet belongs to, as namespace/name; undefined for any other owner. */
function deploymentOf(p: V1Pod): string | undefined {
  const rs = p.metadata?.ownerReferences?.find((o) => o.kind === 'ReplicaSet')?.name;
  return rs === undefined ? undefined : `${p.metadata?.namespace ?? ''}/${rs.replace(/-[^-]+$/, '')}`;
}

/**
 * Watch-backed views of what the floor waits on, and `until`: a condition checked on every
 * change (and at the instant it names, for a wait that is only time).
 */
class World {
  readonly nodes: WatchedCollection<V1Node>;
  readonly pods: WatchedCollection<V1Pod>;
  readonly jobs: WatchedCollection<V1Job>;
  readonly deployments: WatchedCollection<V1Deployment>;
  private readonly waiters = new Set<() => void>();

  constructor(o: FloorOptions) {
    // Warnings only: a watch that cannot list would otherwise hold the floor silently.
    const logger = pino({ level: 'warn' });
    const common = { kubeConfig: o.kc, logger, onChange: () => this.changed() };
    const core = o.kc.makeApiClient(CoreV1Api);
    const batch = o.kc.makeApiClient(BatchV1Api);
    const apps = o.kc.makeApiClient(AppsV1Api);
    const selector = `${o.groupLabel}=${o.group}`;
    this.nodes = watchCollection<V1Node>({
      ...common,
      name: 'floor-nodes',
      path: '/api/v1/nodes',
      labelSelector: selector,
      list: () => core.listNode({ labelSelector: selector }),
    });
    this.pods = watchCollection<V1Pod>({
      ...common,
      name: 'floor-pods',
      path: '/api/v1/pods',
      list: () => core.listPodForAllNamespaces(),
    });
    this.jobs = watchCollection<V1Job>({
      ...common,
      name: 'floor-jobs',
      path: `/apis/batch/v1/namespaces/${o.jobNamespace}/jobs`,
      list: () => batch.listNamespacedJob({ namespace: o.jobNamespace }),
    });
    this.deployments = watchCollection<V1Deployment>({
      ...common,
      name: 'floor-deployments',
      path: '/apis/apps/v1/deployments',
      list: () => apps.listDeploymentForAllNamespaces(),
    });
  }

  /**
   * Once every first list is in. Not the collections' `synced`: that waits for the watch's
   * response too, and the counting proxy passes a watch's headers on only with its first event
   * (a namespace without Jobs may send none for minutes). The watch starts from the list's
   * resourceVersion, so nothing between the two is lost.
   */
  async synced(): Promise<void> {
    const all = [this.nodes, this.pods, this.jobs, this.deployments];
    while (!all.every((c) => c.isSynced())) await new Promise((r) => setTimeout(r, 50));
  }

  node(name: string): V1Node | undefined {
    return this.nodes.list().find((n) => n.metadata?.name === name);
  }

  podsOn(node: string): V1Pod[] {
    return this.pods.list().filter((p) => p.spec?.nodeName === node);
  }

  /**
   * Every one of these Deployments at its desired ready replicas (a deleted one is nothing to
   * wait for): by its status, as drydock's health gate reads it, and by its Ready pods, since
   * the status can still count the evicted pods for a moment after their eviction.
   */
  back(deployments: ReadonlySet<string>): boolean {
    const readyPods = new Map<string, number>();
    for (const p of this.pods.list()) {
      const d = deploymentOf(p);
      if (d !== undefined && p.metadata?.deletionTimestamp === undefined && podReady(p))
        readyPods.set(d, (readyPods.get(d) ?? 0) + 1);
    }
    return this.deployments.list().every((d) => {
      const key = `${d.metadata?.namespace ?? ''}/${d.metadata?.name ?? ''}`;
      const want = d.spec?.replicas ?? 1;
      return !deployments.has(key) || ((d.status?.readyReplicas ?? 0) >= want && (readyPods.get(key) ?? 0) >= want);
    });
  }

  /**
   * Resolves once `check` says true; a number is the instant to look again even if nothing
   * changed (a health gate's minReadySeconds running out).
   */
  until(what: string, check: () => boolean | number): Promise<void> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = setTimeout(() => {
        this.waiters.delete(look);
        clearTimeout(timer);
        reject(new Error(`floor: ${what} did not happen within ${WAIT_MS / 1000} s`));
      }, WAIT_MS);
      const look = (): void => {
        const r = check();
        if (r === true) {
          this.waiters.delete(look);
          clearTimeout(deadline);
          clearTimeout(timer);
          resolve();
        } else if (typeof r === 'number') {
          clearTimeout(timer);
          timer = setTimeout(look, Math.max(0, r - Date.now()));
        }
      };
      this.waiters.add(look);
      look();
    });
  }

  private changed(): void {
    for (const look of [...this.waiters]) look();
  }

  async stop(): Promise<void> {
    await Promise.all([this.nodes.stop(), this.pods.stop(), this.jobs.stop(), this.deployments.stop()]);
  }
}

/** Runs `each` over `items`, `width` at a time; a slot takes the next item as soon as it is free. */
async function slots<T>(items: readonly T[], width: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const slot = async (): Promise<void> => {
    while (next < items.length) await each(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, slot));
}

const statusOf = (err: unknown): number | undefined => (err as { code?: number }).code;

/** Evicts every pod a drain moves from `node`, one after another; a refused one is asked again. */
async function evictAll(core: CoreV1Api, pods: readonly V1Pod[]): Promise<void> {
  for (const p of pods) {
    const name = p.metadata?.name ?? '';
    const namespace = p.metadata?.namespace ?? '';
    for (;;) {
      try {
        await core.createNamespacedPodEviction({
          name,
          namespace,
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
        });
        break;
      } catch (err) {
        if (statusOf(err) === 404) break;
        // 429: the PDB allows no disruption now; 409: the API server gave up its own retries
        // while other evictions updated the same PDB. Both change nothing: ask again.
        if (statusOf(err) !== 429 && statusOf(err) !== 409) throw err;
        await new Promise((r) => setTimeout(r, EVICTION_RETRY_MS));
      }
    }
  }
}

/**
 * Cordon, evict, and wait for the node's pods gone (the drain); returns the Deployments that
 * had pods on it, for the health gate's "evicted workloads back".
 */
async function drain(w: World, core: CoreV1Api, node: string, t: NodeTimes): Promise<Set<string>> {
  await core.patchNode({ name: node, body: { spec: { unschedulable: true } } }, MERGE);
  t['cordoned'] = Date.now();
  const pods = w.podsOn(node).filter(drained);
  const workloads = new Set(pods.map(deploymentOf).filter((d): d is string => d !== undefined));
  await evictAll(core, pods);
  t['evicted'] = Date.now();
  const names = new Set(pods.map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`));
  await w.until(`${node} drained`, () =>
    w.podsOn(node).every((p) => !names.has(`${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`)),
  );
  t['drained'] = Date.now();
  return workloads;
}

/** The health gate: `node` Ready and its pods Ready for minReadySeconds, and `workloads` back. */
function healthy(w: World, node: string, minReadySeconds: number, workloads: ReadonlySet<string>): boolean | number {
  const n = w.node(node);
  if (!isReady(n) || n === undefined) return false;
  let from = readySince(n);
  for (const p of w.podsOn(node)) {
    if (p.metadata?.deletionTimestamp !== undefined || finished(p)) continue;
    if (!podReady(p)) return false;
    const c = p.status?.conditions?.find((x) => x.type === 'Ready');
    from = Math.max(from, c?.lastTransitionTime ? new Date(c.lastTransitionTime).getTime() : from);
  }
  if (!w.back(workloads)) return false;
  const at = from + minReadySeconds * 1000;
  return at <= Date.now() ? true : at;
}

async function withWorld<T>(o: FloorOptions, work: (w: World) => Promise<T>): Promise<T> {
  const w = new World(o);
  try {
    await w.synced();
    console.log(`  floor: watching ${w.nodes.list().length} node(s) of ${o.group}`);
    return await work(w);
  } finally {
    await w.stop();
  }
}

function groupNodeNames(w: World): string[] {
  return w.nodes
    .list()
    .map((n) => n.metadata?.name ?? '')
    .sort();
}

/** Every node of the group replaced by a new instance on `image`, `concurrency` at a time. */
export function floorReplace(o: FloorOptions, image: string): Promise<FloorRun> {
  const core = o.kc.makeApiClient(CoreV1Api);
  const cloud = new SimHttpProvider(o.cloudUrl);
  return withWorld(o, async (w) => {
    const old = groupNodeNames(w);
    const times = new Map<string, NodeTimes>();
    const t0 = Date.now();
    await cloud.setGroupImage(o.group, image);
    await slots(old, o.concurrency, async (node) => {
      const t: NodeTimes = { start: Date.now() };
      times.set(node, t);
      const [id] = await cloud.addCapacity(o.group, 1);
      if (id === undefined) throw new Error(`floor: no instance from the surge for ${node}`);
      t['surged'] = Date.now();
      const fresh = nodeNameFor(o.group, id);
      await w.until(`${fresh} joined`, () => isReady(w.node(fresh)));
      t['joined'] = Date.now();
      await w.until(`${fresh} healthy`, () => healthy(w, fresh, o.minReadySeconds, new Set()));
      t['gate'] = Date.now();
      const workloads = await drain(w, core, node, t);
      await w.until(`${node}'s workloads back`, () => w.back(workloads));
      t['back'] = Date.now();
      const instance = parseSimProviderID(w.node(node)?.spec?.providerID ?? '');
      if (instance === undefined) throw new Error(`floor: ${node} has no sim providerID`);
      await cloud.removeInstance(instance.groupId, instance.instanceId);
      await core.deleteNode({ name: node }).catch((err: unknown) => {
        if (statusOf(err) !== 404) throw err;
      });
      t['done'] = Date.now();
    });
    return { ms: Date.now() - t0, nodes: times };
  });
}

/** The NodeOp on every node of the group: cordon, drain, the Job, the reboot, uncordon, health gate. */
export function floorNodeOp(o: FloorOptions, name: string): Promise<FloorRun> {
  const core = o.kc.makeApiClient(CoreV1Api);
  const batch = o.kc.makeApiClient(BatchV1Api);
  const op: OperationRef = { kind: 'NodeOp', name, revision: '1' };
  return withWorld(o, async (w) => {
    const times = new Map<string, NodeTimes>();
    const t0 = Date.now();
    await slots(groupNodeNames(w), o.concurrency, async (node) => {
      const t: NodeTimes = { start: Date.now() };
      times.set(node, t);
      const workloads = await drain(w, core, node, t);
      const taints = () => (w.node(node)?.spec?.taints ?? []).map((x) => ({ key: x.key, effect: x.effect }));
      const job = pinnedJob({
        operation: op,
        node: { name: node, taints: taints() },
        namespace: o.jobNamespace,
        step: 'operation',
        backoffLimit: 0,
        imagePullSecrets: [],
        container: { name: 'operation', image: 'busybox:1.36', command: ['sh', '-c', 'echo patched'] },
        volumes: [],
      });
      const jobName = job.metadata?.name ?? '';
      await batch.createNamespacedJob({ namespace: o.jobNamespace, body: job });
      t['job'] = Date.now();
      // Read as drydock reads it: from the Job's pod as soon as it succeeded (job-outcome.ts).
      const pods = () =>
        w.pods
          .list()
          .filter((p) => p.metadata?.namespace === o.jobNamespace && p.metadata.labels?.[JOB_NAME_LABEL] === jobName);
      await w.until(`${jobName} complete`, () =>
        w.jobs.list().some((j) => j.metadata?.name === jobName && jobOutcome(j, pods()).state === 'succeeded'),
      );
      t['jobDone'] = Date.now();
      const bootID = w.node(node)?.status?.nodeInfo?.bootID ?? '';
      const reboot = rebootPod({
        operation: op,
        node: { name: node, taints: taints() },
        bootID,
        namespace: o.jobNamespace,
      });
      await core.createNamespacedPod({ namespace: o.jobNamespace, body: reboot });
      t['reboot'] = Date.now();
      await w.until(`${node} rebooted`, () => {
        const n = w.node(node);
        return isReady(n) && (n?.status?.nodeInfo?.bootID ?? bootID) !== bootID;
      });
      t['back'] = Date.now();
      await Promise.all([
        core.patchNode({ name: node, body: { spec: { unschedulable: null } } }, MERGE),
        core.deleteNamespacedPod({ name: reboot.metadata?.name ?? '', namespace: o.jobNamespace }),
      ]);
      t['uncordoned'] = Date.now();
      await w.until(`${node} healthy`, () => healthy(w, node, o.minReadySeconds, workloads));
      t['gate'] = Date.now();
      await batch.deleteNamespacedJob({ name: jobName, namespace: o.jobNamespace, propagationPolicy: 'Background' });
      t['done'] = Date.now();
    });
    return { ms: Date.now() - t0, nodes: times };
  });
}

/** The floor's own step instants, in order (node-steps.ts's describeSteps reads them). */
export const REPLACE_STEPS = ['start', 'surged', 'joined', 'gate', 'cordoned', 'evicted', 'drained', 'back', 'done'];
export const NODEOP_STEPS = [
  'start',
  'cordoned',
  'evicted',
  'drained',
  'job',
  'jobDone',
  'reboot',
  'back',
  'uncordoned',
  'gate',
  'done',
];
