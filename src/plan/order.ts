/**
 * Stable order of nodes within a rollout. The API's listing order is undefined, so every
 * decision that picks "the next node" sorts by an explicit key and ties break on name.
 * Nodes fall into tiers (control plane, workers) that run one after the other as the
 * rollout's order says; byName puts every node in one tier.
 */
import type { NodeRole, RolloutOrder } from '../spec/model.js';

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Names in natural order (worker-2 before worker-10), as a person reads a forecast; equal
 * under that order only when equal as strings, so it is still a total order.
 */
export function compareNames(a: string, b: string): number {
  const x = a.split(/(\d+)/);
  const y = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i] ?? '';
    const q = y[i] ?? '';
    if (p === q) continue;
    // Odd positions hold digit runs; compare them by value, then by length ("02" after "2").
    if (i % 2 === 1) return Number(p) - Number(q) || p.length - q.length;
    return compareStrings(p, q);
  }
  return x.length - y.length || compareStrings(a, b);
}

export function tierOf(order: RolloutOrder, role: NodeRole): number {
  if (order === 'byName') return 0;
  const controlPlane = role === 'control-plane';
  if (order === 'controlPlaneFirst') return controlPlane ? 0 : 1;
  return controlPlane ? 1 : 0;
}

export interface Ordered {
  readonly tier: number;
  readonly group: string;
  readonly name: string;
}

export function compareOrdered(a: Ordered, b: Ordered): number {
  return a.tier - b.tier || compareStrings(a.group, b.group) || compareNames(a.name, b.name);
}
