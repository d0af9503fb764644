/**
 * The round of one MutexRunConfig: the OpenShift node upgrade driven node by node through the
 * Machine Config Operator (MCO), as the node-upgrade mutex operator does it. An upgrade is
 * detected when ClusterVersion's spec.desiredUpdate.version differs from a target node's
 * release-image-version label; then the run-wide stages (prepare.ts), then the shared start
 * gate and slots admit nodes (one at a time unless the repository's default concurrency says
 * more, within the cluster budget), and each held node moves one step (step.ts). With nothing
 * left to upgrade, the pools drydock paused are unpaused and the rule labels removed.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { MutexRunConfig } from '../../spec/model.js';
import { cleanUpGateJobs } from '../gates.js';
import type { Round, RoundGates, SpecOutcome } from '../kind.js';
import { failedNodeHalts, failureBudgetHalt, failureBudgetText } from '../outcome.js';
import { HELD_ANNOTATIONS, lockValue, parseInstant } from '../protocol.js';
import { heldElsewhere, StartSlots } from '../sequence/admit.js';
import { gateWait, haltedReason, startGate } from '../sequence/start-gate.js';
import type { Standing } from '../sequence/holder.js';
import type { SpecRef } from '../types.js';
import {
  atVersion,
  operationOf,
  readWorld,
  recordOf,
  ruleLabelsOf,
  standingOf,
  targetNodes,
  type McoContext,
} from './context.js';
import { finish, prepare } from './prepare.js';
import { mcoStatus, worldStatus } from './status.js';
import { advance, failurePolicy } from './step.js';

export interface McoSettings {
  readonly jobNamespace: string;
}

export function planRun(round: Round, run: MutexRunConfig, gates: RoundGates, settings: McoSettings): SpecOutcome {
  const spec: SpecRef = { kind: 'MutexRunConfig', name: run.name };
  const world = readWorld(round.desired, run, round.view.observed.openshift);
  if (!world.ok) {
    round.b.wait(spec, 'pool', world.reason);
    return { status: worldStatus(round, run, world.reason) };
  }
  const nodes = targetNodes(round.view, world.targets);
  const ruleLabels = ruleLabelsOf(run);
  if (world.version === undefined) {
    finish(round.b, spec, [...world.targets, world.canary], nodes, Object.keys(ruleLabels));
    return {
      status: worldStatus(
        round,
        run,
        'no OpenShift update was asked for (ClusterVersion has no spec.desiredUpdate)',
        'Complete',
      ),
    };
  }
  const ctx: McoContext = {
    desired: round.desired,
    run,
    spec,
    version: world.version,
    operation: operationOf(run, world.version),
    now: round.now,
    view: round.view,
    b: round.b,
    budget: round.budget.forKind('MutexRunConfig'),
    jobNamespace: settings.jobNamespace,
    rollout: { ...round.desired.config.defaults.rollout, approval: { required: 'none' } },
    targets: world.targets,
    canary: world.canary,
    nodes,
    ruleLabels,
    record: recordOf(run, world.version),
  };
  return { status: runNodes(ctx, gates, world.controlPlaneDone) };
}

function runNodes(ctx: McoContext, gates: RoundGates, controlPlaneDone: boolean) {
  const { b, spec, view } = ctx;
  const standing = new Map(ctx.nodes.map((n) => [n.name, standingOf(ctx, n)] as const));
  for (const n of ctx.nodes) if (standing.get(n.name) === 'stale') release(ctx, n);
  const ended = new Map<string, ObservedNode>();
  for (const n of ctx.nodes) {
    if (standing.get(n.name) !== 'current' || view.stateOf(n).settled) continue;
    const end = advance(ctx, n);
    if (end !== undefined) ended.set(n.name, end);
  }
  cleanUpGateJobs(ctx, ({ phase }) => (phase === 'Pending' ? 'before' : phase === 'Verifying' ? 'after' : undefined));
  const after = ctx.nodes.map((n) => ended.get(n.name) ?? n);
  const todo = (n: ObservedNode): boolean => {
    const s = standing.get(n.name);
    return (s === 'free' || s === 'foreign' || s === 'stale') && !atVersion(n, ctx.version);
  };
  const held = ctx.nodes.filter((n) => standing.get(n.name) === 'current');
  const policy = failurePolicy(ctx);
  const halting = after.filter((n) => standing.get(n.name) === 'current' && failedNodeHalts(policy, view.stateOf(n)));
  const failed = after.filter((n) => standing.get(n.name) === 'current' && view.stateOf(n).phase === 'Failed');
  const overBudget = failureBudgetHalt(
    policy,
    failed.map((n) => n.name),
    ctx.nodes.length,
  );
  const budget = failureBudgetText(policy, failed.length, ctx.nodes.length);
  const status = (halt: boolean) => {
    const s = mcoStatus(ctx, after, standing, halt);
    return budget === undefined ? s : { ...s, failureBudget: budget };
  };
  if (!ctx.nodes.some(todo) && held.every((n) => view.stateOf(n).settled)) {
    if (halting.length === 0 && overBudget === undefined)
      finish(b, spec, ctx.targets, ctx.nodes, Object.keys(ctx.ruleLabels));
    return status(halting.length > 0 || overBudget !== undefined);
  }
  // Every node still to do waits out of the canary pool, labelled, until it is admitted.
  const blocked = prepare(
    ctx,
    ctx.nodes.filter((n) => todo(n) || (standing.get(n.name) === 'current' && view.stateOf(n).phase === 'Pending')),
  );
  if (halting.length > 0) {
    const why = `stopOnFailure: node ${halting.map((n) => n.name).join(', ')} failed`;
    b.wait(spec, 'halted', haltedReason(why, spec.kind));
  } else if (overBudget !== undefined) {
    b.wait(spec, 'halted', haltedReason(overBudget, spec.kind));
  } else if (blocked !== undefined) {
    b.wait(spec, 'pool', blocked);
  } else if (!controlPlaneDone) {
    b.wait(
      spec,
      'order',
      `the control plane is not at ${ctx.version} yet (ClusterVersion status.history); workers wait`,
    );
  } else {
    start(ctx, gates, standing, after, ctx.nodes.filter(todo));
  }
  return status(halting.length > 0 || overBudget !== undefined);
}

/** A lock of another revision or version: let the node go (its record says nothing for this one). */
function release(ctx: McoContext, n: ObservedNode): void {
  const lock = ctx.view.stateOf(n).lockText ?? '?';
  ctx.b.act({
    kind: 'annotateNode',
    spec: ctx.spec,
    node: n.name,
    annotations: HELD_ANNOTATIONS,
    reason: `node ${n.name} released: ${lock} is not the upgrade to ${ctx.version} under the run as it is now`,
  });
}

function start(
  ctx: McoContext,
  gates: RoundGates,
  standing: ReadonlyMap<string, Standing>,
  after: readonly ObservedNode[],
  todo: readonly ObservedNode[],
): void {
  const { b, spec, view } = ctx;
  const inFlight = after.filter((n) => standing.get(n.name) === 'current' && !view.stateOf(n).settled).length;
  const done = after
    .filter((n) => standing.get(n.name) === 'done')
    .map((node) => ({ node, at: parseInstant(node.annotations[ANNOTATIONS.doneAt]) ?? 0 }));
  const gate = startGate({
    desired: ctx.desired,
    rollout: ctx.rollout,
    approval: { kind: 'NodeOp', name: spec.name, revision: ctx.operation.revision },
    canary: {
      policy: ctx.rollout.canary,
      wave: Math.min(ctx.rollout.canary?.nodes ?? 0, ctx.nodes.length),
      done,
      inFlight,
      doneWord: 'upgraded',
    },
    gates: gates(`${spec.kind}/${spec.name}`),
    now: ctx.now,
    status: { spec, revision: ctx.run.revision },
  });
  if (!gate.open) {
    b.wait(spec, gate.code, gate.reason, gateWait(gate));
    return;
  }
  const concurrency = ctx.rollout.concurrency > 0 ? ctx.rollout.concurrency : 1;
  const slots = new StartSlots({ ...ctx.rollout, concurrency }, inFlight, gate.limit, ctx.budget);
  for (const n of todo) {
    const foreign = standing.get(n.name) === 'foreign' ? view.stateOf(n) : undefined;
    const why = heldElsewhere(ctx.desired, b, n, foreign, 'it is admitted');
    if (why !== undefined) {
      b.wait(spec, 'lock', why, { node: n.name });
      continue;
    }
    if (!slots.take()) continue;
    b.taken.add(n.name);
    const { kind, name, revision } = ctx.operation;
    b.act({
      kind: 'annotateNode',
      spec,
      node: n.name,
      annotations: {
        [ANNOTATIONS.operation]: lockValue(kind, name, revision),
        [ANNOTATIONS.phase]: 'Pending',
        [ANNOTATIONS.phaseSince]: new Date(ctx.now).toISOString(),
        // A done NodeOp keeps its Job's name on the node (its status row); it is not this one's.
        [ANNOTATIONS.job]: null,
      },
      reason: `node ${n.name} is next for ${ctx.version}: its MutexRules run first`,
    });
  }
  slots.report(b, spec);
}
