/**
 * The reliability suite's invariant monitor. It watches the API server (Nodes, drydock's Jobs
 * and reboot pods, the autoscaler Deployment) and polls the sim cloud — never drydock's logs —
 * and records every breach of what must hold at every instant of a rollout, whatever crashes:
 * unavailable nodes within the budget, no Job or reboot pod created twice for a node and
 * revision, no node rebooted twice, no more instances created than nodes to replace, and the
 * autoscaler either paused (0) or at its exact replicas. What must hold at the end (no orphan
 * instance, nothing cordoned without a reported reason, the autoscaler restored) is checked by
 * `checkEnd`. Whether a NodeOp is done on a node is read here too (`nodeOpSeenDone`): its Job
 * seen succeeded by the API server, then a new bootID.
 */
import {
  AppsV1Api,
  CoreV1Api,
  Watch,
  type KubeConfig,
  type KubernetesObject,
  type V1Deployment,
  type V1Job,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import type { RunningSimCloud } from '../../../src/sim-host/index.js';
import { ANNOTATIONS, DRAIN_PENDING_TAINT, JOB_LABELS, LABELS } from '../../../src/protocol/keys.js';

export interface Violation {
  readonly at: string;
  readonly what: string;
}

interface NodeState {
  readonly unschedulable: boolean;
  readonly ready: boolean;
  readonly locked: boolean;
  readonly bootID: string;
}

/** Re-establishes a watch whenever it ends (an API server restart ends every watch). */
function keepWatching(
  kc: KubeConfig,
  path: string,
  query: Record<string, string>,
  onEvent: (type: string, obj: KubernetesObject) => void,
): () => void {
  let stopped = false;
  let abort: (() => void) | undefined;
  const connect = (): void => {
    if (stopped) return;
    const again = (): void => {
      if (!stopped) setTimeout(connect, 300);
    };
    new Watch(kc).watch(path, query, onEvent, again).then((req) => {
      abort = () => req.abort();
    }, again);
  };
  connect();
  return () => {
    stopped = true;
    abort?.();
  };
}

export class InvariantMonitor {
  readonly violations: Violation[] = [];
  /** How many observations were checked (each watch event and cloud poll). */
  checks = 0;
  maxUnavailable = 0;
  /** Distinct Jobs and reboot pods (by uid) per operation, node, revision and step. */
  readonly created = new Map<string, Set<string>>();
  /** bootID changes per node since the monitor started. */
  readonly reboots = new Map<string, number>();
  /** Per operation and node: when the API server last showed a new operation Job of it succeeded. */
  private readonly jobSucceeded = new Map<string, number>();
  private readonly succeededUids = new Set<string>();
  /** Per node: when its bootID last changed. */
  private readonly rebootedAt = new Map<string, number>();
  private readonly nodes = new Map<string, NodeState>();
  private readonly stops: (() => void)[] = [];
  private instanceCeiling = new Map<string, number>();
  private autoscalerReplicas: number | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly sim: RunningSimCloud,
    private readonly opts: { budget: number; jobNamespace: string; autoscaler: { namespace: string; name: string } },
  ) {}

  start(): void {
    this.stops.push(
      keepWatching(this.kc, '/api/v1/nodes', {}, (type, obj) => this.onNode(type, obj)),
      keepWatching(this.kc, `/apis/batch/v1/namespaces/${this.opts.jobNamespace}/jobs`, {}, (type, obj) =>
        this.onJob(type, obj),
      ),
      keepWatching(
        this.kc,
        `/api/v1/namespaces/${this.opts.jobNamespace}/pods`,
        { labelSelector: `${JOB_LABELS.step}=reboot` },
        (type, obj) => this.onCreated(type, obj, 'reboot pod'),
      ),
      keepWatching(
        this.kc,
        `/api/v1/namespaces/${this.opts.jobNamespace}/pods`,
        { labelSelector: `${JOB_LABELS.step}=operation` },
        (_type, obj) => this.onJobPod(obj),
      ),
      keepWatching(
        this.kc,
        `/apis/apps/v1/namespaces/${this.opts.autoscaler.namespace}/deployments`,
        { fieldSelector: `metadata.name=${this.opts.autoscaler.name}` },
        (_type, obj) => this.onAutoscaler(obj),
      ),
    );
    const poll = setInterval(() => this.pollCloud(), 300);
    this.stops.push(() => clearInterval(poll));
  }

  stop(): void {
    for (const s of this.stops) s();
  }

  /**
   * From now on, `group` may create at most `count` more instances (one per node to replace):
   * a node replaced twice would need one more.
   */
  allowInstances(groupId: string, count: number): void {
    this.instanceCeiling.set(groupId, this.sim.cloud.inspectGroup(groupId).nextInstance - 1 + count);
  }

  /** The autoscaler's replicas outside a rollout; during one it may only be 0. */
  expectAutoscaler(replicas: number): void {
    this.autoscalerReplicas = replicas;
  }

  count(operation: string, node: string, step: string): number {
    let n = 0;
    for (const [key, uids] of this.created)
      if (key.startsWith(`${operation} ${node} `) && key.endsWith(` ${step}`)) n += uids.size;
    return n;
  }

  private violate(what: string): void {
    this.violations.push({ at: new Date().toISOString(), what });
  }

  private onNode(type: string, n: V1Node): void {
    this.checks += 1;
    const name = n.metadata?.name ?? '';
    if (type === 'DELETED') {
      this.nodes.delete(name);
      return;
    }
    const annotations = n.metadata?.annotations ?? {};
    const next: NodeState = {
      unschedulable: n.spec?.unschedulable === true,
      ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      locked: annotations[ANNOTATIONS.operation] !== undefined,
      bootID: n.status?.nodeInfo?.bootID ?? '',
    };
    const prev = this.nodes.get(name);
    if (prev && prev.bootID !== '' && next.bootID !== '' && prev.bootID !== next.bootID) {
      this.reboots.set(name, (this.reboots.get(name) ?? 0) + 1);
      this.rebootedAt.set(name, Date.now());
    }
    this.nodes.set(name, next);
    // Unavailable as the budget counts it: cordoned, or down while drydock holds the node.
    const down = [...this.nodes.values()].filter((s) => s.unschedulable || (!s.ready && s.locked)).length;
    this.maxUnavailable = Math.max(this.maxUnavailable, down);
    if (down > this.opts.budget) {
      const names = [...this.nodes].filter(([, s]) => s.unschedulable || (!s.ready && s.locked)).map(([k]) => k);
      this.violate(`${down} nodes unavailable at once (budget ${this.opts.budget}): ${names.join(', ')}`);
    }
  }

  /**
   * Whether the API server showed what a NodeOp's success on `node` is: its operation Job
   * succeeded, the node came back with a new bootID after that, and it is Ready, schedulable
   * and no longer held. drydock's own record of the success is not asked.
   */
  nodeOpSeenDone(operation: string, node: string): boolean {
    const succeeded = this.jobSucceeded.get(`${operation} ${node}`);
    const rebooted = this.rebootedAt.get(node);
    const state = this.nodes.get(node);
    if (succeeded === undefined || rebooted === undefined || rebooted < succeeded || state === undefined) return false;
    return state.ready && !state.unschedulable && !state.locked;
  }

  /** A drydock Job: counted when created, and noted when it succeeded (a deleted Job shows its last status). */
  private onJob(type: string, job: V1Job): void {
    this.onCreated(type, job, 'Job');
    const l = job.metadata?.labels ?? {};
    const uid = job.metadata?.uid ?? '';
    if (l[LABELS.managedBy] !== 'drydock' || l[JOB_LABELS.step] !== 'operation') return;
    if ((job.status?.succeeded ?? 0) < 1) return;
    this.succeeded(uid, l);
  }

  /**
   * An operation Job's pod: its success is the Job's (a Job of one completion), seen up to the
   * Job controller's batch period (a second) before the Job shows it.
   */
  private onJobPod(pod: V1Pod): void {
    const l = pod.metadata?.labels ?? {};
    if (l[LABELS.managedBy] !== 'drydock' || pod.status?.phase !== 'Succeeded') return;
    this.succeeded(l['batch.kubernetes.io/controller-uid'] ?? '', l);
  }

  /** The first sign that the Job `uid` succeeded, from the Job or its pod. */
  private succeeded(uid: string, labels: Record<string, string>): void {
    if (this.succeededUids.has(uid)) return;
    this.succeededUids.add(uid);
    this.jobSucceeded.set(`${labels[LABELS.operation]} ${labels[LABELS.node]}`, Date.now());
  }

  private onCreated(type: string, obj: KubernetesObject, what: string): void {
    if (type !== 'ADDED') return;
    this.checks += 1;
    const l = obj.metadata?.labels ?? {};
    if (l[LABELS.managedBy] !== 'drydock') return;
    const key = `${l[LABELS.operation]} ${l[LABELS.node]} ${l[JOB_LABELS.revision]} ${l[JOB_LABELS.step]}`;
    const uids = this.created.get(key) ?? new Set<string>();
    uids.add(obj.metadata?.uid ?? '');
    this.created.set(key, uids);
    if (uids.size > 1) this.violate(`${what} created ${uids.size} times for ${key}`);
  }

  private onAutoscaler(d: V1Deployment): void {
    this.checks += 1;
    const replicas = d.spec?.replicas ?? 1;
    if (this.autoscalerReplicas !== undefined && replicas !== 0 && replicas !== this.autoscalerReplicas) {
      this.violate(`autoscaler at ${replicas} replicas, neither paused (0) nor its own ${this.autoscalerReplicas}`);
    }
  }

  private pollCloud(): void {
    this.checks += 1;
    for (const [groupId, ceiling] of this.instanceCeiling) {
      const created = this.sim.cloud.inspectGroup(groupId).nextInstance - 1;
      if (created > ceiling) {
        this.violate(
          `group ${groupId} created ${created} instances, at most ${ceiling} allowed (a node replaced twice)`,
        );
        this.instanceCeiling.set(groupId, created);
      }
    }
  }
}

/**
 * What must hold once drydock is done: every live cloud instance is a Node and every sim Node a
 * live instance (no orphan either way); no node cordoned by drydock unless `reported` (node →
 * the status text that names it) says why; no node locked unless reported; the autoscaler at
 * exactly `autoscalerReplicas` with nothing remembered.
 */
export async function checkEnd(
  kc: KubeConfig,
  sim: RunningSimCloud,
  o: {
    groups: readonly string[];
    reported?: ReadonlyMap<string, string>;
    autoscaler: { namespace: string; name: string; replicas: number };
  },
): Promise<Violation[]> {
  const at = new Date().toISOString();
  const out: string[] = [];
  const list = (await kc.makeApiClient(CoreV1Api).listNode()).items;
  const nodeNames = new Set(list.map((n) => n.metadata?.name ?? ''));
  for (const groupId of o.groups) {
    const live = sim.cloud.inspectGroup(groupId).instances.filter((i) => i.state !== 'terminating');
    for (const i of live)
      if (!nodeNames.has(`${groupId}-${i.id}`)) out.push(`orphan instance ${groupId}/${i.id} (${i.state}) has no Node`);
    const ids = new Set(live.map((i) => `${groupId}-${i.id}`));
    for (const n of list) {
      const name = n.metadata?.name ?? '';
      if (n.metadata?.labels?.['sim.drydock.dev/group'] === groupId && !ids.has(name))
        out.push(`Node ${name} has no live instance`);
    }
  }
  for (const n of list) {
    const name = n.metadata?.name ?? '';
    const a = n.metadata?.annotations ?? {};
    const reason = o.reported?.get(name);
    const named = reason !== undefined && reason.includes(name);
    if (a[ANNOTATIONS.cordoned] !== undefined && !named)
      out.push(`${name} left cordoned by drydock with no reported reason`);
    // A replacement keeps its lock's record with phase Done: only a lock not Done is held.
    const held = a[ANNOTATIONS.operation] !== undefined && a[ANNOTATIONS.phase] !== 'Done';
    if (held && !named) out.push(`${name} left locked by ${a[ANNOTATIONS.operation]}`);
    if (n.spec?.unschedulable === true && a[ANNOTATIONS.cordoned] === undefined)
      out.push(`${name} cordoned, not by drydock`);
    // Every rollout ended: no node is drained later, so none keeps the taint that says so.
    const marked = n.spec?.taints?.some((t) => t.key === DRAIN_PENDING_TAINT.key) === true;
    if (marked && !named)
      out.push(`${name} still tainted ${DRAIN_PENDING_TAINT.key} (by ${a[ANNOTATIONS.drainPending] ?? 'no one'})`);
  }
  const d = await kc
    .makeApiClient(AppsV1Api)
    .readNamespacedDeployment({ name: o.autoscaler.name, namespace: o.autoscaler.namespace });
  const replicas = d.spec?.replicas ?? 1;
  if (replicas !== o.autoscaler.replicas)
    out.push(`autoscaler at ${replicas} replicas, not restored to ${o.autoscaler.replicas}`);
  const remembered = d.metadata?.annotations?.[ANNOTATIONS.previousReplicas];
  if (remembered !== undefined) out.push(`autoscaler still remembers ${remembered} replicas`);
  return out.map((what) => ({ at, what }));
}
