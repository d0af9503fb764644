/**
 * Rollout policy and drain options: built-in defaults, drydock.yaml's defaults over them, and
 * a spec's own fields over those. Raw shapes come from the generated schema types.
 */
import type { DrainSpec, LabelSelectorSpec, RolloutSpec } from '../generated/common.schema.js';
import type { DrainOptions, IntOrPercent, LabelSelector, RolloutPolicy } from '../model.js';
import type { PathSegment } from '../parse.js';
import type { NormaliseContext } from './context.js';
import { metricGates } from './metric-gates.js';
import { durationSeconds, intOrPercent } from './values.js';

/** drydock's own defaults: one node at a time, surge first, halt on the first failure. */
export const BUILTIN_DRAIN: DrainOptions = {
  enabled: true,
  force: false,
  ignoreDaemonSets: true,
  deleteEmptyDirData: true,
  timeoutSeconds: 600,
  onTimeout: 'halt',
};

export const BUILTIN_ROLLOUT: RolloutPolicy = {
  maxSurge: 1,
  maxUnavailable: 1,
  concurrency: 1,
  order: 'controlPlaneFirst',
  stopOnFailure: true,
  joinTimeoutSeconds: 900,
  drain: BUILTIN_DRAIN,
  healthGate: { minReadySeconds: 30 },
  approval: { required: 'none' },
};

export function labelSelector(raw: LabelSelectorSpec | undefined): LabelSelector | undefined {
  if (raw === undefined) return undefined;
  const out: { matchLabels?: Record<string, string>; matchExpressions?: LabelSelector['matchExpressions'] } = {};
  if (raw.matchLabels && Object.keys(raw.matchLabels).length > 0) out.matchLabels = { ...raw.matchLabels };
  if (raw.matchExpressions && raw.matchExpressions.length > 0) {
    out.matchExpressions = raw.matchExpressions.map((r) =>
      r.values === undefined
        ? { key: r.key, operator: r.operator }
        : { key: r.key, operator: r.operator, values: [...r.values] },
    );
  }
  return out;
}

/** Checks what the schema cannot: In/NotIn need values, Exists/DoesNotExist must have none. */
export function checkSelector(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  raw: LabelSelectorSpec | undefined,
): void {
  raw?.matchExpressions?.forEach((r, i) => {
    const needs = r.operator === 'In' || r.operator === 'NotIn';
    const has = (r.values?.length ?? 0) > 0;
    if (needs && !has)
      ctx.report(
        'invalid-value',
        [...path, 'matchExpressions', i],
        `operator ${r.operator} needs at least one value`,
        'add values: [...]',
      );
    if (!needs && has)
      ctx.report(
        'invalid-value',
        [...path, 'matchExpressions', i, 'values'],
        `operator ${r.operator} takes no values`,
        'remove values',
      );
  });
}

export function mergeDrain(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  base: DrainOptions,
  raw: DrainSpec | undefined,
): DrainOptions {
  if (raw === undefined) return base;
  checkSelector(ctx, [...path, 'podSelector'], raw.podSelector);
  const podSelector = raw.podSelector !== undefined ? labelSelector(raw.podSelector) : base.podSelector;
  const gracePeriodSeconds = raw.gracePeriodSeconds ?? base.gracePeriodSeconds;
  const timeoutSeconds = raw.timeoutSeconds ?? base.timeoutSeconds;
  return {
    enabled: raw.enabled ?? base.enabled,
    force: raw.force ?? base.force,
    ignoreDaemonSets: raw.ignoreDaemonSets ?? base.ignoreDaemonSets,
    deleteEmptyDirData: raw.deleteEmptyDirData ?? base.deleteEmptyDirData,
    onTimeout: raw.onTimeout ?? base.onTimeout,
    ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    ...(podSelector !== undefined ? { podSelector } : {}),
  };
}

const isZero = (v: IntOrPercent): boolean => v === 0 || v === '0%';

/**
 * No surge and no unavailability is a rollout that can never take a step; Kubernetes refuses
 * the same for a Deployment. Reported at whichever of the two this rollout wrote.
 */
function checkCanProgress(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  raw: RolloutSpec,
  maxSurge: IntOrPercent,
  maxUnavailable: IntOrPercent,
): void {
  if (!isZero(maxSurge) || !isZero(maxUnavailable)) return;
  const field = raw.maxUnavailable !== undefined ? 'maxUnavailable' : 'maxSurge';
  ctx.report(
    'invalid-value',
    [...path, field],
    'maxSurge and maxUnavailable are both 0: the rollout could never replace or take down a node',
    'allow at least one: maxSurge: 1 (a new node first) or maxUnavailable: 1',
  );
}

function mergeHealthGate(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  base: RolloutPolicy['healthGate'],
  raw: RolloutSpec['healthGate'],
): RolloutPolicy['healthGate'] {
  const timeout =
    raw?.timeout !== undefined ? durationSeconds(ctx, [...path, 'timeout'], raw.timeout) : base.timeoutSeconds;
  return {
    minReadySeconds: raw?.minReadySeconds ?? base.minReadySeconds,
    ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}),
  };
}

/**
 * The failure budget `raw` leaves in force: its own maxFailures; else none when it writes
 * stopOnFailure (the nearer statement wins over an inherited budget); else the base's.
 */
function mergeMaxFailures(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  base: RolloutPolicy,
  raw: Pick<RolloutSpec, 'maxFailures' | 'stopOnFailure'>,
): IntOrPercent | undefined {
  if (raw.maxFailures === undefined) return raw.stopOnFailure !== undefined ? undefined : base.maxFailures;
  const value = intOrPercent(ctx, [...path, 'maxFailures'], raw.maxFailures);
  if (value !== undefined) checkFailureBudget(ctx, path, value, raw.stopOnFailure, 'stopOnFailure');
  return value;
}

/**
 * maxFailures 0 could never start a node; stopOnFailure written beside it must say the same
 * (true is maxFailures 1), or one of the two would be silently ignored. `stopPath` names where
 * stopOnFailure is written (a NodeOp's is spec.stopOnFailure).
 */
export function checkFailureBudget(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  maxFailures: IntOrPercent,
  stopOnFailure: boolean | undefined,
  stopPath: string,
): void {
  if (maxFailures === 0 || maxFailures === '0%') {
    ctx.report(
      'invalid-value',
      [...path, 'maxFailures'],
      'maxFailures 0 halts before the first failure could be counted',
      'write 1 to halt at the first failed node (as stopOnFailure: true), or more to go on after some failures',
    );
    return;
  }
  if (stopOnFailure === undefined || (stopOnFailure && maxFailures === 1)) return;
  const says = stopOnFailure ? 'halt at the first failed node (maxFailures 1)' : 'never halt for failed nodes';
  ctx.report(
    'invalid-value',
    [...path, 'maxFailures'],
    `maxFailures ${String(maxFailures)} disagrees with ${stopPath}: ${String(stopOnFailure)}, which says ${says}`,
    `keep one of the two: maxFailures replaces ${stopPath} (${stopPath}: true is maxFailures: 1)`,
  );
}

/** `raw` (a spec's rollout, or drydock.yaml's defaults.rollout) over `base`. */
export function mergeRollout(
  ctx: NormaliseContext,
  path: readonly PathSegment[],
  base: RolloutPolicy,
  raw: RolloutSpec | undefined,
): RolloutPolicy {
  if (raw === undefined) return base;
  const at = (...p: PathSegment[]): PathSegment[] => [...path, ...p];
  const maxSurge = raw.maxSurge !== undefined ? intOrPercent(ctx, at('maxSurge'), raw.maxSurge) : undefined;
  const maxUnavailable =
    raw.maxUnavailable !== undefined ? intOrPercent(ctx, at('maxUnavailable'), raw.maxUnavailable) : undefined;
  const joinTimeout =
    raw.joinTimeout !== undefined ? durationSeconds(ctx, at('joinTimeout'), raw.joinTimeout) : undefined;
  let canary = base.canary;
  if (raw.canary !== undefined) {
    const soak =
      raw.canary.soak !== undefined ? durationSeconds(ctx, at('canary', 'soak'), raw.canary.soak) : undefined;
    canary = { nodes: raw.canary.nodes, soakSeconds: soak ?? base.canary?.soakSeconds ?? 0 };
  }
  const window = raw.window ?? base.window;
  const gates = raw.metricGates !== undefined ? metricGates(ctx, at('metricGates'), raw.metricGates) : base.metricGates;
  const maxFailures = mergeMaxFailures(ctx, path, base, raw);
  const keepCordoned = (raw.onFailure ?? base.onFailure) === 'keepCordoned';
  checkCanProgress(ctx, path, raw, maxSurge ?? base.maxSurge, maxUnavailable ?? base.maxUnavailable);
  return {
    maxSurge: maxSurge ?? base.maxSurge,
    maxUnavailable: maxUnavailable ?? base.maxUnavailable,
    concurrency: raw.concurrency ?? base.concurrency,
    order: raw.order ?? base.order,
    stopOnFailure: raw.stopOnFailure ?? base.stopOnFailure,
    joinTimeoutSeconds: joinTimeout ?? base.joinTimeoutSeconds,
    drain: mergeDrain(ctx, at('drain'), base.drain, raw.drain),
    healthGate: mergeHealthGate(ctx, at('healthGate'), base.healthGate, raw.healthGate),
    approval: { required: raw.approval?.required ?? base.approval.required },
    ...(canary !== undefined ? { canary } : {}),
    ...(window !== undefined ? { window } : {}),
    ...(gates !== undefined ? { metricGates: gates } : {}),
    ...(maxFailures !== undefined ? { maxFailures } : {}),
    ...(keepCordoned ? { onFailure: 'keepCordoned' as const } : {}),
  };
}
