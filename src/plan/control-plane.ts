/**
 * controlPlaneFirst across specs, for every operation kind: while any spec still has a
 * control-plane node to do, no worker of another spec ordered controlPlaneFirst starts. Each
 * spec orders its own nodes by its own tiers (replace/context.ts, nodeop/index.ts); this is
 * the rule between specs, so a NodeOp on the workers waits for a NodeImage's control plane and
 * a NodeImage's workers wait for a NodeOp's.
 */
import type { SpecRef } from './types.js';

/** One spec's first control-plane node still to do, and what "done" means for it. */
export interface PendingControlPlane {
  /** The operation that does it (its lock's Kind/name): what a spec compares itself with. */
  readonly operation: string;
  readonly spec: SpecRef;
  readonly node: string;
  /** e.g. "is not on img:v2 yet", "is not done yet". */
  readonly missing: string;
}

/** The reason `self`'s workers wait, or undefined when every other spec's control plane is done. */
export function controlPlaneWait(pending: readonly PendingControlPlane[], self: string): string | undefined {
  const first = pending.find((p) => p.operation !== self);
  if (first === undefined) return undefined;
  return `workers wait for the control plane first: ${first.node} of ${first.spec.kind} ${first.spec.name} ${first.missing} (order controlPlaneFirst)`;
}
