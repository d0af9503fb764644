/**
 * One reconcile, from scratch: observe (caches + cloud) → plan (pure) → execute (if leading)
 * → describe (buildStatus). It decides nothing by itself beyond when to run next: right away
 * after a change it made, at the plan's wakeAt, after a retry delay, or at the resync interval.
 */
import type { Logger } from 'pino';
import type { DesiredState } from '../spec/model.js';
import type { Plan, SpecStatus } from '../plan/types.js';
import type { ObservedPod, ObservedState } from '../observe/types.js';
import type { ClusterCache } from '../observe/cluster-cache.js';
import { observe } from '../observe/index.js';
import type { InstanceSightings, ProviderLookup } from '../observe/cloud.js';
import type { MetricSightings } from '../observe/metrics.js';
import { executeActions, type ActionResult } from '../execute/execute.js';
import type { ActionDeps } from '../execute/actions.js';
import type { EventRecorder } from '../execute/events.js';
import type { InFlight } from '../execute/in-flight.js';
import type { EvictionPacer } from '../execute/pdb-pacer.js';
import { classifyError } from '../execute/classify.js';
import type { ServiceMetrics } from './metrics.js';
import type { NodeTiming } from '../plan/pace.js';
import type { Written } from '../kube/written.js';

/** What the service knows beyond the cluster and the commit, handed to the planner each round. */
export interface PlannerContext {
  /** The statuses the status branch holds (plan's published option); absent without a status branch. */
  readonly published?: readonly SpecStatus[];
  /** The nodes seen done so far, for the forecast's per-node times (observed-pace.ts). */
  readonly observedNodes?: readonly NodeTiming[];
  /** When this drydock's leadership began, in ms since the epoch (plan's actingSince option). */
  readonly actingSince?: number;
}

/** plan() with the service's options and what the service knows this round. */
export type Planner = (desired: DesiredState, observed: ObservedState, now: Date, context: PlannerContext) => Plan;

export interface ReconcileDeps {
  readonly cluster: ClusterCache;
  readonly providers: ProviderLookup;
  readonly planner: Planner;
  /** The nodes seen done so far (observed-pace.ts); none: the forecast uses its defaults. */
  readonly observedNodes?: () => readonly NodeTiming[];
  /** Read before the plan (a fleet's status branches); it reports its own failures. */
  readonly prepareRound?: (desired: DesiredState) => Promise<void>;
  /** Awaited after the plan, before its first action (the notifications' sent-log starts there). */
  readonly beforeActing?: (desired: DesiredState, plan: Plan) => Promise<void>;
  readonly actionDeps: ActionDeps;
  readonly events: EventRecorder;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  readonly now: () => Date;
  /** This process's first sighting of each instance (its age never predates it). */
  readonly sightings: InstanceSightings;
  /** This process's first sighting of each metric gate's breach (Prometheus does not say for a query). */
  readonly metricSightings?: MetricSightings;
  /** Checked before every action: false (leadership lost, shutting down) stops at once. */
  readonly mayAct: () => boolean;
  /** When this process's leadership began (ms since the epoch); a standby's is now. */
  readonly actingSince?: () => number;
  /** Drains left running past their round (execute/in-flight.ts); without it a round waits for them. */
  readonly inFlight?: InFlight;
  /** Evictions of one PDB one at a time across the drains (execute/pdb-pacer.ts); none: not paced. */
  readonly evictionPacer?: EvictionPacer;
  /**
   * The statuses the status branch holds, for the plan (an ended maintenance's record leaves
   * its node once the branch holds the ending); undefined without a status branch.
   */
  readonly published?: () => Promise<readonly SpecStatus[] | undefined>;
  /** Delay after a round that changed something, before looking again. */
  readonly settleMs: number;
  /** The longest sleep between rounds even when nothing is expected (cloud has no watch). */
  readonly resyncMs: number;
}

export interface ReconcileOutcome {
  readonly plan: Plan;
  readonly observed: ObservedState;
  readonly results: readonly ActionResult[];
  /** Milliseconds until the next round should run by itself. */
  readonly nextInMs: number;
  /** Transient failures this round (for backoff). */
  readonly transientFailures: number;
  /** The watched objects this round wrote, with their new versions (the next round waits to see them). */
  readonly written: readonly Written[];
}

export async function reconcileOnce(desired: DesiredState, deps: ReconcileDeps): Promise<ReconcileOutcome> {
  // Work of earlier rounds still running now is not in what this round observes.
  const takenWhenObserved = deps.inFlight?.nodes() ?? [];
  const observed = await observe(desired, deps.cluster, deps.providers, {
    log: deps.sightings,
    now: deps.now().getTime(),
    ...(deps.metricSightings !== undefined ? { metrics: deps.metricSightings } : {}),
  });
  await deps.prepareRound?.(desired);
  const published = await deps.published?.();
  const now = deps.now();
  const actingSince = deps.actingSince?.();
  const plan = deps.planner(desired, observed, now, {
    ...(published !== undefined ? { published } : {}),
    observedNodes: deps.observedNodes?.() ?? [],
    ...(actingSince !== undefined ? { actingSince } : {}),
  });
  let results: ActionResult[] = [];
  const written: Written[] = [];
  if (plan.actions.length > 0 && deps.mayAct()) {
    await deps.beforeActing?.(desired, plan);
    results = await executeActions(plan.actions, {
      ...deps.actionDeps,
      wrote: (w) => void written.push(w),
      logger: deps.logger,
      events: deps.events,
      now: deps.now,
      shouldContinue: deps.mayAct,
      ...(deps.inFlight ? { inFlight: deps.inFlight, takenWhenObserved } : {}),
      ...(deps.evictionPacer ? { evictions: { pacer: deps.evictionPacer, podOf: podsByName(observed) } } : {}),
      onResult: (r) => {
        deps.metrics.actions.inc({ action: r.action.kind, outcome: r.outcome.kind });
        if (r.outcome.kind === 'stalled' || r.outcome.kind === 'transient' || r.outcome.kind === 'waiting') {
          deps.metrics.errors.inc({ kind: r.outcome.kind, code: r.outcome.code });
        }
      },
    });
  }
  // What earlier rounds left running and has answered since is reported with this round.
  if (deps.inFlight) results = [...deps.inFlight.takeResults(), ...results];
  deps.metrics.observePlan(plan, observed);
  return {
    plan,
    observed,
    results,
    nextInMs: nextDelay(plan, observed, results, now, deps),
    transientFailures: results.filter((r) => r.outcome.kind === 'transient').length,
    written,
  };
}

/** A pod as this round observed it (its uid, the PDBs covering it as namespace/name keys), looked up by name. */
function podsByName(observed: ObservedState): (namespace: string, pod: string) => ObservedPod | { pdbs: [] } {
  let byPod: Map<string, ObservedPod> | undefined;
  return (namespace, pod) => {
    byPod ??= new Map(observed.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
    return byPod.get(`${namespace}/${pod}`) ?? { pdbs: [] };
  };
}

/** How often a rollout held by its metric gates asks Prometheus again. */
export const METRICS_POLL_MS = 5000;

/** When to look again, in ms: the earliest of every reason to. */
export function nextDelay(
  plan: Plan,
  observed: ObservedState,
  results: readonly ActionResult[],
  now: Date,
  deps: Pick<ReconcileDeps, 'settleMs' | 'resyncMs'>,
): number {
  let next = deps.resyncMs;
  const consider = (ms: number): void => {
    if (Number.isFinite(ms)) next = Math.min(next, Math.max(0, ms));
  };
  if (results.some((r) => r.outcome.kind === 'done')) consider(deps.settleMs);
  // Actions planned but not run (not leading, or stopped): look again soon.
  if (plan.actions.length > results.length) consider(deps.settleMs * 4);
  for (const r of results) {
    if (r.outcome.kind === 'waiting') consider(r.outcome.retryAfterSeconds * 1000);
    if (r.outcome.kind === 'transient') consider(1000);
  }
  for (const p of observed.problems) consider((p.retryAfterSeconds ?? 5) * 1000);
  if (plan.wakeAt) consider(Date.parse(plan.wakeAt) - now.getTime());
  // No watch says when an alert clears or Prometheus answers again: ask it again soon.
  if (plan.waits.some((w) => w.code === 'metrics' || w.code === 'halted') && observed.metrics !== undefined)
    consider(METRICS_POLL_MS);
  return next;
}

/** A round that failed outside of actions (observe or plan threw): classified like any error. */
export function roundError(err: unknown): { code: string; message: string; retryInMs: number } {
  const c = classifyError(err, 'reconcile');
  return { code: c.code, message: c.reason, retryInMs: c.kind === 'waiting' ? c.retryAfterSeconds * 1000 : 2000 };
}
