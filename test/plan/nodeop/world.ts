/**
 * A small world for NodeOp sequence tests: nodes whose hosts run Jobs (each ends after a
 * random time, failing on chosen nodes) and reboot when a reboot pod starts on them (NotReady
 * for a while, then a new bootID). It applies actions as the executor would, including their
 * idempotence (a create of an object that exists is a no-op), and counts what the API server
 * would: Jobs created per name, reboots per node, Job successes per node.
 */
import type { SeededRandom } from '../../../src/cloud/sim/random.js';
import { gateJobName, JOB_LABELS, jobLabels, nodeJobName, rebootPodName } from '../../../src/execute/jobs/index.js';
import type { ObservedJob, ObservedNode, ObservedPod, ObservedState } from '../../../src/observe/types.js';
import type { Action } from '../../../src/plan/types.js';
import { ANNOTATIONS } from '../../../src/protocol/keys.js';
import { observed, pod } from '../fixtures.js';

export const NS = 'drydock-system';
const CP_LABEL = 'node-role.kubernetes.io/control-plane';

interface WNode {
  name: string;
  controlPlane: boolean;
  annotations: Record<string, string>;
  unschedulable: boolean;
  ready: boolean;
  readySince: number;
  bootID: string;
  failsJobs: boolean;
}

interface WJob {
  name: string;
  node: string;
  labels: Record<string, string>;
  endsAt: number;
  fails: boolean;
  attempts: number;
}

export class NodeOpWorld {
  now = 0;
  readonly nodes = new Map<string, WNode>();
  readonly jobs = new Map<string, WJob>();
  readonly rebootPods = new Map<string, { node: string }>();
  /** What the API server saw: creations per Job name, reboots and Job successes per node. */
  readonly jobCreates = new Map<string, number>();
  readonly reboots = new Map<string, number>();
  readonly successes = new Map<string, number>();
  readonly violations: string[] = [];
  private readonly timers: { at: number; fn: () => void }[] = [];
  private boots = 0;

  constructor(private readonly random: SeededRandom) {}

  addNode(name: string, o: { controlPlane?: boolean; failsJobs?: boolean } = {}): void {
    this.nodes.set(name, {
      name,
      controlPlane: o.controlPlane ?? false,
      annotations: {},
      unschedulable: false,
      ready: true,
      readySince: -3600_000,
      bootID: this.newBoot(),
      failsJobs: o.failsJobs ?? false,
    });
  }

  private newBoot(): string {
    return `boot-${String(++this.boots).padStart(4, '0')}-0000`;
  }

  private at(delayMs: number, fn: () => void): void {
    this.timers.push({ at: this.now + delayMs, fn });
    this.timers.sort((a, b) => a.at - b.at);
  }

  /** Moves the clock, running what falls due on the way. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (let t = this.timers[0]; t !== undefined && t.at <= end; t = this.timers[0]) {
      this.timers.shift();
      this.now = t.at;
      t.fn();
    }
    this.now = end;
  }

  observe(): ObservedState {
    const nodes: ObservedNode[] = [...this.nodes.values()].map((n) => ({
      name: n.name,
      labels: { 'kubernetes.io/hostname': n.name, ...(n.controlPlane ? { [CP_LABEL]: '' } : {}) },
      annotations: { ...n.annotations },
      unschedulable: n.unschedulable,
      ready: n.ready,
      readySince: new Date(n.readySince).toISOString(),
      createdAt: new Date(-3600_000).toISOString(),
      bootID: n.bootID,
      taints: [],
    }));
    const jobs: ObservedJob[] = [...this.jobs.values()].map((j) => {
      const ended = j.endsAt <= this.now;
      return {
        namespace: NS,
        name: j.name,
        labels: j.labels,
        succeeded: ended && !j.fails,
        failed: ended && j.fails,
        attempts: ended ? j.attempts : 0,
        ...(ended && j.fails ? { failureReason: 'BackoffLimitExceeded' } : {}),
      };
    });
    const pods: ObservedPod[] = [...this.rebootPods].map(([name, p]) =>
      pod(NS, name, p.node, { ownerKind: 'None', phase: 'Succeeded' }),
    );
    return observed({ nodes, jobs, pods });
  }

  /** Applies an action as the executor would. */
  apply(a: Action): void {
    switch (a.kind) {
      case 'annotateNode': {
        const n = this.node(a.node);
        for (const [k, v] of Object.entries(a.annotations))
          if (v === null) delete n.annotations[k];
          else n.annotations[k] = v;
        return;
      }
      case 'cordon': {
        const n = this.node(a.node);
        for (const j of this.jobs.values())
          if (j.node === a.node && j.labels[JOB_LABELS.step] === 'before' && (j.endsAt > this.now || j.fails))
            this.violations.push(`t=${this.now}: ${a.node} cordoned before its gate Job ${j.name} succeeded`);
        if (!n.unschedulable)
          Object.assign(
            n,
            { unschedulable: true },
            { annotations: { ...n.annotations, [ANNOTATIONS.cordoned]: 'true' } },
          );
        return;
      }
      case 'uncordon': {
        const n = this.node(a.node);
        if (n.annotations[ANNOTATIONS.cordoned] !== 'true') return;
        delete n.annotations[ANNOTATIONS.cordoned];
        n.unschedulable = false;
        return;
      }
      case 'createNodeJob':
        return this.createJob(a);
      case 'createGateJob':
        return this.createGateJob(a);
      case 'createRebootPod':
        return this.createRebootPod(a);
      case 'deleteJob': {
        const j = this.jobs.get(a.name);
        if (j !== undefined && j.endsAt > this.now)
          this.violations.push(`t=${this.now}: deleteJob of running Job ${a.name}`);
        this.jobs.delete(a.name);
        return;
      }
      case 'deleteRebootPod':
        this.rebootPods.delete(a.name);
        return;
      default:
        this.violations.push(`unexpected action ${a.kind}`);
    }
  }

  private node(name: string): WNode {
    const n = this.nodes.get(name);
    if (n === undefined) throw new Error(`no node ${name}`);
    return n;
  }

  private createJob(a: Extract<Action, { kind: 'createNodeJob' }>): void {
    const name = nodeJobName(a.operation, a.node);
    if (this.jobs.has(name)) return; // AlreadyExists: the executor skips
    const creates = (this.jobCreates.get(name) ?? 0) + 1;
    this.jobCreates.set(name, creates);
    if (creates > 1) this.violations.push(`t=${this.now}: Job ${name} created a second time`);
    const n = this.node(a.node);
    const job: WJob = {
      name,
      node: a.node,
      labels: jobLabels(a.operation, a.node, 'operation'),
      endsAt: this.now + this.random.int(5, 60) * 1000,
      fails: n.failsJobs,
      attempts: n.failsJobs ? a.job.backoffLimit + 1 : 1,
    };
    this.jobs.set(name, job);
    this.at(job.endsAt - this.now, () => {
      if (!job.fails) this.successes.set(job.node, (this.successes.get(job.node) ?? 0) + 1);
    });
  }

  /** A gate Job: created once per name (gate, step, node, revision), never for a cordoned node's after-step. */
  private createGateJob(a: Extract<Action, { kind: 'createGateJob' }>): void {
    const name = gateJobName({ ...a, node: a.node });
    if (this.jobs.has(name)) return;
    const creates = (this.jobCreates.get(name) ?? 0) + 1;
    this.jobCreates.set(name, creates);
    if (creates > 1) this.violations.push(`t=${this.now}: gate Job ${name} created a second time`);
    if (a.step === 'after' && this.node(a.node).unschedulable)
      this.violations.push(`t=${this.now}: after-Job ${name} started while ${a.node} is cordoned`);
    this.jobs.set(name, {
      name,
      node: a.node,
      labels: jobLabels(a.operation, a.node, a.step),
      endsAt: this.now + this.random.int(2, 30) * 1000,
      fails: false,
      attempts: 1,
    });
  }

  private createRebootPod(a: Extract<Action, { kind: 'createRebootPod' }>): void {
    const name = rebootPodName(a.node, a.bootID);
    if (this.rebootPods.has(name)) return;
    this.rebootPods.set(name, { node: a.node });
    const n = this.node(a.node);
    if (n.bootID !== a.bootID) return; // a pod for a boot that is over does nothing
    this.reboots.set(a.node, (this.reboots.get(a.node) ?? 0) + 1);
    this.at(this.random.int(1, 5) * 1000, () => {
      n.ready = false;
      this.at(this.random.int(20, 120) * 1000, () => {
        n.bootID = this.newBoot();
        n.ready = true;
        n.readySince = this.now;
      });
    });
  }
}
