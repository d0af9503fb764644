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
  return a.tier - b.tier || compareStrings(a.group, b.group) || compareStrings(a.name, b.name);
}
