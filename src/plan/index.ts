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
import { budgetLines, ClusterBudget } from './budget.js';
import { PlanBuilder } from './builder.js';
import { controlPlaneWait } from './control-plane.js';
import { PlanError } from './errors.js';
import { fleetHold, type FleetRound } from './fleet.js';
import { planDrainPending } from './drain-pending.js';
import { forecastWaves, withEta, type ForecastInput } from './forecast.js';
import type { Round } from './kind.js';
import { KINDS } from './kinds.js';
import { paceOf, type Pace } from './pace.js';
import { metricGateViews } from './metric-view.js';
import { resolveOptions, type PlanOptions } from './options.js';
import type { StartGates } from './sequence/start-gate.js';
import type { Plan, SpecStatus, Wait, Wave } from './types.js';
import { notActedOn, notActedOnReason, notSupportedStatus } from './unsupported.js';
import { buildView } from './view.js';

export type { PlanOptions } from './options.js';
export { PlanError, type PlanErrorCode } from './errors.js';
export { checkWindow, formatInZone, isWindowOpen, nextWindowOpening, windowClosing } from './window.js';
export { isCopiedLabel, lockValue, parseLock } from './protocol.js';
export { notActedOn, notActedOnReason, type NotActedOn } from './unsupported.js';
export type * from './types.js';
export { describePace, type NodeTiming, type Pace, type PaceKind } from './pace.js';

/** The status with the pause that holds its new starts, if one does: its wait names who paused it. */
function withPause(status: SpecStatus, waits: readonly Wait[]): SpecStatus {
  const { kind, name } = status.spec;
  const pause = waits.find((w) => w.code === 'paused' && w.spec.kind === kind && w.spec.name === name);
  return pause === undefined ? status : { ...status, paused: pause.reason };
}

/** A spec halted by a metric gate says so in its status, for the next round to keep the halt. */
function withMetricHalt(status: SpecStatus, waits: readonly Wait[]): SpecStatus {
  const { kind, name } = status.spec;
  const halt = waits.find((w) => w.metricHalt !== undefined && w.spec.kind === kind && w.spec.name === name);
  return halt?.metricHalt === undefined ? status : { ...status, metricHalt: halt.metricHalt };
}

/**
 * The metric halts the status branch holds, by spec and revision; undefined without a status
 * branch, when a metric halt lasts only while its breach does.
 */
function publishedHalts(published: readonly SpecStatus[] | undefined): StartGates['metricHalts'] {
  if (published === undefined) return undefined;
  return (spec, revision) =>
    published.find((s) => s.spec.kind === spec.kind && s.spec.name === spec.name && s.revision === revision)
      ?.metricHalt;
}

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

/** The fleet's start gate for this round: by a spec's file, whether it is shared and who carries it. */
function fleetGate(desired: DesiredState, round: FleetRound | undefined, nowMs: number): StartGates['fleet'] {
  if (round === undefined) return undefined;
  const specs = [...desired.nodeImages, ...desired.nodeOps, ...desired.nodeOpUpgrades];
  return (target) => {
    // A NodeImage inPlace is planned as a NodeOp of the same name: its file is the NodeImage's.
    const named = specs.filter((s) => s.name === target.name);
    const spec = named.find((s) => s.kind === target.kind) ?? named.find((s) => s.kind === 'NodeImage');
    const hold = fleetHold(round, { spec: target, revision: target.revision }, spec?.source.file, nowMs);
    return hold && { reason: hold.reason, ...(hold.until !== undefined ? { until: hold.until } : {}) };
  };
}

/**
 * One reconcile, in rounds: every kind reads its specs from the observed state first (whether
 * any replaces nodes decides the autoscaler, and every spec's control plane still to do decides
 * controlPlaneFirst), then the autoscaler is planned, then each kind's round, in KINDS' order.
 */
export function plan(desired: DesiredState, observed: ObservedState, now: Date, options?: PlanOptions): Plan {
  if (!(now instanceof Date) || !Number.isFinite(now.getTime())) {
    throw new PlanError('invalid-now', 'plan needs `now` as a valid Date', { value: String(now) });
  }
  const opts = resolveOptions(options);
  const nowMs = now.getTime();
  const b = new PlanBuilder();
  const view = buildView(observed, ANNOTATIONS.replacedBy);
  const round: Round = {
    desired,
    view,
    b,
    budget: new ClusterBudget(desired.config, observed.nodes, view.stateOf, nowMs),
    options: opts,
    now: nowMs,
    nowIso: now.toISOString(),
  };
  const kinds = KINDS.map((k) => k.read(round));
  const active = kinds.some((k) => k.running);
  const unknown = kinds.find((k) => k.unknown !== undefined)?.unknown;
  const autoscalers = planAutoscalers(desired, round.view, active, b, active ? undefined : unknown);
  // Read before any spec moves a node: a control-plane node started this round is still to do.
  const controlPlanes = kinds.flatMap((k) => k.controlPlanes);
  const fleet = fleetGate(desired, opts.fleet, nowMs);
  const metricHalts = publishedHalts(opts.published);
  const gates = (operation: string): StartGates => {
    const controlPlane = controlPlaneWait(controlPlanes, operation);
    return {
      ...(autoscalers.blocking !== undefined ? { autoscaler: autoscalers.blocking } : {}),
      ...(controlPlane !== undefined ? { controlPlane } : {}),
      ...(observed.metrics !== undefined ? { metrics: observed.metrics } : {}),
      ...(fleet !== undefined ? { fleet } : {}),
      ...(metricHalts !== undefined ? { metricHalts } : {}),
    };
  };

  const specs: SpecStatus[] = [...autoscalers.statuses];
  const waves: Wave[] = [];
  const paces: Pace[] = [];
  let eta: number | undefined = nowMs;
  const forecasts: ForecastInput[] = [];
  for (const k of kinds) {
    for (const planned of k.plan(gates)) {
      const { forecast } = planned;
      const status = withMetricHalt(withPause(planned.status, b.waits), b.waits);
      if (forecast === undefined) {
        specs.push(status);
        continue;
      }
      forecasts.push(forecast);
      const pace: Pace =
        opts.perNodeMs !== undefined
          ? { spec: forecast.spec, kind: forecast.pace.kind, perNodeSeconds: opts.perNodeMs / 1000, basis: 'option' }
          : paceOf(forecast.spec, forecast.pace, opts.observedNodes);
      const f = forecastWaves(forecast, pace.perNodeSeconds * 1000);
      specs.push(withEta(status, f));
      waves.push(...f.waves);
      if (f.waves.length > 0) paces.push(pace);
      eta = eta === undefined || f.end === undefined ? undefined : Math.max(eta, f.end);
    }
  }

  planDrainPending(forecasts, view, nowMs, b);

  for (const n of notActedOn(desired)) {
    b.note({ kind: n.kind, name: n.name }, notActedOnReason(n));
    // A kind that plans the spec already reports it (its status says what it waits for).
    if (!specs.some((st) => st.spec.kind === n.kind && st.spec.name === n.name)) specs.push(notSupportedStatus(n));
  }

  const wakeAt = earliestWake(b.waits, nowMs);
  const metricGates = metricGateViews(desired, observed.metrics);
  const budget = budgetLines(desired.config.budget, observed.nodes.length, nowMs);
  return {
    actions: b.actions,
    waits: b.waits,
    notes: b.notes,
    specs,
    forecast: {
      waves,
      ...(paces.length > 0 ? { paces } : {}),
      ...(eta !== undefined ? { eta: new Date(eta).toISOString() } : {}),
    },
    ...(wakeAt !== undefined ? { wakeAt: new Date(wakeAt).toISOString() } : {}),
    ...(metricGates.length > 0 ? { metricGates } : {}),
    ...(budget !== undefined ? { budget } : {}),
  };
}
