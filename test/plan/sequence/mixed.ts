/**
 * A NodeImage replace rollout, a NodeOp that runs a Job and reboots each node, and a person's
 * NodeMaintenances, all active at once over one OpsWorld, with drydock restarting mid-round now
 * and then. The person's edits follow the run: a maintenance lands on the node the rollout is
 * about to take (found by planning without it), one on a node the NodeOp has in flight, one on
 * a node the person had cordoned by hand; each leaves Git a while after it drained (or, by
 * seed, before). By seed, each of the NodeImage and the NodeOp has a canary, an approval it
 * waits for (the person merges wrong ones first: another stage, image or revision, or target)
 * and a maintenance window in some time zone, DST change included. The invariants
 * (mixed-checks.ts, gate-checks.ts) are read from the world at every step.
 */
import { SeededRandom as Random } from '../../../src/cloud/sim/random.js';
import { plan, type Action, type Plan, type SpecStatus } from '../../../src/plan/index.js';
import { ANNOTATIONS } from '../../../src/protocol/keys.js';
import type { Approval, NodeMaintenance, NodeOp, RolloutPolicy } from '../../../src/spec/model.js';
import { approval, autoscaling, config, desired, nodeImage, nodeMaintenance, scalingGroup } from '../fixtures.js';
import { NS } from '../nodeop/hosts.js';
import { checkAction, finalChecks, START, type Outcome } from './driver.js';
import { GateChecks, type Gates } from './gate-checks.js';
import { MixedChecks, type Maintained } from './mixed-checks.js';
import { OpsWorld } from './ops-world.js';
import type { Faults, Timing } from './world.js';

export type { Gates } from './gate-checks.js';

export interface MixedScenario {
  readonly seed: number;
  readonly nodes: number;
  readonly budget: number;
  readonly rollout: Partial<RolloutPolicy>;
  readonly op: NodeOp;
  readonly timing: Timing;
  readonly faults: Faults;
  /** Chance per round that drydock stops after applying only part of the plan. */
  readonly crash: number;
  /** The worker a person cordons by hand at the start, and puts under a maintenance. */
  readonly handNode: string;
  /** Seconds after which a maintenance is added on a node the NodeOp has in flight. */
  readonly midAt: number;
  /** Seconds each maintenance stays in Git after it drained. */
  readonly hold: number;
  /** The mid-run maintenance leaves Git this many seconds after it came, drained or not. */
  readonly earlyRemoval?: number;
  readonly maxSeconds?: number;
  /** When the run starts (default START): some runs cross a DST change. */
  readonly start?: number;
  /** Canary, approvals and window of the NodeImage and of the NodeOp. */
  readonly gates?: { readonly image: Gates; readonly op: Gates };
}

/** No gate at all: the runs before gates came. */
const OPEN: Gates = { required: 'none', approvalAt: 0, wrong: [] };

/** A person's NodeMaintenance: when it came and left Git, and what held its node when it came. */
export interface Placed extends Maintained {
  readonly addedAt: number;
  drainedAt?: number;
  removedAt?: number;
  phases: string[];
}

export interface MixedResult {
  readonly outcome: Outcome;
  readonly log: readonly string[];
  readonly violations: readonly string[];
  readonly world: OpsWorld;
  readonly placed: readonly Placed[];
  readonly lastPlan: Plan;
  /** Rounds in which a NodeImage node, a NodeOp node and a maintained node were unavailable at once. */
  readonly allThreeRounds: number;
  readonly maxDown: number;
  /** Per maintenance that took its node and left Git: whether the node was still cordoned when released. */
  readonly releasedCordoned: ReadonlyMap<string, boolean>;
  readonly gates: GateChecks;
}

const OPTIONS = { maxAttempts: 5, jobNamespace: NS, rebootTimeoutSeconds: 900 } as const;

/** The NodeImage Pending start of the plan, if it starts a node: the node the rollout is about to take. */
function aboutToTake(p: Plan): string | undefined {
  const a = p.actions.find(
    (x) => x.kind === 'annotateNode' && x.spec.kind === 'NodeImage' && x.annotations[ANNOTATIONS.phase] === 'Pending',
  );
  return a !== undefined && 'node' in a ? a.node : undefined;
}

/** A node the NodeOp has in flight now (its Job runs, or it reboots), that no maintenance names. */
function nodeOpInFlight(world: OpsWorld, s: MixedScenario, placed: readonly Placed[]): string | undefined {
  for (const n of [...world.nodes.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const op = n.annotations[ANNOTATIONS.operation] ?? '';
    const phase = n.annotations[ANNOTATIONS.phase];
    if (!op.startsWith(`NodeOp/${s.op.name}@`) || (phase !== 'Updating' && phase !== 'Rebooting')) continue;
    if (placed.some((p) => p.m.nodeName === n.name)) continue;
    return n.name;
  }
  return undefined;
}

/** A gated spec's rollout policy: its canary, the approval it requires, its window. */
function gated(g: Gates): Partial<RolloutPolicy> {
  return {
    ...(g.canary !== undefined ? { canary: { nodes: 1, soakSeconds: g.canary } } : {}),
    approval: { required: g.required },
    ...(g.window !== undefined ? { window: g.window.name } : {}),
  };
}

/** The right approval for a spec's required stage, or a wrong one (another stage, version or target). */
function approvalFor(kind: 'image' | 'op', op: NodeOp, g: Gates, how?: Gates['wrong'][number]['how']): Approval {
  const required = g.required === 'start' ? 'start' : 'afterCanary';
  const stage = how === 'stage' ? (required === 'start' ? 'afterCanary' : 'start') : required;
  const name = `${kind}-${stage}-${how ?? 'right'}`;
  if (kind === 'image')
    return approval(name, how === 'target' ? 'workers-old' : 'workers', how === 'version' ? 'img:v3' : 'img:v2', stage);
  const { image: _image, ...base } = approval(name, op.name, '', stage);
  return {
    ...base,
    target: { kind: how === 'target' ? 'NodeImage' : 'NodeOp', name: op.name },
    targetRevision: how === 'version' ? `${op.revision}-old` : op.revision,
  };
}

class Run {
  readonly random: Random;
  readonly log: string[] = [];
  readonly world: OpsWorld;
  readonly placed: Placed[] = [];
  readonly checks: MixedChecks;
  readonly t0: number;
  now: number;
  readonly gates: { readonly image: Gates; readonly op: Gates };
  readonly gateChecks: GateChecks;
  /** Approvals the person merged, with whether each is the right one. */
  readonly merged: { readonly a: Approval; readonly kind: 'image' | 'op'; readonly right: boolean }[] = [];

  constructor(readonly s: MixedScenario) {
    this.random = new Random(s.seed);
    this.t0 = s.start ?? START;
    this.now = this.t0;
    this.gates = s.gates ?? { image: OPEN, op: OPEN };
    const say = (line: string): void => {
      this.log.push(`t=${String(Math.round((this.now - this.t0) / 1000)).padStart(5)}s  ${line}`);
    };
    this.world = new OpsWorld(
      {
        groups: [{ name: 'worker', nodes: s.nodes }],
        image: 'img:v1',
        workloads: [
          { app: 'web', replicas: Math.max(2, Math.floor(s.nodes / 2)), minAvailable: Math.floor(s.nodes / 2) - 1 },
          { app: 'db', replicas: 3, minAvailable: 2 },
        ],
        autoscalerReplicas: 2,
        timing: s.timing,
        faults: s.faults,
      },
      this.random,
      this.t0,
      say,
      0,
    );
    this.checks = new MixedChecks(this.world, s, this.placed, say);
    const approved = (kind: 'image' | 'op'): boolean => this.merged.some((m) => m.kind === kind && m.right);
    this.gateChecks = new GateChecks(this.world, this.gates, approved, (k, t) => this.checks.violation(k, t));
  }

  /** The person's approvals, right and wrong, at their seeded instants (seconds into the run). */
  approvalPlan(): {
    readonly at: number;
    readonly kind: 'image' | 'op';
    readonly how?: Gates['wrong'][number]['how'];
  }[] {
    const out: { at: number; kind: 'image' | 'op'; how?: Gates['wrong'][number]['how'] }[] = [];
    for (const kind of ['image', 'op'] as const) {
      const g = this.gates[kind];
      if (g.required === 'none') continue;
      for (const w of g.wrong) out.push({ at: w.at, kind, how: w.how });
      out.push({ at: g.approvalAt, kind });
    }
    return out;
  }

  /** Merges the approvals due now. */
  approve(): void {
    for (const x of this.approvalPlan()) {
      if (this.now < this.t0 + x.at * 1000) continue;
      const a = approvalFor(x.kind, this.s.op, this.gates[x.kind], x.how);
      if (this.merged.some((m) => m.a.name === a.name)) continue;
      this.merged.push({ a, kind: x.kind, right: x.how === undefined });
      this.say(`a person merges Approval/${a.name} (${x.how === undefined ? 'the right one' : `wrong ${x.how}`})`);
    }
  }

  say(line: string): void {
    this.world.log(line);
  }

  active(): NodeMaintenance[] {
    return this.placed.filter((p) => p.removedAt === undefined).map((p) => p.m);
  }

  wanted(extra: readonly NodeMaintenance[] = []): ReturnType<typeof desired> {
    return desired({
      config: config(this.s.budget),
      scalingGroups: [scalingGroup('worker', 'workers')],
      nodeImages: [nodeImage('workers', 'img:v2', { ...this.s.rollout, ...gated(this.gates.image) })],
      autoscalingStrategies: [autoscaling('ca')],
      nodeOps: [{ ...this.s.op, rollout: { ...this.s.op.rollout, ...gated(this.gates.op) } }],
      nodeMaintenances: [...this.active(), ...extra],
      maintenanceWindows: [this.gates.image.window, this.gates.op.window].filter(
        (w, i, all): w is NonNullable<typeof w> => w !== undefined && all.indexOf(w) === i,
      ),
      approvals: this.merged.map((m) => m.a),
    });
  }

  place(name: string, node: string, early = false): void {
    const held = this.world.nodes.get(node)?.annotations[ANNOTATIONS.operation];
    const phase = this.world.nodes.get(node)?.annotations[ANNOTATIONS.phase];
    const heldBy = held !== undefined && phase !== 'Done' ? held : undefined;
    this.placed.push({
      m: nodeMaintenance(name, node, `${name} maintenance`),
      addedAt: this.now,
      ...(heldBy !== undefined ? { heldBy } : {}),
      early,
      phases: [],
    });
    this.say(
      `a person merges NodeMaintenance/${name} for ${node}${heldBy !== undefined ? ` (held by ${heldBy})` : ''}`,
    );
  }

  /** The person's edits due now: the mid-run maintenance, and removals of maintenances that are done. */
  edit(): void {
    const s = this.s;
    this.approve();
    if (!this.placed.some((p) => p.m.name === 'mid') && this.now >= this.t0 + s.midAt * 1000) {
      const late = this.now >= this.t0 + (s.midAt + 1800) * 1000;
      const node =
        nodeOpInFlight(this.world, s, this.placed) ??
        (late
          ? [...this.world.nodes.keys()].sort().find((n) => !this.placed.some((p) => p.m.nodeName === n))
          : undefined);
      if (node !== undefined) this.place('mid', node, s.earlyRemoval !== undefined);
    }
    for (const p of this.placed) {
      if (p.removedAt !== undefined) continue;
      const dueEarly = p.early && s.earlyRemoval !== undefined && this.now >= p.addedAt + s.earlyRemoval * 1000;
      const gone = p.phases.at(-1) === 'Failed' && !this.world.nodes.has(p.m.nodeName);
      const dueDrained = p.drainedAt !== undefined && this.now >= p.drainedAt + s.hold * 1000;
      if (dueEarly || dueDrained || gone) {
        p.removedAt = this.now;
        this.say(`a person deletes NodeMaintenance/${p.m.name} (${p.phases.join(' > ')})`);
      }
    }
  }

  /** When the next edit of the person's falls due, if one is ahead. */
  nextEdit(): number | undefined {
    const times: number[] = [];
    if (!this.placed.some((p) => p.m.name === 'mid')) times.push(this.t0 + this.s.midAt * 1000);
    for (const x of this.approvalPlan()) times.push(this.t0 + x.at * 1000);
    for (const p of this.placed) {
      if (p.removedAt !== undefined) continue;
      if (p.drainedAt !== undefined) times.push(p.drainedAt + this.s.hold * 1000);
      if (p.early && this.s.earlyRemoval !== undefined) times.push(p.addedAt + this.s.earlyRemoval * 1000);
    }
    const ahead = times.filter((t) => t > this.now);
    return ahead.length > 0 ? Math.min(...ahead) : undefined;
  }

  /** Plans the round; the first time the rollout is about to take a node, a maintenance lands on it first. */
  planRound(): Plan {
    const observed = this.world.observe();
    const p = plan(this.wanted(), observed, new Date(this.now), OPTIONS);
    if (this.placed.some((x) => x.m.name === 'first')) return p;
    const node = aboutToTake(p);
    // The node a person cordoned has its own maintenance story: this one is for a node in service.
    if (node === undefined || this.world.cordonedByHand.has(node)) return p;
    this.place('first', node);
    return plan(this.wanted(), observed, new Date(this.now), OPTIONS);
  }

  track(p: Plan): void {
    for (const x of this.placed) {
      const status = p.specs.find((st) => st.spec.kind === 'NodeMaintenance' && st.spec.name === x.m.name);
      if (status === undefined || x.phases.at(-1) === status.phase) continue;
      x.phases.push(status.phase);
      this.say(`NodeMaintenance/${x.m.name} is ${status.phase}`);
      if (status.phase === 'Succeeded' && x.removedAt === undefined) {
        x.drainedAt ??= this.now;
        this.checks.drained(x);
      }
    }
  }

  pendingEdits(): boolean {
    return (
      !this.placed.some((p) => p.m.name === 'mid') ||
      !this.placed.some((p) => p.m.name === 'first') ||
      this.placed.some((p) => p.removedAt === undefined) ||
      this.approvalPlan().some((x) => this.t0 + x.at * 1000 > this.now)
    );
  }

  apply(p: Plan): boolean {
    let actions: readonly Action[] = p.actions;
    if (actions.length > 0 && this.random.chance(this.s.crash)) {
      actions = actions.slice(0, this.random.int(0, actions.length - 1));
      this.say(`drydock restarts after ${actions.length} of ${p.actions.length} actions`);
    }
    let changed = false;
    for (const a of actions) {
      checkAction(a, this.world, this.checks.violations);
      this.checks.action(a, this.active());
      this.gateChecks.action(a, this.now);
      changed = this.world.apply(a) || changed;
      this.checks.step(this.active());
      this.gateChecks.step();
    }
    return changed;
  }
}

const done = (st: SpecStatus | undefined): boolean => st?.phase === 'Complete';

export function runMixed(s: MixedScenario): MixedResult {
  const run = new Run(s);
  const { world } = run;
  world.cordonByHand(s.handNode);
  run.place('hand', s.handNode);
  const limit = run.t0 + (s.maxSeconds ?? 8 * 3600) * 1000;
  let outcome: Outcome = 'timeout';
  let lastPlan: Plan | undefined;
  while (run.now <= limit) {
    world.advanceTo(run.now);
    run.edit();
    run.checks.step(run.active());
    const p = run.planRound();
    lastPlan = p;
    run.track(p);
    run.gateChecks.waits(p.waits.map((w) => w.code));
    if (p.actions.length === 0 && world.nextEventAt() === undefined && p.wakeAt === undefined && !run.pendingEdits()) {
      const specs = ['NodeImage', 'NodeOp', 'AutoscalingStrategy'].map((k) => p.specs.find((x) => x.spec.kind === k));
      outcome = specs.every(done) ? 'complete' : 'stuck';
      break;
    }
    const changed = run.apply(p);
    const candidates = [world.nextEventAt(), p.wakeAt !== undefined ? Date.parse(p.wakeAt) : undefined];
    candidates.push(run.nextEdit(), run.now + 60_000);
    const next = changed ? run.now + 1000 : Math.min(...candidates.filter((x): x is number => x !== undefined));
    run.now = Math.max(run.now + 1000, next);
  }
  finalChecks(world, { nodes: s.nodes }, outcome, run.checks.imageLocked, 'img:v2', run.checks.violations);
  if (outcome === 'complete') run.checks.final();
  const violations = [...run.checks.violations, ...world.violations];
  run.say(`settled: ${outcome}`);
  return {
    outcome,
    log: run.log,
    violations,
    world,
    placed: run.placed,
    lastPlan: lastPlan as Plan,
    allThreeRounds: run.checks.allThreeRounds,
    maxDown: run.checks.maxDown,
    releasedCordoned: run.checks.releasedCordoned,
    gates: run.gateChecks,
  };
}
