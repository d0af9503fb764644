/**
 * IntOrPercent arithmetic, as Kubernetes does it for rolling updates: maxSurge rounds up,
 * maxUnavailable rounds down, and when both come to zero maxUnavailable becomes one so a
 * rollout can always make progress.
 */
import type { IntOrPercent } from '../spec/model.js';

export function resolveQuantity(value: IntOrPercent, total: number, round: 'up' | 'down'): number {
  if (typeof value === 'number') return Math.max(0, Math.floor(value));
  const percent = Number(value.slice(0, -1));
  if (!Number.isFinite(percent) || percent < 0) return 0;
  const exact = (percent * total) / 100;
  return round === 'up' ? Math.ceil(exact) : Math.floor(exact);
}

export interface RolloutLimits {
  readonly maxSurge: number;
  readonly maxUnavailable: number;
}

export function resolveLimits(maxSurge: IntOrPercent, maxUnavailable: IntOrPercent, total: number): RolloutLimits {
  const surge = resolveQuantity(maxSurge, total, 'up');
  const unavailable = resolveQuantity(maxUnavailable, total, 'down');
  if (surge === 0 && unavailable === 0) return { maxSurge: 0, maxUnavailable: 1 };
  return { maxSurge: surge, maxUnavailable: unavailable };
}
