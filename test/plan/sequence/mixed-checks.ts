/**
 * The invariants of a mixed run (mixed.ts), read from the world after every action rather than
 * from the planner's own bookkeeping: how many nodes are unavailable (cordoned by drydock,
 * NotReady, or running a Job or a reboot), which operation a node's host is busy with, who
 * cordoned a node, and what the hosts counted (Jobs created, reboots, successes).
 */
import { nodeJobName } from '../../../src/execute/jobs/index.js';
import type { Action } from '../../../src/plan/index.js';
import { ANNOTATIONS, nodeOpRecordKey } from '../../../src/protocol/keys.js';
import type { NodeMaintenance, NodeOp } from '../../../src/spec/model.js';
import type { OpsWorld } from './ops-world.js';
import { START } from './driver.js';

/** What the checks read of the run: the budget, the first nodes, the NodeOp. */
export interface MixedSetup {
  readonly budget: number;
  readonly nodes: number;
  readonly op: NodeOp;
  readonly start?: number;
}

/** A person's NodeMaintenance in the run: what held its node when it came, when it drained and left Git. */
export interface Maintained {
  readonly m: NodeMaintenance;
  readonly heldBy?: string;
  readonly early: boolean;
  readonly drainedAt?: number;
  readonly removedAt?: number;
}

const DRAINING = new Set(['Cordoned', 'Draining']);

export class MixedChecks {
  readonly violations: string[] = [];
  /** Nodes the NodeImage rollout ever locked (the driver's finalChecks follows them to the end). */
  readonly imageLocked = new Set<string>();
  /** Steps at which a NodeImage node, a NodeOp node and a maintained node were all unavailable. */
  allThreeRounds = 0;
  maxDown = 0;
  /** Per maintenance that took its node and left Git: whether the node was still cordoned when its lock went. */
  readonly releasedCordoned = new Map<string, boolean>();
  private readonly taker = new Map<string, string>();
  private readonly seen = new Set<string>();

  constructor(
    private readonly world: OpsWorld,
    private readonly s: MixedSetup,
    private readonly placed: readonly Maintained[],
    private readonly say: (line: string) => void,
  ) {}

  /** Each broken rule once, with the time it was first seen. */
  violation(key: string, text: string): void {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const line = `t=${Math.round((this.world.now - (this.s.start ?? START)) / 1000)}s ${text}`;
    this.violations.push(line);
    this.say(`VIOLATION ${text}`);
  }

  /** Before an action is applied: who may act on its node now. */
  action(a: Action, maintained: readonly NodeMaintenance[]): void {
    const node = 'node' in a ? a.node : undefined;
    if (node === undefined) return;
    const lock = a.kind === 'annotateNode' ? a.annotations[ANNOTATIONS.operation] : undefined;
    if (a.kind === 'annotateNode' && a.spec.kind === 'NodeImage' && typeof lock === 'string')
      this.imageLocked.add(node);
    const starts = a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending';
    const m = maintained.find((x) => x.nodeName === node);
    if (starts && m !== undefined && (a.spec.kind === 'NodeImage' || a.spec.kind === 'NodeOp'))
      this.violation(
        `start ${node}`,
        `${a.spec.kind}/${a.spec.name} starts ${node}, which NodeMaintenance/${m.name} names`,
      );
    // A Job running or a reboot under way is the NodeOp's: nobody else touches that node meanwhile.
    const busy = this.world.hosts.busy(node);
    if (busy !== undefined && a.spec.kind !== 'NodeOp')
      this.violation(`busy ${node} ${a.kind}`, `${a.kind} by ${a.spec.kind}/${a.spec.name} on ${node} while ${busy}`);
    if (a.spec.kind === 'NodeMaintenance' && typeof lock === 'string' && lock.startsWith('NodeMaintenance/'))
      this.taken(a.spec.name, node);
  }

  /** A maintenance takes its node: an operation that held it when the maintenance came has finished it. */
  private taken(name: string, node: string): void {
    this.taker.set(name, node);
    const p = this.placed.find((x) => x.m.name === name);
    const n = this.world.nodes.get(node);
    const op = this.s.op;
    if (
      p?.heldBy?.startsWith(`NodeOp/${op.name}@`) === true &&
      n?.annotations[nodeOpRecordKey(op.name)] !== op.revision
    )
      this.violation(`take ${node}`, `NodeMaintenance/${name} took ${node} before ${p.heldBy} finished it`);
  }

  /** After every action (and at each round's start): the budget, the cordons, the reboots. */
  step(maintained: readonly NodeMaintenance[]): void {
    const down: string[] = [];
    const held = { image: false, op: false, maintenance: false };
    for (const n of this.world.nodes.values()) {
      const hand = this.world.cordonedByHand.has(n.name);
      const busy = this.world.hosts.busy(n.name);
      const draining = !hand && this.world.draining(n.name) ? 'being drained' : undefined;
      const why = n.unschedulable && !hand ? 'cordoned' : !this.world.isReady(n) ? 'NotReady' : (busy ?? draining);
      if (why !== undefined) down.push(`${n.name} (${why})`);
      this.cordons(n, hand);
      const op = n.annotations[ANNOTATIONS.operation] ?? '';
      const phase = n.annotations[ANNOTATIONS.phase] ?? '';
      if (op.startsWith('NodeImage/') && DRAINING.has(phase)) held.image = true;
      if (op.startsWith('NodeOp/') && why !== undefined) held.op = true;
      if (op.startsWith('NodeMaintenance/') && maintained.some((m) => m.nodeName === n.name)) held.maintenance = true;
    }
    this.released();
    this.maxDown = Math.max(this.maxDown, down.length);
    if (down.length > this.s.budget)
      this.violation(
        `budget ${down.join()}`,
        `budget exceeded: ${down.length} nodes unavailable (${down.join(', ')}), budget ${this.s.budget}`,
      );
    if (held.image && held.op && held.maintenance) this.allThreeRounds++;
    for (const [node, r] of this.world.hosts.reboots) {
      const ok = this.world.hosts.successes.get(node) ?? 0;
      if (r > ok) this.violation(`reboots ${node}`, `${node} rebooted ${r} time(s) for ${ok} Job success(es)`);
    }
  }

  /** The moment a maintenance that left Git lets go of its node: is the node cordoned still? */
  private released(): void {
    for (const p of this.placed) {
      const node = this.taker.get(p.m.name);
      if (p.removedAt === undefined || node === undefined || this.releasedCordoned.has(p.m.name)) continue;
      const n = this.world.nodes.get(node);
      if (n === undefined || (n.annotations[ANNOTATIONS.operation] ?? '').startsWith(`NodeMaintenance/${p.m.name}@`))
        continue;
      this.releasedCordoned.set(p.m.name, n.unschedulable);
    }
  }

  /** Who cordoned a node: a person's cordon stays, and drydock's is always held by an operation. */
  private cordons(
    n: { name: string; unschedulable: boolean; annotations: Record<string, string> },
    hand: boolean,
  ): void {
    const ours = n.annotations[ANNOTATIONS.cordoned] === 'true';
    const op = n.annotations[ANNOTATIONS.operation];
    if (hand && !n.unschedulable) this.violation(`hand ${n.name}`, `${n.name}, cordoned by a person, was uncordoned`);
    if (n.unschedulable && !hand && !ours)
      this.violation(`unrecorded ${n.name}`, `${n.name} is cordoned, not by a person, and drydock did not record it`);
    if (n.unschedulable && ours && (op === undefined || n.annotations[ANNOTATIONS.phase] === 'Done'))
      this.violation(`orphan ${n.name}`, `${n.name} is cordoned by drydock, yet no operation holds it`);
  }

  /** A maintenance says it drained its node: no workload pod is left there. */
  drained(p: Maintained): void {
    const left = [...this.world.pods.values()].filter((x) => x.nodeName === p.m.nodeName && !x.daemon);
    if (left.length > 0)
      this.violation(
        `drained ${p.m.name}`,
        `NodeMaintenance/${p.m.name} Succeeded with ${left.map((x) => x.name).join(', ')} still on ${p.m.nodeName}`,
      );
  }

  /** Once everything is complete: each node ran the NodeOp once, each instance was replaced once, every maintenance ended. */
  final(): void {
    const op = this.s.op;
    const ref = { kind: 'NodeOp', name: op.name, revision: op.revision } as const;
    const hosts = this.world.hosts;
    for (const n of this.world.nodes.values()) {
      const counts = [
        hosts.jobCreates.get(nodeJobName(ref, n.name)) ?? 0,
        hosts.successes.get(n.name) ?? 0,
        hosts.reboots.get(n.name) ?? 0,
      ];
      if (counts.some((c) => c !== 1) || n.annotations[nodeOpRecordKey(op.name)] !== op.revision)
        this.violation(
          `op ${n.name}`,
          `${n.name}: Job created, succeeded, rebooted ${counts.join('/')} times (want 1/1/1), record ${n.annotations[nodeOpRecordKey(op.name)] ?? 'none'}`,
        );
      const lock = n.annotations[ANNOTATIONS.operation];
      if (lock !== undefined && n.annotations[ANNOTATIONS.phase] !== 'Done')
        this.violation(`held ${n.name}`, `${n.name} is still held by ${lock} at the end`);
    }
    for (let i = 0; i < this.s.nodes; i++) {
      const by = [...this.world.nodes.values()].filter((n) => n.annotations[ANNOTATIONS.replaces] === `i-${i}`);
      if (by.length !== 1) this.violation(`replaced i-${i}`, `instance i-${i} replaced by ${by.length} live node(s)`);
    }
    for (const p of this.placed) {
      if (p.removedAt === undefined) this.violation(`left ${p.m.name}`, `NodeMaintenance/${p.m.name} never left Git`);
      if (!p.early && p.drainedAt === undefined)
        this.violation(`undrained ${p.m.name}`, `NodeMaintenance/${p.m.name} never drained ${p.m.nodeName}`);
    }
  }
}
