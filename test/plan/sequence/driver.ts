/**
 * Drives the planner against the simulated world until the rollout settles, with a simulated
 * clock: each round observes the world, plans, checks the invariants, and applies the actions
 * (sometimes only a prefix: drydock "restarts" mid-round and keeps nothing but the world).
 * After actions that changed something, the next round comes a second later, as a watch event
 * would trigger it; otherwise at the next world event, the plan's wakeAt, or a resync.
 */
import { ANNOTATIONS } from '../../../src/observe/types.js';
import { plan, type Action, type Plan, type PlanOptions } from '../../../src/plan/index.js';
import type { MaintenanceWindow, RolloutPolicy } from '../../../src/spec/model.js';
import { autoscaling, config, desired, nodeImage, nodeMaintenance, scalingGroup } from '../fixtures.js';
import { SeededRandom as Random } from '../../../src/cloud/sim/random.js';
import { windowOpenAt } from './window-check.js';
import { World, type Faults, type Timing } from './world.js';

export interface Scenario {
  readonly seed: number;
  /** Worker nodes (ScalingGroup worker). */
  readonly nodes: number;
  /** Control-plane nodes (ScalingGroup cp, role control-plane), replaced first. */
  readonly controlPlane?: number;
  readonly rollout: Partial<RolloutPolicy>;
  readonly budget: number;
  readonly timing: Timing;
  readonly faults: Faults;
  /** Chance per round that drydock stops after applying only part of the plan. */
  readonly crash: number;
  /** drydock stops right after applying a surge: the rest of that round's actions are lost. */
  readonly stopAfterSurge?: boolean;
  /**
   * A NodeMaintenance for this node is in Git from `from` seconds on, for `seconds`: the
   * planner takes, drains and releases the node while the rollout runs.
   */
  readonly maintenance?: { readonly node: string; readonly from: number; readonly seconds: number };
  /** Workloads (ReplicaSets with a PDB each); default: web over half the nodes, and db. */
  readonly workloads?: readonly { readonly app: string; readonly replicas: number; readonly minAvailable: number }[];
  /** The desired image over time: [seconds, image]; the first entry is at 0. */
  readonly images: readonly (readonly [number, string])[];
  readonly options?: PlanOptions;
  readonly maxSeconds?: number;
  /** New nodes may only start inside this window (the rollout's `window` is set to it). */
  readonly window?: MaintenanceWindow;
}

/** skipped: all done but nodes given back by drain.onTimeout skipNode, which wait for a person. */
export type Outcome = 'complete' | 'halted' | 'skipped' | 'stuck' | 'timeout';

export interface RunResult {
  readonly outcome: Outcome;
  readonly log: readonly string[];
  readonly violations: readonly string[];
  readonly seconds: number;
  /** Seconds until the last round whose actions changed the world: the rollout's makespan. */
  readonly lastChangeAt: number;
  readonly rounds: number;
  readonly world: World;
  readonly lastPlan: Plan;
  /** Every phase the NodeMaintenance's status went through, in order of first sight. */
  readonly maintenancePhases: readonly string[];
  /** Rounds in which the maintenance held its node while a rollout node was unavailable. */
  readonly overlapRounds: number;
}

export const START = Date.parse('2026-03-02T10:00:00.000Z');
const OURS = /^NodeImage\/workers@/;
const UNAVAILABLE = new Set(['Cordoned', 'Draining', 'Updating', 'Rebooting', 'Verifying']);

export function runScenario(s: Scenario): RunResult {
  const random = new Random(s.seed);
  const log: string[] = [];
  let now = START;
  const say = (line: string): void => {
    log.push(`t=${String(Math.round((now - START) / 1000)).padStart(5)}s  ${line}`);
  };
  const world = new World(
    {
      groups: [...(s.controlPlane ? [{ name: 'cp', nodes: s.controlPlane }] : []), { name: 'worker', nodes: s.nodes }],
      image: 'img:v1',
      workloads: s.workloads ?? [
        {
          app: 'web',
          replicas: Math.max(2, Math.floor(s.nodes / 2)),
          minAvailable: Math.max(1, Math.floor(s.nodes / 2) - 1),
        },
        { app: 'db', replicas: 3, minAvailable: 2 },
      ],
      autoscalerReplicas: 2,
      timing: s.timing,
      faults: s.faults,
    },
    random,
    START,
    say,
  );
  const violations: string[] = [];
  const maintenance = s.maintenance;
  const maintained = (t: number): boolean =>
    maintenance !== undefined &&
    t >= START + maintenance.from * 1000 &&
    t < START + (maintenance.from + maintenance.seconds) * 1000;
  const maintenanceEdges =
    maintenance === undefined
      ? []
      : [START + maintenance.from * 1000, START + (maintenance.from + maintenance.seconds) * 1000];
  const wanted = (image: string, t: number) =>
    desired({
      ...(maintenance !== undefined && maintained(t)
        ? { nodeMaintenances: [nodeMaintenance('disk', maintenance.node)] }
        : {}),
      config: config(s.budget),
      scalingGroups: [
        ...(s.controlPlane ? [scalingGroup('cp', 'workers', 'control-plane')] : []),
        scalingGroup('worker', 'workers'),
      ],
      nodeImages: [nodeImage('workers', image, { ...s.rollout, ...(s.window ? { window: s.window.name } : {}) })],
      autoscalingStrategies: [autoscaling('ca')],
      maintenanceWindows: s.window ? [s.window] : [],
    });
  const everLocked = new Set<string>();
  const replacesSeen = new Map<string, string>();
  let lastWait: string | undefined;
  let lastPlan: Plan | undefined;
  let outcome: Outcome = 'timeout';
  let rounds = 0;
  const maintenancePhases: string[] = [];
  let overlapRounds = 0;
  let failed = false;
  let lastChange = START;
  const limit = START + (s.maxSeconds ?? 6 * 3600) * 1000;
  let image = s.images[0]?.[1] ?? 'img:v2';

  while (now <= limit) {
    rounds++;
    world.advanceTo(now);
    const current = s.images.filter(([t]) => START + t * 1000 <= now).pop()?.[1] ?? image;
    if (current !== image) {
      image = current;
      say(`desired image is now ${image}`);
    }
    const observed = world.observe();
    const p = plan(wanted(image, now), observed, new Date(now), s.options);
    lastPlan = p;
    checkWorld(world, s, violations, replacesSeen, say);
    const mPhase = p.specs.find((x) => x.spec.kind === 'NodeMaintenance')?.phase;
    if (mPhase !== undefined && !maintenancePhases.includes(mPhase)) {
      maintenancePhases.push(mPhase);
      say(`NodeMaintenance/disk is ${mPhase}`);
    }
    if (bothActive(world)) overlapRounds++;
    const mNode = maintenance !== undefined && maintained(now) ? world.nodes.get(maintenance.node) : undefined;
    // A restart between the lock and the cordon leaves it schedulable: this round must cordon it.
    const recordsMaintenance = mNode?.annotations[ANNOTATIONS.operation]?.startsWith('NodeMaintenance/') === true;
    if (
      mNode !== undefined &&
      recordsMaintenance &&
      !mNode.unschedulable &&
      !p.actions.some((a) => a.kind === 'cordon' && a.node === mNode.name)
    ) {
      violations.push(`${mNode.name} is held by its maintenance, schedulable, and not cordoned again`);
    }
    const first = p.waits[0]?.reason;
    if (first !== lastWait && first !== undefined) say(`wait: ${first}`);
    lastWait = first;
    const status = p.specs.find((x) => x.spec.kind === 'NodeImage');
    const autoscaler = p.specs.find((x) => x.spec.kind === 'AutoscalingStrategy');
    const imageChangePending = s.images.some(([t]) => START + t * 1000 > now) || maintenanceEdges.some((t) => t > now);
    const quiet =
      p.actions.length === 0 && world.nextEventAt() === undefined && p.wakeAt === undefined && !imageChangePending;
    if (quiet) {
      outcome =
        status?.phase === 'Complete' && autoscaler?.phase === 'Complete'
          ? 'complete'
          : status?.phase === 'Halted'
            ? 'halted'
            : onlySkipped(p)
              ? 'skipped'
              : 'stuck';
      break;
    }
    let actions: readonly Action[] = p.actions;
    if (actions.length > 0 && random.chance(s.crash)) {
      actions = actions.slice(0, random.int(0, actions.length - 1));
      say(`drydock restarts after ${actions.length} of ${p.actions.length} actions`);
    }
    const surgeAt = s.stopAfterSurge === true ? actions.findIndex((a) => a.kind === 'surge') : -1;
    if (surgeAt >= 0 && surgeAt < actions.length - 1) {
      actions = actions.slice(0, surgeAt + 1);
      say(`drydock restarts right after its surge (${actions.length} of ${p.actions.length} actions)`);
    }
    let changed = false;
    for (const a of actions) {
      checkAction(a, world, violations);
      checkOrder(a, world, image, violations);
      if (
        s.window &&
        a.kind === 'annotateNode' &&
        a.annotations[ANNOTATIONS.phase] === 'Pending' &&
        !windowOpenAt(s.window, now)
      ) {
        violations.push(`${a.node} started at ${new Date(now).toISOString()}, outside window ${s.window.name}`);
      }
      if (a.kind === 'annotateNode' && typeof a.annotations[ANNOTATIONS.operation] === 'string') everLocked.add(a.node);
      if (a.kind === 'annotateNode' && typeof a.annotations['drydock.dev/failures'] === 'string') failed = true;
      changed = world.apply(a) || changed;
    }
    const candidates = [world.nextEventAt(), p.wakeAt !== undefined ? Date.parse(p.wakeAt) : undefined, now + 60_000];
    for (const [t] of s.images) if (START + t * 1000 > now) candidates.push(START + t * 1000);
    for (const t of maintenanceEdges) if (t > now) candidates.push(t);
    if (changed) lastChange = now;
    const next = changed ? now + 1000 : Math.min(...candidates.filter((x): x is number => x !== undefined));
    now = Math.max(now + 1000, next);
  }
  finalChecks(world, s, outcome, everLocked, image, violations);
  if (s.rollout.stopOnFailure === true && failed && outcome === 'complete')
    violations.push('a failure was recorded under stopOnFailure, yet the rollout completed');
  say(`settled: ${outcome}`);
  return {
    outcome,
    log,
    violations: [...violations, ...world.violations],
    seconds: (now - START) / 1000,
    lastChangeAt: (lastChange - START) / 1000,
    rounds,
    world,
    lastPlan: lastPlan as Plan,
    maintenancePhases,
    overlapRounds,
  };
}

/** A node is never in two operations: no spec acts on a node another operation holds. */
export function checkAction(a: Action, world: World, violations: string[]): void {
  const nodeName = 'node' in a ? a.node : undefined;
  if (nodeName === undefined) return;
  const n = world.nodes.get(nodeName);
  const op = n?.annotations[ANNOTATIONS.operation];
  if (
    op === undefined ||
    n?.annotations[ANNOTATIONS.phase] === 'Done' ||
    op.startsWith(`${a.spec.kind}/${a.spec.name}@`)
  )
    return;
  violations.push(`${a.kind} by ${a.spec.kind}/${a.spec.name} on ${nodeName} while ${op} holds it`);
}

/** controlPlaneFirst: no worker starts while a control-plane node is outdated or in flight. */
function checkOrder(a: Action, world: World, image: string, violations: string[]): void {
  if (a.kind !== 'annotateNode' || a.annotations[ANNOTATIONS.phase] !== 'Pending' || !a.node.startsWith('worker-'))
    return;
  for (const inst of world.instances.values()) {
    if (inst.group === 'cp' && inst.state === 'running' && inst.image !== image)
      violations.push(`${a.node} started while ${inst.id} (control plane) still runs ${inst.image}`);
  }
  for (const n of world.nodes.values()) {
    const phase = n.annotations[ANNOTATIONS.phase];
    if (n.name.startsWith('cp-') && OURS.test(n.annotations[ANNOTATIONS.operation] ?? '') && phase !== 'Done')
      violations.push(`${a.node} started while ${n.name} is in flight`);
  }
}

function bothActive(world: World): boolean {
  const held = (n: { annotations: Record<string, string> }, re: RegExp): boolean =>
    re.test(n.annotations[ANNOTATIONS.operation] ?? '') && UNAVAILABLE.has(n.annotations[ANNOTATIONS.phase] ?? '');
  const nodes = [...world.nodes.values()];
  return nodes.some((n) => held(n, /^NodeMaintenance\//)) && nodes.some((n) => held(n, OURS));
}

function checkWorld(
  world: World,
  s: Scenario,
  violations: string[],
  replacesSeen: Map<string, string>,
  say: (l: string) => void,
): void {
  let down = 0;
  let serving = 0;
  let held = 0;
  const claimed = new Map<string, string>();
  for (const n of world.nodes.values()) {
    // Unavailable as the world shows it, whatever drydock's annotations say: cordoned, NotReady,
    // or a workload pod on it being evicted.
    if (n.unschedulable || !world.isReady(n) || world.draining(n.name)) down++;
    const op = n.annotations[ANNOTATIONS.operation];
    if (op !== undefined && !OURS.test(op)) held++;
    else if (!n.unschedulable && world.instances.get(n.providerID.split('/').pop() ?? '')?.state === 'running')
      serving++;
    const by = n.annotations[ANNOTATIONS.replacedBy];
    if (by !== undefined) {
      const other = claimed.get(by);
      if (other !== undefined) violations.push(`instance ${by} claimed by both ${other} and ${n.name}`);
      claimed.set(by, n.name);
    }
    const replaces = n.annotations[ANNOTATIONS.replaces];
    if (replaces !== undefined) {
      const prev = replacesSeen.get(replaces);
      if (prev !== undefined && prev !== n.name)
        violations.push(`instance ${replaces} replaced twice (${prev}, ${n.name})`);
      replacesSeen.set(replaces, n.name);
    }
  }
  if (down > s.budget) {
    violations.push(`budget exceeded: ${down} nodes unavailable, budget ${s.budget}`);
    say(`VIOLATION budget exceeded: ${down}`);
  }
  const total = s.nodes + (s.controlPlane ?? 0);
  if (serving + held < total)
    violations.push(`capacity: only ${serving} schedulable Ready nodes (+${held} held elsewhere) of ${total}`);
}

/** The rollout waits for nothing but nodes it skipped (drain.onTimeout skipNode). */
function onlySkipped(p: Plan): boolean {
  const waits = p.waits.filter((w) => w.spec.kind === 'NodeImage');
  return waits.length > 0 && waits.every((w) => w.code === 'skipped');
}

export function finalChecks(
  world: World,
  s: Pick<Scenario, 'nodes' | 'controlPlane'>,
  outcome: Outcome,
  everLocked: Set<string>,
  image: string,
  violations: string[],
): void {
  for (const name of everLocked) {
    const n = world.nodes.get(name);
    if (n === undefined) continue;
    const op = n.annotations[ANNOTATIONS.operation];
    const phase = n.annotations[ANNOTATIONS.phase];
    if (op === undefined || !OURS.test(op) || phase === 'Done') continue;
    // Failed, or Skipped (drain.onTimeout skipNode): reported with the reason on the node.
    if ((phase === 'Failed' || phase === 'Skipped') && n.annotations[ANNOTATIONS.reason] !== undefined) continue;
    violations.push(`${name} was started but is neither finished nor reported (phase ${phase ?? 'none'})`);
  }
  for (const n of world.nodes.values()) {
    if (
      n.annotations[ANNOTATIONS.cordoned] === 'true' &&
      n.unschedulable &&
      n.annotations[ANNOTATIONS.reason] === undefined
    ) {
      violations.push(`${n.name} left cordoned by drydock without a reason`);
    }
  }
  if (outcome !== 'complete') return;
  const live = [...world.instances.values()].filter((i) => i.state === 'running');
  const stale = live.filter((i) => i.image !== image);
  if (stale.length > 0) violations.push(`complete, yet ${stale.map((i) => i.id).join(', ')} still run an old image`);
  for (const [name, size] of [
    ['worker', s.nodes],
    ['cp', s.controlPlane ?? 0],
  ] as const) {
    const members = live.filter((i) => i.group === name).length;
    const target = world.groups.get(name)?.targetSize ?? 0;
    if (members !== size || target !== size)
      violations.push(`group ${name}: ${members} instances (target ${target}), started with ${size}`);
  }
  if (world.autoscaler.replicas !== 2 || ANNOTATIONS.previousReplicas in world.autoscaler.annotations) {
    violations.push(
      `autoscaler left at ${world.autoscaler.replicas} replicas, annotations ${JSON.stringify(world.autoscaler.annotations)}`,
    );
  }
  for (const n of world.nodes.values())
    if (n.unschedulable) violations.push(`${n.name} still cordoned after completion`);
  const expectedPods = world.workloads.reduce((sum, w) => sum + w.replicas, 0);
  if (world.podCount() !== expectedPods) violations.push(`${world.podCount()} workload pods, expected ${expectedPods}`);
}
