/**
 * A small world for NodeOp sequence tests: nodes over simulated hosts (hosts.ts), whose Jobs
 * end after a random time (failing on chosen nodes) and which reboot when a reboot pod starts
 * on them. It applies actions as the executor would (node writes through node-patch.ts, with
 * the executor's own rules) and checks what only the NodeOp world knows: a node is never
 * cordoned before its gate before-Jobs succeeded, and an after-Job never starts while the node
 * is cordoned.
 */
import type { SeededRandom } from '../../../src/cloud/sim/random.js';
import { gateJobName, JOB_LABELS } from '../../../src/execute/jobs/index.js';
import type { ObservedNode, ObservedState } from '../../../src/observe/types.js';
import type { Action } from '../../../src/plan/types.js';
import { observed } from '../fixtures.js';
import { applyNodeWrite } from '../node-patch.js';
import { isHostAction, jobState, NodeHosts } from './hosts.js';

export { NS } from './hosts.js';
const CP_LABEL = 'node-role.kubernetes.io/control-plane';

interface WNode {
  name: string;
  controlPlane: boolean;
  /** Labels drydock wrote (the phase label); observe() adds the node's own. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  unschedulable: boolean;
  failsJobs: boolean;
}

export class NodeOpWorld {
  now = 0;
  readonly nodes = new Map<string, WNode>();
  readonly hosts: NodeHosts;
  readonly violations: string[] = [];
  private readonly timers: { at: number; fn: () => void }[] = [];

  constructor(random: SeededRandom) {
    const clock = { now: () => this.now, at: (ms: number, fn: () => void) => this.at(ms, fn) };
    const fails = (node: string): boolean => this.nodes.get(node)?.failsJobs ?? false;
    this.hosts = new NodeHosts(random, clock, fails, this.violations);
  }

  addNode(name: string, o: { controlPlane?: boolean; failsJobs?: boolean } = {}): void {
    this.nodes.set(name, {
      name,
      controlPlane: o.controlPlane ?? false,
      labels: {},
      annotations: {},
      unschedulable: false,
      failsJobs: o.failsJobs ?? false,
    });
    this.hosts.addHost(name);
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
      labels: { ...n.labels, 'kubernetes.io/hostname': n.name, ...(n.controlPlane ? { [CP_LABEL]: '' } : {}) },
      annotations: { ...n.annotations },
      unschedulable: n.unschedulable,
      ready: this.hosts.isUp(n.name),
      readySince: new Date(Math.max(-3600_000, this.hosts.upSince(n.name))).toISOString(),
      createdAt: new Date(-3600_000).toISOString(),
      bootID: this.hosts.bootID(n.name),
      taints: [],
    }));
    return observed({ nodes, jobs: this.hosts.jobsObserved(), pods: this.hosts.podsObserved() });
  }

  /** Applies an action as the executor would. */
  apply(a: Action): void {
    if (isHostAction(a)) {
      const fresh = a.kind === 'createGateJob' && !this.hosts.jobs.has(gateJobName(a));
      if (fresh && a.step === 'after' && this.node(a.node).unschedulable)
        this.violations.push(`t=${this.now}: an after-Job for ${a.node} started while it is cordoned`);
      this.hosts.apply(a);
      return;
    }
    switch (a.kind) {
      case 'cordon':
        for (const j of this.hosts.jobs.values())
          if (j.node === a.node && j.labels[JOB_LABELS.step] === 'before' && jobState(j) !== 'succeeded')
            this.violations.push(`t=${this.now}: ${a.node} cordoned before its gate Job ${j.name} succeeded`);
        applyNodeWrite(this.node(a.node), a);
        return;
      case 'annotateNode':
      case 'uncordon':
        applyNodeWrite(this.node(a.node), a);
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
}
