/**
 * The metric gate: a rollout's Prometheus alerts and queries, as read this round. A breach
 * holds new nodes (or halts, per onBreach); a Prometheus not read, or not answering, holds too:
 * a gate that cannot be checked is never a pass.
 */
import { metricGatesKey, type ObservedMetrics } from '../../observe/metrics.js';
import type { MetricGates } from '../../spec/model.js';

export interface MetricGateClosed {
  readonly open: false;
  readonly code: 'metrics' | 'halted';
  readonly reason: string;
}

/** Why the gates hold (or halt) new nodes now; undefined when they pass or there are none. */
export function metricGate(
  gates: MetricGates | undefined,
  readings: ObservedMetrics | undefined,
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
  if (gates.onBreach === 'halt')
    return {
      open: false,
      code: 'halted',
      reason: `rollout halted: metric gate breached: ${what}; metricGates.onBreach is halt`,
    };
  return { open: false, code: 'metrics', reason: `metric gate breached: ${what}; no new node starts until it clears` };
}
