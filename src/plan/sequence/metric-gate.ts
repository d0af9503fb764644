/**
 * The metric gate: a rollout's Prometheus alerts and queries, as read this round. A breach
 * holds new nodes (or halts, per onBreach); a Prometheus not read, or not answering, holds too:
 * a gate that cannot be checked is never a pass.
 */
import { metricGatesKey, type ObservedMetrics } from '../../observe/metrics.js';
import type { MetricGates } from '../../spec/model.js';
import type { MetricHalt } from '../types.js';

export interface MetricGateClosed {
  readonly open: false;
  readonly code: 'metrics' | 'halted';
  readonly reason: string;
  /** Set when it halts: what breached, for status to keep the halt after the breach clears. */
  readonly metricHalt?: MetricHalt;
}

/**
 * How a person lets a metric halt go. With a status branch (`sticky`) the halt outlasts the
 * breach; without one nothing durable remembers it, so it lasts while the breach does.
 */
function releaseWords(sticky: boolean): string {
  return sticky
    ? 'it stays halted after the breach clears: fix the cause, then change the spec (any change makes a new revision) to resume'
    : 'with no status branch to remember it, the halt lasts only while the breach does';
}

/** The wait of a spec its published status shows halted by a metric gate at this revision. */
export function stillHalted(halt: MetricHalt): MetricGateClosed {
  return {
    open: false,
    code: 'halted',
    reason: `rollout halted: metric gate breached: ${halt.breach} (halted since ${halt.since}); ${releaseWords(true)}`,
    metricHalt: halt,
  };
}

/**
 * Why the gates hold (or halt) new nodes now; undefined when they pass or there are none.
 * `sticky`: a halt is published and kept after the breach clears (plan's `published` is given).
 */
export function metricGate(
  gates: MetricGates | undefined,
  readings: ObservedMetrics | undefined,
  sticky = false,
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
      reason: `rollout halted: metric gate breached: ${what}; metricGates.onBreach is halt; ${releaseWords(sticky)}`,
      metricHalt: { breach: what, since },
    };
  }
  return { open: false, code: 'metrics', reason: `metric gate breached: ${what}; no new node starts until it clears` };
}
