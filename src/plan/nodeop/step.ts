/**
 * One node of a NodeOp, one phase per round: Pending → (cordon) → Draining → Updating (the Job)
 * → Rebooting (bootID recorded, reboot pod, new bootID and Ready) → Verifying (uncordoned, the
 * health gate: verify.ts) → Done, or Failed. What a phase is for comes in the round that
 * writes it: the first evictions after Draining in the node's lane (a failed patch holds
 * them); the Job beside Updating after a drain and the reboot pod beside Rebooting, since each
 * is its own record (the Job under a fixed name: drainStep; the pod with the boot it reboots
 * from: enterRebooting). The lock's round is the one that goes further: with no before-Jobs to
 * run, the cordon with the node's next phase follows the lock in the node's lane (startStep;
 * the executor writes the three in one patch), then the evictions or the Job. Every step
 * reads only what is on the node and what is observed, so a restarted drydock continues where
 * the last one stopped: a node past Updating never gets its Job again, and the reboot pod is
 * named after the recorded bootID, so the same boot is never rebooted twice.
 */
import type { ObservedJob, ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { OperationRef } from '../../protocol/jobs.js';
import { nodeOpJobSpec } from './job-spec.js';
import { drainView, preflight } from '../drain.js';
import { HELD_ANNOTATIONS, jobOutcomeRecorded } from '../protocol.js';
import { workloadsOf } from '../health.js';
import { podsOn } from '../view.js';
import { jobOf, rebootPodMade, rebootPodOf, type NodeOpContext, type SettleContext } from './context.js';
import { hasBeforeJobs, nodeGates } from './gates.js';
import { osImageFailure } from './os-check.js';
import { drainRound } from '../sequence/drain-step.js';
import { setPhase } from '../sequence/phase.js';
import { drainStarted, failurePolicyOf, outcomeEffect, type FailurePolicy, type NodeOutcome } from '../outcome.js';

function uncordonIfOurs(ctx: Pick<NodeOpContext, 'b' | 'spec' | 'view'>, node: ObservedNode, reason: string): void {
  if (ctx.view.stateOf(node).cordonedByUs) ctx.b.act({ kind: 'uncordon', spec: ctx.spec, node: node.name, reason });
}

/**
 * The failure handling outcome.ts decides by: the NodeOp's stopOnFailure, the rollout's failure
 * budget (maxFailures) and onFailure.
 */
export function failurePolicy(ctx: Pick<NodeOpContext, 'op'>): FailurePolicy {
  return failurePolicyOf(ctx.op.stopOnFailure, ctx.op.rollout);
}

/**
 * Ends the node's step without Done (lock kept, so a person looks first), as outcome.ts says:
 * Failed and uncordoned unless onFailure keeps it; halted (Failed, kept cordoned, the spec
 * halts); or skipped (uncordoned, Skipped, no failure).
 */
export function failNode(
  ctx: NodeOpContext,
  node: ObservedNode,
  why: string,
  job?: string,
  extra: Record<string, string> = {},
  outcome: NodeOutcome = 'failed',
): Ended {
  const effect = outcomeEffect(failurePolicy(ctx), outcome);
  const what = outcome === 'skipped' ? 'was skipped' : 'failed';
  const uncordoned = effect.uncordon && ctx.view.stateOf(node).cordonedByUs;
  if (effect.uncordon) uncordonIfOurs(ctx, node, `node ${node.name} ${what} (${why}); it takes workloads again`);
  const ending: Record<string, string> = {
    [ANNOTATIONS.reason]: why,
    ...(job !== undefined ? { [ANNOTATIONS.job]: job } : {}),
    ...extra,
  };
  for (const [k, v] of Object.entries(effect.annotations)) if (v !== null) ending[k] = v;
  setPhase(ctx, node, effect.phase, `node ${node.name} ${what}: ${why}`, { ...ending, ...effect.annotations });
  // The node as this round leaves it: uncordoned when it is, so it does not read as one kept
  // cordoned (a halt, outcome.ts failedNodeHalts) in the round it failed.
  const annotations: Record<string, string> = { ...node.annotations, ...ending, [ANNOTATIONS.phase]: effect.phase };
  if (!uncordoned) return { ...node, annotations };
  const { [ANNOTATIONS.cordoned]: _cordoned, ...rest } = annotations;
  return { ...node, unschedulable: false, annotations: rest };
}

/** A finished Job's termination message, to record with its outcome. */
export function messageOf(job: { readonly message?: string }): Record<string, string> {
  return job.message !== undefined ? { [ANNOTATIONS.jobMessage]: job.message } : {};
}

/**
 * Done: uncordon, record the succeeded revision (and when) on the node, release the lock. The
 * Job's name stays beside its message (drydock.dev/job, job-message), so the done node's status
 * row still names the Job, its namespace and what it said, until another operation starts there.
 */
export function finishNode(ctx: NodeOpContext, node: ObservedNode, why: string): void {
  uncordonIfOurs(ctx, node, `node ${node.name} is done; it takes workloads again`);
  const { [ANNOTATIONS.job]: _job, ...release } = HELD_ANNOTATIONS;
  const annotations = {
    ...release,
    [ctx.record.key]: ctx.record.value,
    [ANNOTATIONS.doneAt]: new Date(ctx.now).toISOString(),
  };
  ctx.b.act({ kind: 'annotateNode', spec: ctx.spec, node: node.name, annotations, reason: why });
}

/** The operation is done: the node is uncordoned and its health gate (verify.ts) comes next. */
export function enterVerifying(
  ctx: NodeOpContext,
  node: ObservedNode,
  why: string,
  extra: Record<string, string> = {},
): void {
  uncordonIfOurs(ctx, node, `node ${node.name}: its operation is done; it takes workloads again`);
  setPhase(ctx, node, 'Verifying', why, extra);
}

/**
 * A node this round ended without Done (Failed or Skipped), as the round leaves it: the round
 * counts it at once (a halt halts now), from this value, not from its own actions.
 */
export type Ended = ObservedNode;

/** One round of a node's operation step (Updating): the Job, or Bottlerocket's update Job. */
export type UpdateStep = (ctx: NodeOpContext, node: ObservedNode) => Ended | undefined;

/** Moves a node held by this revision one step; returns the node as it ends, if it does. */
export function advance(ctx: NodeOpContext, node: ObservedNode, jobStep: UpdateStep = nodeJobStep): Ended | undefined {
  switch (ctx.view.stateOf(node).phase) {
    case 'Pending':
      return leavePending(ctx, node, jobStep);
    case 'Cordoned':
    case 'Draining':
      return drainStep(ctx, node, jobStep);
    case 'Updating':
      return jobStep(ctx, node);
    case 'Rebooting':
      return rebootStep(ctx, node);
    default:
      // An unreadable phase (Verifying is verify.ts'): take it from the Job again (it is found, never re-made while it exists).
      return jobStep(ctx, node);
  }
}

function leavePending(ctx: NodeOpContext, node: ObservedNode, jobStep: UpdateStep): Ended | undefined {
  if (!mayTakeDown(ctx, node)) return;
  // UpgradeGate before-Jobs, one after another, must all succeed before the node is touched.
  const gate = nodeGates(ctx, node, 'before');
  if (gate.kind === 'waiting') return;
  if (gate.kind === 'failed') {
    return failNode(ctx, node, gate.reason, gate.job);
  }
  return takeDown(ctx, node, jobStep);
}

/**
 * The lock's round goes on to the node's first step when nothing has to run before it (no
 * UpgradeGate before-Jobs): the cordon with its phase, then the first evictions or the Job,
 * after the lock in the node's lane, so a failed lock write holds them (the executor, which
 * writes the lock, the cordon and the phase in one patch) and no node is touched without its
 * lock; a round less per node. `locked` is the node as the lock
 * leaves it. A node whose first step waits (the budget, a drain that cannot start) stays
 * Pending and is taken up by leavePending, as is one with before-Jobs.
 */
export function startStep(
  ctx: NodeOpContext,
  locked: ObservedNode,
  jobStep: UpdateStep = nodeJobStep,
): Ended | undefined {
  if (hasBeforeJobs(ctx, locked) || !mayTakeDown(ctx, locked)) return;
  return takeDown(ctx, locked, jobStep);
}

/** Whether the node may go down now: the budget allows it and its drain can start; else why not, as a wait. */
function mayTakeDown(ctx: NodeOpContext, node: ObservedNode): boolean {
  const { b, op, spec } = ctx;
  if (!ctx.budget.canTakeDown()) {
    b.wait(spec, 'budget', ctx.budget.describe(), { node: node.name });
    return false;
  }
  if (op.drain.enabled) {
    const blocked = preflight(ctx.view, drainView(podsOn(ctx.view, node.name), op.drain));
    if (blocked !== undefined) {
      b.wait(spec, blocked.code, `node ${node.name}: ${blocked.reason}`, { node: node.name });
      return false;
    }
  }
  return true;
}

/** The node goes down: cordoned with its next phase in one patch, then the first evictions or its Job. */
function takeDown(ctx: NodeOpContext, node: ObservedNode, jobStep: UpdateStep): Ended | undefined {
  const { b, op, spec } = ctx;
  ctx.budget.takeDown();
  if (op.cordon)
    b.act({
      kind: 'cordon',
      spec,
      node: node.name,
      reason: `${spec.kind} ${spec.name} cordons node ${node.name} before its Job`,
    });
  const { name } = jobOf(ctx, ctx.operation, node.name);
  const next = op.drain.enabled ? 'Draining' : 'Updating';
  setPhase(ctx, node, next, `node ${node.name} enters ${next}`, {
    [ANNOTATIONS.job]: `${ctx.settings.jobNamespace}/${name}`,
    // What runs there now: the health gate waits for it to be back before the node is done.
    [ANNOTATIONS.evicted]: workloadsOf(podsOn(ctx.view, node.name)),
  });
  if (op.drain.enabled) firstEvictions(ctx, node);
  // Without a drain, the Job follows its phase in the same round, as after a drain (drainStep).
  else if (jobOf(ctx, ctx.operation, node.name).job === undefined) return jobStep(ctx, node);
}

/**
 * The drain's first evictions in the round that cordons: after the cordon and its phase in the
 * node's lane (a failed patch defers them), so no pod is evicted from a node still
 * schedulable; a round less per node. The timeout is not counted yet (it runs from the phase
 * written now), and a node with nothing to move is left to the next round's drained step.
 */
function firstEvictions(ctx: NodeOpContext, node: ObservedNode): void {
  const { b, op, spec } = ctx;
  const drain = drainRound({ spec, node, view: ctx.view, policy: op.drain, started: undefined, now: ctx.now });
  if (drain.kind !== 'moving') return;
  for (const a of drain.actions) b.act(a);
  b.wait(spec, drain.wait.code, drain.wait.reason, { node: node.name });
}

function drainStep(ctx: NodeOpContext, node: ObservedNode, jobStep: UpdateStep): Ended | undefined {
  const { b, op, spec } = ctx;
  const { name, job } = jobOf(ctx, ctx.operation, node.name);
  const drain = drainRound({
    spec,
    node,
    view: ctx.view,
    policy: op.drain,
    started: drainStarted(ctx.view.stateOf(node), ctx.now),
    now: ctx.now,
    actingSince: ctx.settings.actingSince,
    ownJob: { namespace: ctx.settings.jobNamespace, name },
  });
  if (drain.kind === 'drained') {
    setPhase(ctx, node, 'Updating', `node ${node.name} is drained; its Job runs next`);
    // The Job in the same round, beside its phase: the Job, under its fixed name, is its own
    // record, so it waits for no write, and a phase that failed to be written (or a restart
    // in between) leaves a drained node with its Job, which the next round finds here and
    // moves to Updating without making it again. Only a Job not there yet; one that is is
    // read in the Updating round, so a round never sets two phases.
    if (job === undefined) return ctx.b.besideLast(() => jobStep(ctx, node));
    return;
  }
  if (drain.kind === 'ended') {
    return failNode(ctx, node, drain.reason, undefined, {}, drain.outcome);
  }
  for (const a of drain.actions) b.act(a);
  b.wait(spec, drain.wait.code, drain.wait.reason, {
    node: node.name,
    ...(drain.wait.until !== undefined ? { until: drain.wait.until } : {}),
  });
}

/** A failed operation Job: the node fails with the Job's own words (its termination message). */
export function jobFailed(ctx: NodeOpContext, node: ObservedNode, job: ObservedJob, jobRef: string): Ended {
  const why = job.failureReason !== undefined ? ` (${job.failureReason})` : '';
  const message = job.message !== undefined ? `: ${job.message}` : '';
  return failNode(
    ctx,
    node,
    `Job ${jobRef} failed after ${job.attempts} attempt(s)${why}${message}`,
    jobRef,
    messageOf(job),
  );
}

function nodeJobStep(ctx: NodeOpContext, node: ObservedNode): Ended | undefined {
  const { b, op, spec, settings } = ctx;
  const { name, job } = jobOf(ctx, ctx.operation, node.name);
  const jobRef = `${settings.jobNamespace}/${name}`;
  if (job === undefined) {
    const taints = node.taints.map((t) => ({ ...t }));
    b.act({
      kind: 'createNodeJob',
      spec,
      node: node.name,
      namespace: settings.jobNamespace,
      operation: ctx.operation,
      job: nodeOpJobSpec(op),
      taints,
      ...(ctx.appliesImage !== undefined ? { appliesImage: ctx.appliesImage } : {}),
      reason: `run ${spec.kind} ${spec.name}'s Job on node ${node.name}`,
    });
    b.wait(spec, 'job', `node ${node.name}: Job ${jobRef} starting`, { node: node.name });
    return;
  }
  if (job.failed) return jobFailed(ctx, node, job, jobRef);
  if (!job.succeeded) {
    b.wait(spec, 'job', `node ${node.name}: Job ${jobRef} running`, { node: node.name });
    return;
  }
  if (!op.rebootOnSuccess) {
    enterVerifying(ctx, node, `node ${node.name}: Job ${jobRef} succeeded; health gate next`, messageOf(job));
    return;
  }
  if (node.bootID === undefined || node.bootID === '') {
    return failNode(
      ctx,
      node,
      'the node reports no bootID (status.nodeInfo.bootID), so a reboot could not be verified',
      jobRef,
    );
  }
  enterRebooting(ctx, node, node.bootID, `node ${node.name}: Job ${jobRef} succeeded; reboot next`, messageOf(job));
}

/**
 * Rebooting, and its reboot pod in the same round, beside the phase: the pod carries the bootID
 * it reboots from (drydock.dev/boot-id, and its name), so it is its own record of the reboot and
 * waits for no write; a round less per node, and the phase's call off the node's path. A pod
 * made beside a phase that was not written (a failed write, a restart in between) is found
 * here in a later round, the node still Updating: the boot it names is recorded, never the one
 * the node may since have rebooted into, so the reboot is seen done and no boot is rebooted
 * twice. A pod that does not come (its create failed) is made by rebootStep in a later round.
 */
export function enterRebooting(
  ctx: NodeOpContext,
  node: ObservedNode,
  bootID: string,
  why: string,
  extra: Record<string, string> = {},
): void {
  const from = rebootPodMade(ctx, ctx.operation, node.name)?.rebootsFrom ?? bootID;
  setPhase(ctx, node, 'Rebooting', why, { [ANNOTATIONS.bootID]: from, ...extra });
  if (rebootPodOf(ctx, node.name, from).pod === undefined) ctx.b.besideLast(() => createRebootPod(ctx, node, from));
  rebootWait(ctx, node, ctx.now + ctx.settings.rebootTimeoutMs);
}

/** The reboot pod's method and image: Bottlerocket's API with its image, or nsenter with the reboot image. */
function rebootPodImage({ bottlerocket, settings }: NodeOpContext): { method?: 'bottlerocketApi'; image?: string } {
  const image = bottlerocket !== undefined ? settings.bottlerocketImage : settings.rebootImage;
  return {
    ...(bottlerocket !== undefined ? { method: 'bottlerocketApi' as const } : {}),
    ...(image !== undefined ? { image } : {}),
  };
}

function rebootStep(ctx: NodeOpContext, node: ObservedNode): Ended | undefined {
  const { settings } = ctx;
  const recorded = node.annotations[ANNOTATIONS.bootID];
  if (recorded === undefined || recorded === '') {
    return failNode(ctx, node, `phase Rebooting without ${ANNOTATIONS.bootID}; the reboot cannot be verified`);
  }
  const since = ctx.view.stateOf(node).since ?? ctx.now;
  const deadline = since + settings.rebootTimeoutMs;
  const pod = rebootPodOf(ctx, node.name, recorded);
  if (node.bootID !== undefined && node.bootID !== recorded && node.ready) {
    const wrongOs = osImageFailure(ctx, node);
    if (wrongOs !== undefined) {
      if (pod.pod !== undefined) deleteRebootPod(ctx, node.name, pod.name);
      return failNode(ctx, node, wrongOs);
    }
    // The pod's guard leaves the new boot alone, so the uncordon does not wait for its deletion:
    // the pod goes with the node's clean-up (cleanUpRebootPod), as its Job does.
    const verified = ctx.expectedOsImage !== undefined ? `, reports osImage ${JSON.stringify(node.osImage)}` : '';
    enterVerifying(ctx, node, `node ${node.name} rebooted (bootID changed)${verified} and is Ready; health gate next`);
    return;
  }
  if (deadline <= ctx.now) {
    const why = `reboot did not come back within ${Math.round(settings.rebootTimeoutMs / 1000)}s`;
    // A reboot pod that has not rebooted the node (never scheduled, or stuck) would still reboot
    // it later, a node back in service with workloads on it: it goes first, in the node's lane.
    if (pod.pod !== undefined)
      deleteRebootPod(ctx, node.name, pod.name, `node ${node.name}: ${why}; it must not reboot later`);
    return failNode(ctx, node, why);
  }
  if (node.bootID === recorded && pod.pod === undefined) createRebootPod(ctx, node, recorded);
  rebootWait(ctx, node, deadline);
}

/** Deletes the reboot pod `name` of `node`: it has rebooted (or, as `reason` says, must not any more). */
function deleteRebootPod(
  ctx: Pick<NodeOpContext, 'b' | 'spec' | 'settings'>,
  node: string,
  name: string,
  reason = `node ${node} rebooted`,
): void {
  ctx.b.act({ kind: 'deleteRebootPod', spec: ctx.spec, node, namespace: ctx.settings.jobNamespace, name, reason });
}

/** The reboot pod for the boot recorded on the node: it reboots the node once. */
function createRebootPod(ctx: NodeOpContext, node: ObservedNode, bootID: string): void {
  ctx.b.act({
    kind: 'createRebootPod',
    spec: ctx.spec,
    node: node.name,
    namespace: ctx.settings.jobNamespace,
    operation: ctx.operation,
    bootID,
    taints: node.taints.map((t) => ({ ...t })),
    // Bottlerocket reboots through its API, into the partition the update activated.
    ...rebootPodImage(ctx),
    reason: `reboot node ${node.name} once after its Job succeeded`,
  });
}

function rebootWait(ctx: NodeOpContext, node: ObservedNode, deadline: number): void {
  ctx.b.wait(ctx.spec, 'reboot', `node ${node.name}: waiting for the reboot (new bootID and Ready)`, {
    node: node.name,
    until: deadline,
  });
}

/**
 * A node held by another revision of this NodeOp, or by a NodeOp no longer in Git: the step in
 * flight (a running Job, a started reboot) finishes, then the node is uncordoned and released.
 * It starts nothing new.
 */
export function settle(ctx: SettleContext, node: ObservedNode): void {
  const { b, spec, settings } = ctx;
  const state = ctx.view.stateOf(node);
  const lock = state.lock;
  if (lock === undefined) return;
  const op: OperationRef = {
    kind: lock.kind === 'NodeImage' ? 'NodeImage' : 'NodeOp',
    name: lock.name,
    revision: lock.revision,
  };
  const phase = state.phase;
  const { name: jobName, job } = jobOf(ctx, op, node.name);
  // A running Job in any phase: made beside Updating, it may run while the node still reads Draining.
  if (job !== undefined && !job.succeeded && !job.failed) {
    b.wait(
      spec,
      'job',
      `node ${node.name}: the Job of ${lock.kind}/${lock.name}@${lock.revision} finishes before the node is released`,
      { node: node.name },
    );
    return;
  }
  // The boot a reboot pod reboots from: recorded when Rebooting; else named by a pod made beside a Rebooting not written.
  const recorded =
    phase === 'Rebooting' ? node.annotations[ANNOTATIONS.bootID] : rebootPodMade(ctx, op, node.name)?.rebootsFrom;
  const rebootPod = recorded !== undefined ? rebootPodOf(ctx, node.name, recorded) : undefined;
  if (rebootPod?.pod !== undefined) {
    if (node.bootID === recorded || !node.ready) {
      b.wait(spec, 'reboot', `node ${node.name}: its reboot finishes before the node is released`, { node: node.name });
      return;
    }
    // The reboot came back: its pod goes, as in rebootStep; the release clears the bootID that names it.
    deleteRebootPod(ctx, node.name, rebootPod.name);
  }
  uncordonIfOurs(ctx, node, `node ${node.name} is released by ${lock.kind}/${lock.name}@${lock.revision}`);
  b.act({
    kind: 'annotateNode',
    spec,
    node: node.name,
    annotations: HELD_ANNOTATIONS,
    reason: `node ${node.name} released: ${lock.kind}/${lock.name}@${lock.revision} is no longer the spec in Git`,
  });
  if (job !== undefined && jobOutcomeRecorded(job))
    b.act({
      kind: 'deleteJob',
      spec,
      node: node.name,
      namespace: settings.jobNamespace,
      name: jobName,
      reason: 'its node was released',
    });
  if (state.settled)
    b.note(
      spec,
      `node ${node.name} was ${phase ?? 'Failed'} under ${lock.revision}; released for the new revision`,
      node.name,
    );
}

/** Phases in which a node's Job may still be running or about to be. */
const BEFORE_JOB_DONE: ReadonlySet<string | undefined> = new Set(['Pending', 'Cordoned', 'Draining', 'Updating']);

/**
 * Whether a node's clean-up waits: its Job may still run, or it is in its health gate. There a
 * deletion in its lane would keep it from the round that sees it pass (a lane's node is planned
 * again only once the caches show its writes), so its finished Job and reboot pod go once it is
 * done, failed or skipped.
 */
function cleanUpWaits(phase: string | undefined): boolean {
  return phase === 'Verifying' || BEFORE_JOB_DONE.has(phase);
}

/** A finished Job whose outcome is recorded on the node (past Updating, not in its health gate): deleted. */
export function cleanUpJob(ctx: NodeOpContext, node: ObservedNode): void {
  if (cleanUpWaits(ctx.view.stateOf(node).phase)) return;
  const { name, job } = jobOf(ctx, ctx.operation, node.name);
  if (job === undefined || !jobOutcomeRecorded(job)) return;
  ctx.b.act({
    kind: 'deleteJob',
    spec: ctx.spec,
    node: node.name,
    namespace: ctx.settings.jobNamespace,
    name,
    reason: `Job's outcome is recorded on node ${node.name}`,
  });
}

/**
 * The reboot pod of a node done, failed or skipped: deleted. Its boot is over, or the node
 * failed with the pod gone first (rebootStep), so it reboots nothing; it only has to go, like
 * the node's finished Job.
 */
export function cleanUpRebootPod(ctx: NodeOpContext, node: ObservedNode): void {
  const phase = ctx.view.stateOf(node).phase;
  if (phase === 'Rebooting' || cleanUpWaits(phase)) return;
  const pod = rebootPodMade(ctx, ctx.operation, node.name);
  if (pod !== undefined && !pod.terminating)
    deleteRebootPod(ctx, node.name, pod.name, `node ${node.name} is past its reboot; its reboot pod is cleaned up`);
}
