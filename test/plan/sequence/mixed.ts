/**
 * A NodeImage replace rollout, a NodeOp that runs a Job and reboots each node, and a person's
 * NodeMaintenances, all active at once over one OpsWorld, with drydock restarting mid-round now
 * and then. The person's edits follow the run: a maintenance lands on the node the rollout is
 * about to take (found by planning without it), one on a node the NodeOp has in flight, one on
 * a node the person had cordoned by hand; each leaves Git a while after it drained (or, by
 * seed, before). The invariants (mixed-checks.ts) are read from the world at every step.
 */
import { SeededRandom as Random } from '../../../src/cloud/sim/random.js';
import { plan, type Action, type Plan, type SpecStatus } from '../../../src/plan/index.js';
import { ANNOTATIONS } from '../../../src/protocol/keys.js';
import type { NodeMaintenance, NodeOp, RolloutPolicy } from '../../../src/spec/model.js';
import { autoscaling, config, desired, nodeImage, nodeMaintenance, scalingGroup } from '../fixtures.js';
import { NS } from '../nodeop/hosts.js';
import { checkAction, finalChecks, START, type Outcome } from './driver.js';
import { MixedChecks, type Maintained } from './mixed-checks.js';
import { OpsWorld } from './ops-world.js';
import type { Faults, Timing } from './world.js';

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
}

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

class Run {
  readonly random: Random;
  readonly log: string[] = [];
  readonly world: OpsWorld;
  readonly placed: Placed[] = [];
  readonly checks: MixedChecks;
  now = START;

  constructor(readonly s: MixedScenario) {
    this.random = new Random(s.seed);
    const say = (line: string): void => {
      this.log.push(`t=${String(Math.round((this.now - START) / 1000)).padStart(5)}s  ${line}`);
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
      START,
      say,
      0,
    );
    this.checks = new MixedChecks(this.world, s, this.placed, say);
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
      nodeImages: [nodeImage('workers', 'img:v2', this.s.rollout)],
      autoscalingStrategies: [autoscaling('ca')],
      nodeOps: [this.s.op],
      nodeMaintenances: [...this.active(), ...extra],
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
    if (!this.placed.some((p) => p.m.name === 'mid') && this.now >= START + s.midAt * 1000) {
      const late = this.now >= START + (s.midAt + 1800) * 1000;
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
    if (!this.placed.some((p) => p.m.name === 'mid')) times.push(START + this.s.midAt * 1000);
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
      this.placed.some((p) => p.removedAt === undefined)
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
      changed = this.world.apply(a) || changed;
      this.checks.step(this.active());
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
  const limit = START + (s.maxSeconds ?? 8 * 3600) * 1000;
  let outcome: Outcome = 'timeout';
  let lastPlan: Plan | undefined;
  while (run.now <= limit) {
    world.advanceTo(run.now);
    run.edit();
    run.checks.step(run.active());
    const p = run.planRound();
    lastPlan = p;
    run.track(p);
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
  };
}
