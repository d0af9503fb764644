/**
 * plan(desired, observed, now): drydock's pure planner. No clock, randomness or I/O; every
 * list it reads or writes has a stable order, so the same input always gives a deep-equal
 * Plan. The executor applies `actions` in list order; the reporter renders `specs`, `waits`
 * and `notes`; the service wakes at `wakeAt` if nothing else happens first.
 */
import type { ObservedState } from '../observe/types.js';
import { ANNOTATIONS } from '../protocol/keys.js';
import type { DesiredState } from '../spec/model.js';
import { planAutoscalers } from './autoscaler.js';
import { ClusterBudget } from './budget.js';
import { PlanBuilder } from './builder.js';
import { PlanError } from './errors.js';
import { forecastWaves, withEta, type ForecastInput } from './forecast.js';
import { planMaintenances } from './maintenance/index.js';
import { resolveOptions, type PlanOptions } from './options.js';
import { compareStrings } from './order.js';
import { controlPlaneWait, type PendingControlPlane } from './control-plane.js';
import { buildRollout, type RolloutContext } from './replace/context.js';
import { isReplace, outdatedControlPlane, planReplace } from './replace/index.js';
import { releaseRemovedRollouts } from './replace/removed.js';
import type { Plan, SpecStatus, Wait, Wave } from './types.js';
import { notActedOn, notActedOnReason, notSupportedStatus } from './unsupported.js';
import { buildView } from './view.js';
import {
  buildNodeOpContext,
  inPlaceNodeOp,
  nodeOpForecastInput,
  pendingControlPlane,
  planNodeOp,
  planRemovedNodeOps,
  type NodeOpContext,
} from './nodeop/index.js';

export type { PlanOptions } from './options.js';
export { PlanError, type PlanErrorCode } from './errors.js';
export { checkWindow, formatInZone, isWindowOpen, nextWindowOpening, windowClosing } from './window.js';
export { isCopiedLabel, lockValue, parseLock } from './protocol.js';
export { notActedOn, notActedOnReason, type NotActedOn } from './unsupported.js';
export type * from './types.js';

/** The earliest `until` of the waits still ahead of now: when the service should look again. */
export function earliestWake(waits: readonly Wait[], nowMs: number): number | undefined {
  let wakeAt: number | undefined;
  for (const w of waits) {
    if (w.until === undefined) continue;
    const t = Date.parse(w.until);
    if (t > nowMs && (wakeAt === undefined || t < wakeAt)) wakeAt = t;
  }
  return wakeAt;
}

/** Every spec's first control-plane node still to do, replace rollouts first, then the in-place kinds. */
function pendingControlPlanes(
  rollouts: ReadonlyMap<string, RolloutContext>,
  inPlace: readonly NodeOpContext[],
): PendingControlPlane[] {
  const out: PendingControlPlane[] = [];
  for (const [name, r] of rollouts) {
    const node = outdatedControlPlane(r);
    if (node !== undefined)
      out.push({ operation: `NodeImage/${name}`, spec: r.spec, node, missing: `is not on ${r.image.image} yet` });
  }
  for (const ctx of inPlace) {
    const node = pendingControlPlane(ctx);
    if (node === undefined) continue;
    const missing = ctx.appliesImage !== undefined ? `is not on ${ctx.appliesImage} yet` : 'is not done yet';
    out.push({ operation: `${ctx.operation.kind}/${ctx.operation.name}`, spec: ctx.spec, node, missing });
  }
  return out;
}

/**
 * One reconcile, in rounds: the rollouts are read from the observed state first (whether any
 * runs decides the autoscaler), then the autoscaler is planned, then each NodeImage's round.
 * A new operation kind adds its own folder beside replace/ and its round here.
 */
export function plan(desired: DesiredState, observed: ObservedState, now: Date, options?: PlanOptions): Plan {
  if (!(now instanceof Date) || !Number.isFinite(now.getTime())) {
    throw new PlanError('invalid-now', 'plan needs `now` as a valid Date', { value: String(now) });
  }
  const opts = resolveOptions(options);
  const nowMs = now.getTime();
  const view = buildView(observed, ANNOTATIONS.replacedBy);
  const b = new PlanBuilder();
  const budget = new ClusterBudget(desired.config, observed.nodes);
  const images = [...desired.nodeImages].sort((x, y) => compareStrings(x.name, y.name));
  const rollouts = new Map(
    images
      .filter(isReplace)
      .map(
        (image) => [image.name, buildRollout({ desired, image, now: nowMs, options: opts, view, b, budget })] as const,
      ),
  );
  releaseRemovedRollouts(desired, view, [...rollouts.values()], b);
  const active = [...rollouts.values()].some((r) => r.running);
  // A group the cloud did not answer for may still be mid-rollout: the autoscaler is then
  // neither restored nor paused on a guess (a 20 % error rate would flap it every round).
  const unobserved = [...rollouts.values()].flatMap((r) => r.notices).find((n) => n.kind === 'unobserved');
  const hold =
    !active && unobserved !== undefined ? `ScalingGroup ${unobserved.sg.name}: ${unobserved.why}` : undefined;
  const autoscalers = planAutoscalers(desired, view, active, b, hold);
  const gates = autoscalers.blocking !== undefined ? { autoscaler: autoscalers.blocking } : {};

  // Maintenances go before any rollout moves a node: a person's order takes its budget share
  // first, and a rollout never starts a node under maintenance (replace/start.ts).
  const maintenances = planMaintenances({ desired, view, b, budget, now: nowMs, nowIso: now.toISOString() });

  const specs: SpecStatus[] = [...autoscalers.statuses, ...maintenances];
  const waves: Wave[] = [];
  let eta: number | undefined = nowMs;
  /** Adds a spec with its forecast: its waves, its ETA and each node's. */
  const forecastOf = (status: SpecStatus, input: ForecastInput): void => {
    const f = forecastWaves(input, opts.perNodeMs);
    specs.push(withEta(status, f));
    waves.push(...f.waves);
    eta = eta === undefined || f.end === undefined ? undefined : Math.max(eta, f.end);
  };
  // NodeOps (and the NodeOps NodeOpUpgrades generate) share the budget and the per-node lock.
  const settings = {
    jobNamespace: opts.jobNamespace,
    rebootTimeoutMs: opts.rebootTimeoutMs,
    ...(opts.rebootImage !== undefined ? { rebootImage: opts.rebootImage } : {}),
  };
  const inPlace = [
    ...[...desired.nodeOps]
      .sort((x, y) => compareStrings(x.name, y.name))
      .map((op) => buildNodeOpContext({ desired, op, now: nowMs, view, b, budget, settings })),
    ...images
      .filter((i) => i.strategy === 'inPlace')
      .map((image) =>
        buildNodeOpContext(
          { desired, op: inPlaceNodeOp(image), now: nowMs, view, b, budget, settings },
          { spec: { kind: 'NodeImage', name: image.name }, image: image.image },
        ),
      ),
  ];
  // Read before any spec moves a node: a control-plane node started this round is still to do.
  const controlPlanes = pendingControlPlanes(rollouts, inPlace);
  const controlPlaneGate = (operation: string): { controlPlane?: string } => {
    const reason = controlPlaneWait(controlPlanes, operation);
    return reason !== undefined ? { controlPlane: reason } : {};
  };

  for (const image of images) {
    // A NodeImage this build does not roll out is reported with the other specs it does not act on.
    const rollout = rollouts.get(image.name);
    if (rollout === undefined) continue;
    const result = planReplace(rollout, { ...gates, ...controlPlaneGate(`NodeImage/${image.name}`) });
    forecastOf(result.status, result.forecast);
  }

  planRemovedNodeOps(desired, { b, view, settings });
  for (const ctx of inPlace) {
    const status = planNodeOp(ctx, controlPlaneGate(`${ctx.operation.kind}/${ctx.operation.name}`));
    forecastOf(status, nodeOpForecastInput(ctx, status));
  }

  for (const n of notActedOn(desired)) {
    b.note({ kind: n.kind, name: n.name }, notActedOnReason(n));
    specs.push(notSupportedStatus(n));
  }

  const wakeAt = earliestWake(b.waits, nowMs);
  return {
    actions: b.actions,
    waits: b.waits,
    notes: b.notes,
    specs,
    forecast: { waves, ...(eta !== undefined ? { eta: new Date(eta).toISOString() } : {}) },
    ...(wakeAt !== undefined ? { wakeAt: new Date(wakeAt).toISOString() } : {}),
  };
}
