/**
 * A simulated world for sequence tests: a cloud scaling group whose instances boot after a
 * delay and join as nodes, workloads whose pods are evicted through their PDBs and come back
 * elsewhere, and a cluster-autoscaler Deployment. It applies the planner's actions the way the
 * executor does: what a node write or the autoscaler's scaling changes is decided by the
 * executor's own functions (node-patch.ts, scaleStep), so the world cannot keep a rule the
 * executor dropped; the cloud, the scheduler and the PDBs are played here (surge only adds
 * capacity). It answers with an ObservedState. Faults come from the seeded generator.
 */
import type { Instance } from '../../../src/cloud/provider.js';
import { ANNOTATIONS, type ObservedNode, type ObservedPod, type ObservedState } from '../../../src/observe/types.js';
import type { Action } from '../../../src/plan/index.js';
import type { SeededRandom as Random } from '../../../src/cloud/sim/random.js';
import { drainPendingStep, scaleStep, type NodeTaints } from '../../../src/execute/actions.js';
import { applyNodeWrite } from '../node-patch.js';

export interface Faults {
  /** Chance a new instance never joins. */
  readonly neverJoins: number;
  /** Chance an eviction the PDB would allow is refused anyway (429). */
  readonly evict429: number;
}

export interface Timing {
  /** Seconds from instance creation to a Ready node: [min, max]. */
  readonly boot: readonly [number, number];
  /** Seconds an evicted pod takes to terminate. */
  readonly terminate: number;
  /** Seconds until the workload's new pod is created, and then until it is Ready. */
  readonly reschedule: number;
  readonly podReady: number;
}

interface SimInstance {
  readonly id: string;
  readonly group: string;
  readonly image: string;
  readonly createdAt: number;
  state: Instance['state'];
}

interface SimNode {
  readonly name: string;
  readonly providerID: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  unschedulable: boolean;
  taints: NodeTaints;
  readonly readySince: number;
  readonly createdAt: number;
}

interface SimPod {
  readonly name: string;
  readonly app: string;
  nodeName: string;
  readyAt: number;
  terminating: boolean;
  readonly daemon: boolean;
}

interface Workload {
  readonly app: string;
  readonly replicas: number;
  readonly minAvailable: number;
}

type Event = { readonly at: number; readonly seq: number; readonly run: () => void };

export interface SimGroup {
  readonly name: string;
  readonly nodes: number;
}

export interface WorldOptions {
  /** Scaling groups, each with its initial node count; instance ids are numbered across all. */
  readonly groups: readonly SimGroup[];
  readonly image: string;
  readonly workloads: readonly Workload[];
  readonly autoscalerReplicas: number;
  readonly timing: Timing;
  readonly faults: Faults;
}

export class World {
  now: number;
  /** Per group: the image new instances get, and the target size. */
  readonly groups = new Map<string, { image: string; targetSize: number }>();
  readonly instances = new Map<string, SimInstance>();
  readonly nodes = new Map<string, SimNode>();
  readonly pods = new Map<string, SimPod>();
  readonly workloads: readonly Workload[];
  autoscaler: { replicas: number; annotations: Record<string, string> };
  private nextId: number;
  private nextPod = 0;
  private seq = 0;
  private events: Event[] = [];
  /** Problems of the kind no planner action may ever cause. */
  readonly violations: string[] = [];

  constructor(
    readonly options: WorldOptions,
    readonly random: Random,
    start: number,
    readonly log: (line: string) => void,
  ) {
    this.now = start;
    this.workloads = options.workloads;
    this.autoscaler = { replicas: options.autoscalerReplicas, annotations: {} };
    this.nextId = 0;
    for (const g of options.groups) {
      this.groups.set(g.name, { image: options.image, targetSize: g.nodes });
      for (let i = 0; i < g.nodes; i++) {
        const inst: SimInstance = {
          id: `i-${this.nextId++}`,
          group: g.name,
          image: options.image,
          createdAt: start - 3600_000,
          state: 'running',
        };
        this.instances.set(inst.id, inst);
        this.addNode(inst, start - 3600_000);
      }
    }
    for (const w of options.workloads) for (let r = 0; r < w.replicas; r++) this.placePod(w.app, start - 3600_000);
  }

  private nodeName(inst: SimInstance): string {
    return `${inst.group}-${inst.id.slice(2)}`;
  }

  private providerID(inst: SimInstance): string {
    return `sim://${inst.group}/${inst.id}`;
  }

  private group(id: string): { image: string; targetSize: number } {
    const g = this.groups.get(id);
    if (g === undefined) throw new Error(`the simulated world has no group ${id}`);
    return g;
  }

  protected at(delayMs: number, run: () => void): void {
    this.events.push({ at: this.now + delayMs, seq: this.seq++, run });
  }

  nextEventAt(): number | undefined {
    let min: number | undefined;
    for (const e of this.events) if (min === undefined || e.at < min) min = e.at;
    return min;
  }

  /** Runs every event due at or before `t`, in time order. */
  advanceTo(t: number): void {
    for (;;) {
      const due = this.events.filter((e) => e.at <= t).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.events = this.events.filter((e) => e !== due);
      this.now = due.at;
      due.run();
    }
    this.now = t;
  }

  private addNode(inst: SimInstance, at: number): void {
    const name = this.nodeName(inst);
    this.nodes.set(name, {
      name,
      providerID: this.providerID(inst),
      labels: { 'kubernetes.io/hostname': name, pool: 'general' },
      annotations: {},
      unschedulable: false,
      taints: [],
      readySince: at,
      createdAt: at,
    });
    this.pods.set(`ds-${name}`, {
      name: `ds-${name}`,
      app: 'node-agent',
      nodeName: name,
      readyAt: at,
      terminating: false,
      daemon: true,
    });
  }

  /** The schedulable node with fewest workload pods (ties by name); undefined if none. */
  /**
   * Where the scheduler puts a pod: a schedulable node, one without a PreferNoSchedule taint
   * first (kube-scheduler's TaintToleration score), then the least loaded.
   */
  private pickNode(): string | undefined {
    const load = new Map<string, number>();
    const shunned = new Set<string>();
    for (const n of this.nodes.values()) {
      if (n.unschedulable || this.instanceOf(n)?.state !== 'running') continue;
      load.set(n.name, 0);
      if (n.taints.some((t) => t.effect === 'PreferNoSchedule')) shunned.add(n.name);
    }
    for (const p of this.pods.values())
      if (!p.daemon && load.has(p.nodeName)) load.set(p.nodeName, (load.get(p.nodeName) ?? 0) + 1);
    const rank = (name: string): number => (shunned.has(name) ? 1 : 0);
    return [...load.entries()].sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0];
  }

  private placePod(app: string, readyAt: number): void {
    const nodeName = this.pickNode();
    if (nodeName === undefined) {
      this.at(5000, () => this.placePod(app, this.now + this.options.timing.podReady * 1000));
      return;
    }
    const name = `${app}-${this.nextPod++}`;
    this.pods.set(name, { name, app, nodeName, readyAt, terminating: false, daemon: false });
    // The pod turning Ready is a watch event: it wakes the loop.
    if (readyAt > this.now) this.at(readyAt - this.now, () => undefined);
  }

  private instanceOf(n: SimNode): SimInstance | undefined {
    return this.instances.get(n.providerID.slice(n.providerID.lastIndexOf('/') + 1));
  }

  private healthy(app: string): number {
    let n = 0;
    for (const p of this.pods.values()) if (p.app === app && !p.terminating && p.readyAt <= this.now) n++;
    return n;
  }

  /** Applies one action as the executor would; returns whether the world changed. */
  apply(a: Action): boolean {
    switch (a.kind) {
      case 'setGroupImage':
        this.group(a.groupId).image = a.image;
        this.log(`set group ${a.groupId} image ${a.image}`);
        return true;
      case 'surge': {
        const ids: string[] = [];
        for (let i = 0; i < a.count; i++) {
          const inst: SimInstance = {
            id: `i-${this.nextId++}`,
            group: a.groupId,
            image: this.group(a.groupId).image,
            createdAt: this.now,
            state: 'running',
          };
          this.instances.set(inst.id, inst);
          ids.push(inst.id);
          if (this.random.chance(this.options.faults.neverJoins)) continue;
          const [lo, hi] = this.options.timing.boot;
          this.at(this.random.int(lo, hi) * 1000, () => {
            if (inst.state !== 'running') return;
            this.addNode(inst, this.now);
            this.log(`${this.nodeName(inst)} joined (${inst.id}, ${inst.image})`);
          });
        }
        this.group(a.groupId).targetSize += a.count;
        this.log(`surge +${a.count} for ${(a.forNodes ?? []).join(', ')}: ${ids.join(', ')} booting`);
        return true;
      }
      case 'annotateNode':
      case 'cordon':
      case 'uncordon': {
        const n = this.nodes.get(a.node);
        if (n === undefined || !applyNodeWrite(n, a)) return false;
        this.log(
          a.kind === 'annotateNode'
            ? `annotate ${a.node} ${describeAnnotations(a.annotations)}`
            : `${a.kind} ${a.node}`,
        );
        return true;
      }
      case 'evict':
      case 'deletePod': {
        const p = this.pods.get(a.pod);
        if (p === undefined || p.terminating) return false;
        const w = this.workloads.find((x) => x.app === p.app);
        if (a.kind === 'evict' && w !== undefined && p.readyAt <= this.now) {
          if (this.healthy(p.app) - 1 < w.minAvailable || this.random.chance(this.options.faults.evict429)) {
            this.log(`evict ${a.pod}: 429 (PDB ${p.app})`);
            return false;
          }
        }
        p.terminating = true;
        this.log(`${a.kind === 'evict' ? 'evict' : 'delete'} ${a.pod} from ${a.node}`);
        const t = this.options.timing;
        this.at(t.terminate * 1000, () => {
          this.pods.delete(p.name);
        });
        if (!p.daemon) this.at(t.reschedule * 1000, () => this.placePod(p.app, this.now + t.podReady * 1000));
        return true;
      }
      case 'labelNode': {
        const n = this.nodes.get(a.node);
        if (n === undefined) return false;
        for (const [k, v] of Object.entries(a.labels)) {
          if (v === null) delete n.labels[k];
          else n.labels[k] = v;
        }
        this.log(`label ${a.node} (${Object.keys(a.labels).join(', ')})`);
        return true;
      }
      case 'markDrainPending': {
        const n = this.nodes.get(a.node);
        if (n === undefined) return false;
        const step = drainPendingStep(n, a.pending, a.spec);
        if (step.kind === 'skipped') return false;
        n.taints = step.patch.taints;
        if (step.patch.annotation === null) delete n.annotations[ANNOTATIONS.drainPending];
        else n.annotations[ANNOTATIONS.drainPending] = step.patch.annotation;
        this.log(`${a.pending ? 'mark' : 'unmark'} ${a.node} drained later`);
        return true;
      }
      // This world has no MachineConfigPools.
      case 'patchPool':
        return false;
      case 'copyLabels': {
        const n = this.nodes.get(a.to);
        if (n === undefined) return false;
        Object.assign(n.labels, a.labels);
        this.log(`copy labels ${a.from} -> ${a.to} (${Object.keys(a.labels).join(', ')})`);
        return true;
      }
      case 'removeInstance': {
        const inst = this.instances.get(a.instanceId);
        if (inst === undefined || inst.state === 'terminating') return false;
        inst.state = 'terminating';
        this.group(inst.group).targetSize--;
        this.lose(this.nodeName(inst), `instance ${inst.id} removed`);
        this.log(`remove instance ${inst.id}`);
        this.at(5000, () => this.instances.delete(inst.id));
        return true;
      }
      case 'deleteNode': {
        if (!this.nodes.has(a.node)) return false;
        this.lose(a.node, 'Node deleted');
        this.nodes.delete(a.node);
        for (const p of [...this.pods.values()]) if (p.nodeName === a.node) this.pods.delete(p.name);
        this.log(`delete node ${a.node}`);
        return true;
      }
      case 'scaleDeployment': {
        const before = this.autoscaler.replicas;
        const remembered = this.autoscaler.annotations[ANNOTATIONS.previousReplicas];
        const step = scaleStep({ replicas: before, ...(remembered !== undefined ? { remembered } : {}) }, a);
        if (step.kind === 'skipped') return false;
        if (step.previous === null) delete this.autoscaler.annotations[ANNOTATIONS.previousReplicas];
        else this.autoscaler.annotations[ANNOTATIONS.previousReplicas] = step.previous;
        this.autoscaler.replicas = step.replicas;
        if (before !== step.replicas) this.log(`scale cluster-autoscaler ${before} -> ${step.replicas}`);
        return true;
      }
      case 'createNodeJob':
      case 'createBottlerocketUpdateJob':
      case 'createGateJob':
      case 'createRebootPod':
      case 'deleteJob':
      case 'deleteRebootPod':
        // This world plays replace rollouts; node operations have their own (test/plan/nodeop/).
        throw new Error(`the replace world does not run ${a.kind}`);
    }
  }

  /** Ready as the node's status would say: its instance runs. */
  isReady(node: { readonly name: string; readonly providerID: string }): boolean {
    const id = node.providerID.slice(node.providerID.lastIndexOf('/') + 1);
    return this.instances.get(id)?.state === 'running';
  }

  /** Being drained as the API server would show it: a workload pod on it is terminating. */
  draining(nodeName: string): boolean {
    for (const p of this.pods.values()) if (p.nodeName === nodeName && p.terminating && !p.daemon) return true;
    return false;
  }

  /** A node going away must hold no workload pod that was not evicted first. */
  private lose(nodeName: string, why: string): void {
    for (const p of this.pods.values()) {
      if (p.nodeName === nodeName && !p.daemon && !p.terminating)
        this.violations.push(`${why} while pod ${p.name} still ran on ${nodeName}`);
    }
  }

  observe(): ObservedState {
    const nodes: ObservedNode[] = [...this.nodes.values()]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((n) => ({
        name: n.name,
        providerID: n.providerID,
        labels: { ...n.labels },
        annotations: { ...n.annotations },
        unschedulable: n.unschedulable,
        ready: this.instanceOf(n)?.state === 'running',
        readySince: new Date(n.readySince).toISOString(),
        createdAt: new Date(n.createdAt).toISOString(),
        taints: n.taints.map((t) => ({ ...t })),
      }));
    const pdbs = this.workloads.map((w) => ({
      namespace: 'default',
      name: w.app,
      disruptionsAllowed: Math.max(0, this.healthy(w.app) - w.minAvailable),
      currentHealthy: this.healthy(w.app),
      desiredHealthy: w.minAvailable,
      expectedPods: w.replicas,
    }));
    const pods: ObservedPod[] = [...this.pods.values()]
      .map((p) => ({
        namespace: p.daemon ? 'kube-system' : 'default',
        name: p.name,
        uid: p.name,
        nodeName: p.nodeName,
        labels: { app: p.app },
        ownerKind: p.daemon ? ('DaemonSet' as const) : ('ReplicaSet' as const),
        phase: 'Running',
        ready: p.readyAt <= this.now,
        readySince: new Date(p.readyAt).toISOString(),
        terminating: p.terminating,
        hasEmptyDir: false,
        mirror: false,
        pdbs: p.daemon ? [] : [`default/${p.app}`],
      }))
      .sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1));
    const toInstance = (i: SimInstance): Instance => ({
      id: i.id,
      providerID: this.providerID(i),
      image: i.image,
      state: i.state,
      createdAt: new Date(i.createdAt).toISOString(),
    });
    const all = [...this.instances.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
    return {
      nodes,
      pods,
      pdbs,
      deployments: [
        {
          namespace: 'kube-system',
          name: 'cluster-autoscaler',
          replicas: this.autoscaler.replicas,
          annotations: { ...this.autoscaler.annotations },
        },
      ],
      jobs: [],
      cloudGroups: [...this.groups.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, g]) => ({
          scalingGroup: name,
          description: {
            groupId: name,
            image: g.image,
            targetSize: g.targetSize,
            instances: all.filter((i) => i.group === name).map(toInstance),
          },
        })),
      problems: [],
    };
  }

  podCount(): number {
    let n = 0;
    for (const p of this.pods.values()) if (!p.daemon) n++;
    return n;
  }
}

function describeAnnotations(a: Readonly<Record<string, string | null>>): string {
  return Object.entries(a)
    .map(([k, v]) => `${k.replace('drydock.dev/', '')}=${v === null ? '-' : k === ANNOTATIONS.phaseSince ? 'now' : v}`)
    .join(' ');
}
