/**
 * How a replace rollout counts a node's failure: on the old node (drydock.dev/failures), which
 * becomes Failed, holding its lock with a reason, when the failure is final; and a failed gate
 * (a Job, or workloads that did not come back), which uncordons the node unless onFailure keeps it.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { failureBudgetHalt, failureBudgetText, outcomeEffect, type NodeOutcome } from '../outcome.js';
import type { SpecStatus } from '../types.js';
import type { RolloutContext } from './context.js';
import type { Decided, Tally } from './tally.js';

/**
 * Counts a failure on the old node (drydock.dev/failures). The node becomes Failed, holding
 * its lock with a reason, when the outcome is final (`failed` or `halted`, outcome.ts), under
 * stopOnFailure (without a failure budget), or after maxAttempts; otherwise the step is tried
 * again. A node Failed for good counts against maxFailures.
 */
export function fail(
  ctx: RolloutContext,
  node: ObservedNode,
  reason: string,
  extra: Record<string, string | null>,
  outcome?: Exclude<NodeOutcome, 'skipped'>,
): Decided {
  const failures = ctx.view.stateOf(node).failures + 1;
  const effect = outcomeEffect(ctx.image.rollout, outcome ?? 'failed');
  const { rollout } = ctx.image;
  const final =
    outcome !== undefined ||
    (rollout.maxFailures === undefined && rollout.stopOnFailure) ||
    failures >= ctx.options.maxAttempts;
  ctx.b.act({
    kind: 'annotateNode',
    spec: ctx.spec,
    node: node.name,
    annotations: {
      ...extra,
      [ANNOTATIONS.failures]: String(failures),
      [ANNOTATIONS.phaseSince]: ctx.nowIso,
      ...(final ? { [ANNOTATIONS.phase]: effect.phase, [ANNOTATIONS.reason]: reason, ...effect.annotations } : {}),
    },
    reason: `${node.name}: ${reason}`,
  });
  ctx.b.note(
    ctx.spec,
    `${node.name}: ${reason}${final ? '' : ` (attempt ${failures} of ${ctx.options.maxAttempts})`}`,
    node.name,
  );
  const what = `${node.name}: ${reason}`;
  return {
    failures: 1,
    message: reason,
    lastError: what,
    ...(final && effect.phase === 'Failed' ? { failed: node.name } : {}),
    ...(effect.halts ? { halt: what } : {}),
  };
}

/** The tally halted by the failure budget (rollout.maxFailures) when its Failed nodes reach it. */
export function withFailureBudget(ctx: RolloutContext, tally: Tally): Tally {
  if (tally.haltReason !== undefined) return tally;
  const halt = failureBudgetHalt(ctx.image.rollout, tally.failedNodes, ctx.entries.length);
  return halt === undefined ? tally : { ...tally, haltReason: halt };
}

/** The status with its failure budget's count, when rollout.maxFailures is given. */
export function withFailureCount(ctx: RolloutContext, tally: Tally, status: SpecStatus): SpecStatus {
  const text = failureBudgetText(ctx.image.rollout, tally.failedNodes.length, ctx.entries.length);
  return text === undefined ? status : { ...status, failureBudget: text };
}

/**
 * drain.onTimeout skipNode: the old node is given back (uncordoned if drydock cordoned it) and
 * marked Skipped; no failure is counted and the rollout moves on. Its replacement, already
 * Ready and marked, stays claimed by it until a person or a new revision decides.
 */
export function skip(ctx: RolloutContext, node: ObservedNode, reason: string): Decided {
  const effect = outcomeEffect(ctx.image.rollout, 'skipped');
  if (effect.uncordon && ctx.view.stateOf(node).cordonedByUs)
    ctx.b.act({ kind: 'uncordon', spec: ctx.spec, node: node.name, reason: `${node.name}: ${reason}` });
  ctx.b.act({
    kind: 'annotateNode',
    spec: ctx.spec,
    node: node.name,
    annotations: {
      [ANNOTATIONS.cordoned]: null,
      [ANNOTATIONS.phaseSince]: ctx.nowIso,
      [ANNOTATIONS.phase]: effect.phase,
      [ANNOTATIONS.reason]: reason,
      ...effect.annotations,
    },
    reason: `${node.name}: ${reason}`,
  });
  ctx.b.note(ctx.spec, `${node.name}: ${reason}; the rollout moves on without it`, node.name);
  return { message: reason };
}

/**
 * A gate Job failed, or the evicted workloads did not come back: the node fails (named with
 * the Job, if any), and is uncordoned unless onFailure keeps it.
 */
export function gateFailed(ctx: RolloutContext, node: ObservedNode, gate: { reason: string; job?: string }): Decided {
  const keep = !outcomeEffect(ctx.image.rollout, 'failed').uncordon;
  if (!keep && ctx.view.stateOf(node).keptCordoned)
    ctx.b.act({ kind: 'uncordon', spec: ctx.spec, node: node.name, reason: `${node.name}: ${gate.reason}` });
  return fail(
    ctx,
    node,
    gate.reason,
    {
      ...(gate.job !== undefined ? { [ANNOTATIONS.job]: gate.job } : {}),
      ...(keep ? {} : { [ANNOTATIONS.cordoned]: null }),
    },
    'failed',
  );
}
