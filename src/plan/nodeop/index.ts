/**
 * The round of one NodeOp (and of the NodeOp a NodeOpUpgrade generates): settle nodes held by
 * older revisions, move every node it holds one step, then start new nodes, control-plane
 * nodes first, within `concurrency` (0 = all) and the cluster budget, unless a failure halts
 * it (stopOnFailure). Each node runs once per revision: a node whose Job succeeded carries
 * the revision on `nodeop.drydock.dev/<name>` and is never started for it again.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { DesiredState } from '../../spec/model.js';
import { gateWait, haltedReason, type StartGates } from '../sequence/start-gate.js';
import { allAtOnceLimit, heldElsewhere, StartSlots, type HandOver } from '../sequence/admit.js';
import { failedNodeHalts, failureBudgetHalt, failureBudgetText, skippedWait } from '../outcome.js';
import { lockValue } from '../protocol.js';
import type { SpecStatus } from '../types.js';
import {
  isControlPlane,
  jobsIn,
  standingOf,
  type NodeOpContext,
  type SettleContext,
  type Standing,
} from './context.js';
import { nodeOpStartGate } from './gate.js';
import {
  advance,
  cleanUpJob,
  cleanUpRebootPod,
  failurePolicy,
  settle,
  startStep,
  type Ended,
  type UpdateStep,
} from './step.js';
import { cleanUpNodeGateJobs } from './gates.js';
import { cleanUpRemovedJobs } from './removed.js';
import { buildNodeOpStatus } from './status.js';
import { verifyStep } from './verify.js';
import { bottlerocketJobStep } from './bottlerocket.js';
import { latecomersText, writeSelectionMarks } from './selection.js';
import { isKairosNode, KAIROS_MANAGED, kairosSpec } from './kairos-labels.js';
import { KAIROS_API } from '../../spec/kinds.js';

export { buildNodeOpContext, type NodeOpContext, type NodeOpSettings } from './context.js';
export { inPlaceNodeOp } from './inplace.js';
export { nodeOpForecastInput } from './forecast.js';

/**
 * What holds this NodeOp's starts from outside it: controlPlane, the reason its workers wait
 * for another spec's control plane (control-plane.ts).
 */
export interface NodeOpGates {
  readonly controlPlane?: string;
  readonly metrics?: StartGates['metrics'];
  /** In a fleet: what holds a shared spec until the earlier stages passed it (sequence/start-gate.ts). */
  readonly fleet?: StartGates['fleet'];
  /** A metric halt the status branch holds for the spec (sequence/start-gate.ts). */
  readonly metricHalts?: StartGates['metricHalts'];
}

export function planNodeOp(ctx: NodeOpContext, gates: NodeOpGates = {}): SpecStatus {
  const { b } = ctx;
  const standing = new Map(ctx.nodes.map((n) => [n.name, standingOf(ctx, n)] as const));
  // Nodes this NodeOp holds that its selector no longer picks still finish (or settle).
  const held = ctx.view.observed.nodes.filter((n) => !standing.has(n.name) && ownLock(ctx, n));
  for (const n of held) standing.set(n.name, standingOf(ctx, n));
  const all = [...ctx.nodes, ...held];
  if (all.length === 0) b.wait(ctx.spec, 'node', noNodeSelected(ctx));
  if (allAtOnce(ctx) && ctx.op.concurrency === 0 && ctx.nodes.length > ctx.budget.max)
    b.note(
      ctx.spec,
      `${allAtOnceLimit(ctx.budget)} (drydock.yaml budget.maxUnavailable): at most ${ctx.budget.max} of its ${ctx.nodes.length} nodes at once`,
    );
  const late = ctx.oneShot !== undefined ? latecomersText(ctx.spec, ctx.oneShot) : undefined;
  if (late !== undefined) b.note(ctx.spec, late);

  const { stateOf } = ctx.view;
  for (const n of all) if (standing.get(n.name) === 'stale') settle(ctx, n);
  const ended = new Map<string, Ended>();
  /** Nodes this round finishes: each hands its slot to a node started after its release. */
  const handOvers: HandOver[] = [];
  const update = ctx.bottlerocket !== undefined ? bottlerocketJobStep : undefined;
  for (const n of all) {
    if (standing.get(n.name) !== 'current' || stateOf(n).settled) continue;
    if (stateOf(n).phase !== 'Verifying') {
      const end = advance(ctx, n, update);
      if (end !== undefined) ended.set(n.name, end);
      continue;
    }
    const verified = verifyStep(ctx, n);
    if (verified !== undefined && 'ended' in verified) ended.set(n.name, verified.ended);
    else if (verified !== undefined) handOvers.push({ node: n.name, unavailable: stateOf(n).unavailable });
  }
  // A node finished this round is cleaned up in the next: in its lane here, the deletion of its
  // Job and reboot pod would come before the start of the node it hands its slot to. A done node
  // another operation holds, or took this round, is cleaned up once that one lets it go: no spec
  // acts on a node another holds.
  const finished = new Set(handOvers.map((h) => h.node));
  for (const n of all) {
    const s = standing.get(n.name);
    const free = !stateOf(n).holds && !b.taken.has(n.name);
    if ((s === 'current' && !finished.has(n.name)) || (s === 'done' && free)) {
      cleanUpJob(ctx, n);
      cleanUpRebootPod(ctx, n);
    }
  }
  cleanUpNodeGateJobs(ctx);
  for (const n of all)
    if (standing.get(n.name) === 'current' && stateOf(n).phase === 'Skipped')
      b.wait(ctx.spec, 'skipped', skippedWait(n.name, stateOf(n)), { node: n.name });
  // A node this round failed or skipped counts as such this round (the spec halts now, as a
  // replace rollout's does): the steps return the node as they leave it (stateOf parses those).
  const after = all.map((n) => ended.get(n.name) ?? n);
  const policy = failurePolicy(ctx);
  const halting = after.filter((n) => standing.get(n.name) === 'current' && failedNodeHalts(policy, stateOf(n)));
  const failed = after.filter((n) => standing.get(n.name) === 'current' && stateOf(n).phase === 'Failed');
  const overBudget = failureBudgetHalt(
    policy,
    failed.map((n) => n.name),
    ctx.nodes.length,
  );
  const halted = halting.length > 0 || overBudget !== undefined;
  if (halting.length > 0) {
    const why = ctx.op.stopOnFailure && policy.maxFailures === undefined ? 'stopOnFailure' : 'drain.onTimeout halt';
    b.wait(
      ctx.spec,
      'halted',
      haltedReason(`${why}: node ${halting.map((n) => n.name).join(', ')} failed`, ctx.spec.kind),
    );
  } else if (overBudget !== undefined) {
    b.wait(ctx.spec, 'halted', haltedReason(overBudget, ctx.spec.kind));
  } else if (ctx.nodes.some((n) => standing.get(n.name) === 'free' || standing.get(n.name) === 'foreign')) {
    const running = inFlight(ctx, all, standing);
    const gate = nodeOpStartGate(ctx, standing, running, gates);
    const resolving = ctx.bottlerocket !== undefined && ctx.bottlerocket.version === undefined;
    if (!gate.open) b.wait(ctx.spec, gate.code, gate.reason, gateWait(gate));
    else if (resolving && running > 0)
      b.wait(
        ctx.spec,
        'concurrency',
        'the first node resolves latest; every later node is pinned to the version it finds',
      );
    else {
      const limit = resolving ? Math.min(gate.limit ?? 1, 1) : gate.limit;
      const started = startNodes(ctx, { all, standing, handOvers }, gates, update, limit);
      for (const n of started) ended.set(n.name, n);
    }
  }
  // The nodes as this round leaves them, those it started too.
  const leaves = after.map((n) => ended.get(n.name) ?? n);
  const built = buildNodeOpStatus(ctx, leaves, standing, halted, b.waitsFor(ctx.spec), b.actionsFor(ctx.spec));
  const budget = failureBudgetText(policy, failed.length, ctx.nodes.length);
  const status = budget === undefined ? built : { ...built, failureBudget: budget };
  if (ctx.oneShot !== undefined) writeSelectionMarks(b, ctx.spec, ctx.op, ctx.oneShot);
  return status;
}

/**
 * Why a spec whose selector picks no node is not Complete: it has run nowhere. Kairos' own
 * examples select kairos.io/managed=true, a label the Kairos operator puts on its nodes.
 */
function noNodeSelected(ctx: NodeOpContext): string {
  const late = ctx.oneShot?.latecomers ?? [];
  if (late.length > 0)
    return `none of the nodes it selected when first seen (${ctx.oneShot?.firstSeen ?? ''}) is left, and it runs once, on those: ${late.map((n) => n.name).join(', ')} came later`;
  return `its nodeSelector matches no node, so it has run nowhere${kairosHint(ctx)}`;
}

/** Where the kairos.io/managed label a selector asks for comes from (kairos-labels.ts). */
function kairosHint(ctx: NodeOpContext): string {
  if (ctx.op.nodeSelector?.matchLabels?.[KAIROS_MANAGED] === undefined) return '';
  const label = `${KAIROS_MANAGED}=true`;
  const manual = `label them (kubectl label node <name> ${label})`;
  if (kairosSpec(ctx.desired) === undefined)
    return `; drydock labels nodes ${label} as the Kairos operator did only while the repository holds a spec in its format (${KAIROS_API}): ${manual}`;
  const labelling = ctx.view.observed.nodes.filter((n) => isKairosNode(n) && !(KAIROS_MANAGED in n.labels));
  if (labelling.length > 0)
    return `; drydock labels ${labelling.map((n) => n.name).join(', ')} ${label} now (their osImage names Kairos)`;
  return `; drydock labels ${label} the nodes whose osImage names Kairos, and none does here: ${manual}`;
}

/** A NodeOp's concurrency 0 is Kairos' "all at once"; an inPlace NodeImage's is only no limit of its own. */
function allAtOnce(ctx: NodeOpContext): boolean {
  return ctx.spec.kind !== 'NodeImage';
}

function ownLock(ctx: NodeOpContext, n: ObservedNode): boolean {
  const { lock, holds } = ctx.view.stateOf(n);
  return lock?.kind === ctx.operation.kind && lock.name === ctx.op.name && holds;
}

function inFlight(ctx: NodeOpContext, all: readonly ObservedNode[], standing: ReadonlyMap<string, Standing>): number {
  return all.filter((n) => standing.get(n.name) === 'current' && !ctx.view.stateOf(n).settled).length;
}

/**
 * This NodeOp's first selected control-plane node still to do (not done, and not failed in
 * flight, which no longer holds anything up): its own workers wait for it, and with
 * controlPlaneFirst every other spec's workers too.
 */
export function pendingControlPlane(ctx: NodeOpContext): string | undefined {
  return ctx.nodes.find((n) => {
    if (!isControlPlane(n)) return false;
    const s = standingOf(ctx, n);
    return s !== 'done' && !(s === 'current' && ctx.view.stateOf(n).settled);
  })?.name;
}

/** The round's nodes as startNodes takes them: every node, where each stands, the slots handed over. */
interface Round {
  readonly all: readonly ObservedNode[];
  readonly standing: Map<string, Standing>;
  readonly handOvers: readonly HandOver[];
}

/**
 * Starts free nodes in order, at most `canaryLimit` of them (the canary wave's share); workers
 * wait until every selected control-plane node is done, and with controlPlaneFirst until every
 * other spec's control plane is too. A node started on a slot a finished node hands over
 * (StartSlots) runs in that node's lane, after its release: a round less per node, and
 * neither the concurrency nor the budget is ever overrun, since a release that fails holds
 * the start (the executor).
 */
function startNodes(
  ctx: NodeOpContext,
  { all, standing, handOvers }: Round,
  gates: NodeOpGates,
  update: UpdateStep | undefined,
  canaryLimit = Number.POSITIVE_INFINITY,
): Ended[] {
  const { b, op, spec } = ctx;
  const limit = canaryLimit === Number.POSITIVE_INFINITY ? undefined : canaryLimit;
  const slots = new StartSlots(
    { canary: op.rollout.canary, concurrency: op.concurrency, zeroIsAllAtOnce: allAtOnce(ctx) },
    inFlight(ctx, all, standing),
    limit,
    ctx.budget,
    handOvers,
  );
  const controlPlaneLeft = pendingControlPlane(ctx) !== undefined;
  const ended: Ended[] = [];
  const otherControlPlane = op.rollout.order === 'controlPlaneFirst' ? gates.controlPlane : undefined;
  for (const n of ctx.nodes) {
    const s = standing.get(n.name);
    if (s !== 'free' && s !== 'foreign') continue;
    const other = s === 'foreign' ? ctx.view.stateOf(n) : undefined;
    const held = heldElsewhere(ctx.desired, b, n, other, `${spec.kind} ${spec.name} starts on it`);
    if (held !== undefined) {
      b.wait(spec, 'lock', held, { node: n.name });
      continue;
    }
    if (controlPlaneLeft && !isControlPlane(n)) {
      b.wait(spec, 'concurrency', `workers start once every control-plane node is done`, { node: n.name });
      break;
    }
    if (otherControlPlane !== undefined && !isControlPlane(n)) {
      b.wait(spec, 'order', otherControlPlane, { node: n.name });
      break;
    }
    const taken = slots.take();
    if (taken === undefined) continue;
    b.taken.add(n.name);
    standing.set(n.name, 'current');
    const annotations = {
      [ANNOTATIONS.operation]: lockValue(ctx.operation.kind, op.name, op.revision),
      [ANNOTATIONS.phase]: 'Pending',
      [ANNOTATIONS.phaseSince]: new Date(ctx.now).toISOString(),
      [ANNOTATIONS.reason]: null,
      // The last operation's Job, kept on a done node for its status row, is not this one's.
      [ANNOTATIONS.job]: null,
      [ANNOTATIONS.jobMessage]: null,
    };
    const start = (): Ended | undefined => {
      b.act({
        kind: 'annotateNode',
        spec,
        node: n.name,
        annotations,
        reason: `${spec.kind} ${spec.name} starts on node ${n.name}`,
      });
      return startStep(ctx, lockedAs(n, annotations), update);
    };
    const end = taken.after !== undefined ? b.inLaneOf(taken.after, start) : start();
    if (end !== undefined) ended.push(end);
  }
  slots.report(b, spec);
  return ended;
}

/** The node as its lock leaves it: the lock's annotations set, those it clears gone. */
function lockedAs(n: ObservedNode, lock: Record<string, string | null>): ObservedNode {
  const kept = Object.entries(n.annotations).filter(([k]) => !(k in lock));
  const set = Object.entries(lock).filter((e): e is [string, string] => e[1] !== null);
  return { ...n, annotations: Object.fromEntries([...kept, ...set]) };
}

/**
 * Nodes held by a NodeOp that is no longer in Git, or in place by a NodeImage that is gone or no
 * longer inPlace: their step in flight finishes, then they are uncordoned and released.
 */
export function planRemovedNodeOps(desired: DesiredState, base: Omit<SettleContext, 'spec' | 'jobsByName'>): void {
  const ops = new Set(desired.nodeOps.map((o) => o.name));
  const inPlace = new Set(desired.nodeImages.filter((i) => i.strategy === 'inPlace').map((i) => i.name));
  const jobsByName = jobsIn(base.view, base.settings.jobNamespace);
  for (const node of base.view.observed.nodes) {
    const { lock, holds, inPlaceHold } = base.view.stateOf(node);
    if (lock === undefined || !holds) continue;
    const gone =
      (lock.kind === 'NodeOp' && !ops.has(lock.name)) ||
      (lock.kind === 'NodeImage' && !inPlace.has(lock.name) && inPlaceHold);
    if (gone) settle({ ...base, jobsByName, spec: { kind: lock.kind, name: lock.name } }, node);
  }
  cleanUpRemovedJobs(desired, base.view, base.b);
}
