/**
 * Whether a spec may start new nodes now, for every kind: one order of gates, one meaning of
 * each. A kind supplies its policy, its approval target and its canary's progress; it never
 * re-implements a gate.
 *
 *   halted (a failed node, or a metric halt the status branch still shows that no Approval
 *   with stage resume merged since has released) → paused (the spec's spec.paused,
 *   drydock.yaml's paused) → the fleet's earlier stages → the autoscaler → the maintenance
 *   window → the start approval → the metric gates → the canary wave (its nodes, then its
 *   soak) → the after-canary approval → open
 *
 * The metric gates come before the canary so that a breach during the canary's soak holds
 * the next wave even once the soak is over.
 */
import type { ObservedMetrics } from '../../observe/metrics.js';
import type { DesiredState, Pause, RolloutPolicy } from '../../spec/model.js';
import { shortCommit } from '../../commit.js';
import { approvalNeeded, findApproval, type ApprovalTarget } from '../approval.js';
import type { ApprovalWanted, MetricHalt, SpecRef } from '../types.js';
import { windowGate } from '../window.js';
import { canaryGate, type CanaryProgress } from './canary.js';
import { metricGate, resumeId, resumes, stillHalted } from './metric-gate.js';

export type StartGate =
  | { readonly open: true; readonly limit?: number }
  | {
      readonly open: false;
      readonly code:
        'halted' | 'paused' | 'fleet' | 'autoscaler' | 'order' | 'window' | 'approval' | 'soak' | 'metrics';
      readonly reason: string;
      readonly until?: number;
      readonly approval?: ApprovalWanted;
      readonly metricHalt?: MetricHalt;
    };

/** What holds a spec's starts from outside it: set by the round, the same for every kind. */
export interface StartGates {
  /** Set when the cluster-autoscaler is not paused yet. */
  readonly autoscaler?: string;
  /**
   * Set when another spec still has a control-plane node to do: under controlPlaneFirst no
   * worker of any spec starts before the whole control plane is done.
   */
  readonly controlPlane?: string;
  /** The metric gates' readings this round, for the rollouts that have metricGates. */
  readonly metrics?: ObservedMetrics;
  /**
   * In a fleet: what holds this revision of the spec until the stages before this cluster's
   * have passed it (plan/fleet.ts), or undefined when nothing does.
   */
  readonly fleet?: (target: ApprovalTarget) => { readonly reason: string; readonly until?: number } | undefined;
  /**
   * Set when the status branch's statuses are known (plan's `published`): the metric halt a
   * spec's published status holds at this revision, if any. A metric halt then outlasts its breach.
   */
  readonly metricHalts?: (spec: SpecRef, revision: string) => MetricHalt | undefined;
}

export interface StartInput {
  readonly desired: Pick<DesiredState, 'maintenanceWindows' | 'approvals' | 'config'>;
  readonly rollout: Pick<RolloutPolicy, 'window' | 'approval' | 'metricGates'>;
  readonly approval: ApprovalTarget;
  readonly canary: CanaryProgress;
  /** Why the spec is halted (a failed node under stopOnFailure, a halted drain), if it is. */
  readonly halted?: string;
  /** The spec's own spec.paused, if written (drydock.yaml's paused is read from `desired`). */
  readonly paused?: Pause;
  readonly gates: StartGates;
  readonly now: number;
  /** The spec and revision its status names: where a published metric halt is looked up. */
  readonly status?: { readonly spec: SpecRef; readonly revision: string };
}

/** The wait a halted spec reports: what halted it and how a person lets it go on. */
export function haltedReason(cause: string, kind: string): string {
  return `rollout halted: ${cause}; fix the cause, then remove the node's drydock.dev/ annotations or change the ${kind} to retry`;
}

/** Whether new nodes may start now, and how many at most (the canary's share). */
export function startGate(input: StartInput): StartGate {
  const { desired, rollout, approval, now } = input;
  if (input.halted !== undefined) return { open: false, code: 'halted', reason: input.halted };
  const own = input.status;
  const sticky = input.gates.metricHalts !== undefined;
  const resume = sticky ? approvalNeeded(desired.config, approval, 'resume') : undefined;
  const resumeWith = resumeId(findApproval(desired, approval, 'resume'));
  const stuck = own === undefined ? undefined : input.gates.metricHalts?.(own.spec, own.revision);
  if (stuck !== undefined && !resumes(stuck, resumeWith)) return stillHalted(stuck, resume);
  const paused = pausedReason(desired.config.paused, input.paused);
  if (paused !== undefined) return { open: false, code: 'paused', reason: paused };
  const fleet = input.gates.fleet?.(approval);
  if (fleet !== undefined) return { open: false, code: 'fleet', ...fleet };
  if (input.gates.autoscaler !== undefined) return { open: false, code: 'autoscaler', reason: input.gates.autoscaler };
  const closed = windowGate(desired.maintenanceWindows, rollout.window, now);
  if (closed !== undefined) return { open: false, ...closed };
  const required = rollout.approval.required;
  if (required === 'start' && findApproval(desired, approval, 'start') === undefined)
    return { open: false, code: 'approval', ...approvalNeeded(desired.config, approval, 'start') };
  const metrics = metricGate(rollout.metricGates, input.gates.metrics, sticky, resume);
  if (metrics?.metricHalt !== undefined) {
    // A halt goes on as one episode while the breach does (a resume merged meanwhile releases it
    // once it clears); a new one remembers the resume in force, which then does not release it.
    const seen = stuck !== undefined ? stuck.resumeSeen : resumeWith;
    return { ...metrics, metricHalt: { ...metrics.metricHalt, ...(seen !== undefined ? { resumeSeen: seen } : {}) } };
  }
  if (metrics !== undefined) return metrics;
  const canary = canaryGate(input.canary, now);
  if (canary !== undefined) return canary;
  if (required === 'afterCanary' && findApproval(desired, approval, 'afterCanary') === undefined)
    return { open: false, code: 'approval', ...approvalNeeded(desired.config, approval, 'afterCanary') };
  return { open: true };
}

/**
 * Why a pause holds new starts, or undefined: the repository's (drydock.yaml paused) first, as
 * it holds every spec; then the spec's own. Names who paused it and since which commit.
 */
export function pausedReason(repo: Pause | undefined, own: Pause | undefined): string | undefined {
  const [pause, field] = repo !== undefined ? [repo, 'drydock.yaml paused'] : [own, 'spec.paused'];
  if (pause === undefined) return undefined;
  const by = pause.by;
  const who =
    by === undefined
      ? `paused (${field}; who paused it is not known)`
      : `paused by ${by.name} <${by.email}> since commit ${shortCommit(by.commit)} (${field}, ${by.at})`;
  return `${who}: no new node starts, nodes in flight finish theirs; remove ${field} to resume`;
}

/** A closed gate's wait details: until when, the approval file it asks for, a metric halt. */
export function gateWait(gate: { until?: number; approval?: ApprovalWanted; metricHalt?: MetricHalt }): {
  until?: number;
  approval?: ApprovalWanted;
  metricHalt?: MetricHalt;
} {
  return {
    ...(gate.until !== undefined ? { until: gate.until } : {}),
    ...(gate.approval !== undefined ? { approval: gate.approval } : {}),
    ...(gate.metricHalt !== undefined ? { metricHalt: gate.metricHalt } : {}),
  };
}
