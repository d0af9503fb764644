/**
 * The metric gate: a rollout's Prometheus alerts and queries, as read this round. A breach
 * holds new nodes (or halts, per onBreach); a Prometheus not read, or not answering, holds too:
 * a gate that cannot be checked is never a pass.
 */
import { metricGatesKey, type ObservedMetrics } from '../../observe/metrics.js';
import type { Approval, MetricGates } from '../../spec/model.js';
import type { ApprovalWait } from '../approval.js';
import type { ApprovalWanted, MetricHalt } from '../types.js';

export interface MetricGateClosed {
  readonly open: false;
  readonly code: 'metrics' | 'halted';
  readonly reason: string;
  /** Set when it halts: what breached, for status to keep the halt after the breach clears. */
  readonly metricHalt?: MetricHalt;
  /** Set when it halts with a status branch: the Approval (stage resume) that releases it. */
  readonly approval?: ApprovalWanted;
}

/**
 * How a person lets a metric halt go. With a status branch (`sticky`) the halt outlasts the
 * breach, until an Approval with stage resume (`resume`, the file to merge) or a new revision;
 * without one nothing durable remembers it, so it lasts while the breach does.
 */
function releaseWords(sticky: boolean, resume?: ApprovalWait): string {
  if (!sticky) return 'with no status branch to remember it, the halt lasts only while the breach does';
  const approve = resume === undefined ? '' : `merge ${resume.approval.path} (kind Approval, stage resume) or `;
  return `it stays halted after the breach clears: fix the cause, then ${approve}change the spec (any change makes a new revision) to resume`;
}

/** The wait of a spec its published status shows halted by a metric gate at this revision. */
export function stillHalted(halt: MetricHalt, resume?: ApprovalWait): MetricGateClosed {
  return {
    open: false,
    code: 'halted',
    reason: `rollout halted: metric gate breached: ${halt.breach} (halted since ${halt.since}); ${releaseWords(true, resume)}`,
    metricHalt: halt,
    ...(resume !== undefined ? { approval: resume.approval } : {}),
  };
}

/** How a resume Approval is told apart from another: the commit that merged it, else its content. */
export function resumeId(approval: Approval | undefined): string | undefined {
  return approval === undefined ? undefined : (approval.approvedBy?.commit ?? approval.revision);
}

/**
 * Whether the resume Approval in force (`id`, resumeId) releases a published metric halt: one
 * other than the one in force when the halt began. A breach that comes back after a resume
 * halts again, and needs a new approval.
 */
export function resumes(halt: MetricHalt, id: string | undefined): boolean {
  return id !== undefined && id !== halt.resumeSeen;
}

/**
 * Why the gates hold (or halt) new nodes now; undefined when they pass or there are none.
 * `sticky`: a halt is published and kept after the breach clears (plan's `published` is given);
 * `resume`: the Approval file that would release it.
 */
export function metricGate(
  gates: MetricGates | undefined,
  readings: ObservedMetrics | undefined,
  sticky = false,
  resume?: ApprovalWait,
): MetricGateClosed | undefined {
  if (gates === undefined) return undefined;
  const reading = readings?.[metricGatesKey(gates)];
  if (reading === undefined)
    return {
      open: false,
      code: 'metrics',
      reason: `Prometheus at ${gates.prometheus} not read yet; no new node starts before its gates are checked`,
    };
  if (!reading.reachable)
    return {
      open: false,
      code: 'metrics',
      reason: `${reading.problem} (since ${reading.since}); no new node starts until its gates can be checked`,
    };
  if (reading.breaches.length === 0) return undefined;
  const what = reading.breaches.map((b) => `${b.what} ${b.value} since ${b.since}`).join('; ');
  if (gates.onBreach === 'halt') {
    const since = reading.breaches.map((b) => b.since).reduce((a, b) => (b < a ? b : a));
    return {
      open: false,
      code: 'halted',
      reason: `rollout halted: metric gate breached: ${what}; metricGates.onBreach is halt; ${releaseWords(sticky, resume)}`,
      metricHalt: { breach: what, since },
      ...(sticky && resume !== undefined ? { approval: resume.approval } : {}),
    };
  }
  return { open: false, code: 'metrics', reason: `metric gate breached: ${what}; no new node starts until it clears` };
}
