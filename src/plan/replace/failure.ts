/**
 * How a replace rollout counts a node's failure: on the old node (drydock.dev/failures), which
 * becomes Failed, holding its lock with a reason, when the failure is final; and a failed gate
 * (a Job, or workloads that did not come back), which uncordons the node unless onFailure keeps it.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { failureCount } from '../protocol.js';
import type { RolloutContext } from './context.js';

/**
 * Counts a failure on the old node (drydock.dev/failures). The node becomes Failed, holding
 * its lock with a reason, when `final` says so, under stopOnFailure, or after maxAttempts.
 */
export function fail(
  ctx: RolloutContext,
  node: ObservedNode,
  reason: string,
  extra: Record<string, string | null>,
  final = false,
): void {
  const failures = failureCount(node) + 1;
  final ||= ctx.image.rollout.stopOnFailure || failures >= ctx.options.maxAttempts;
  ctx.round.failures++;
  ctx.b.act({
    kind: 'annotateNode',
    spec: ctx.spec,
    node: node.name,
    annotations: {
      ...extra,
      [ANNOTATIONS.failures]: String(failures),
      [ANNOTATIONS.phaseSince]: ctx.nowIso,
      ...(final ? { [ANNOTATIONS.phase]: 'Failed', [ANNOTATIONS.reason]: reason } : {}),
    },
    reason: `${node.name}: ${reason}`,
  });
  ctx.round.nodeMessages.set(node.name, reason);
  ctx.round.lastError ??= `${node.name}: ${reason}`;
  ctx.b.note(
    ctx.spec,
    `${node.name}: ${reason}${final ? '' : ` (attempt ${failures} of ${ctx.options.maxAttempts})`}`,
    node.name,
  );
  if (ctx.image.rollout.stopOnFailure) ctx.round.haltReason ??= `${node.name}: ${reason}`;
}

/**
 * A gate Job failed, or the evicted workloads did not come back: the node fails (named with
 * the Job, if any), and is uncordoned unless onFailure keeps it.
 */
export function gateFailed(ctx: RolloutContext, node: ObservedNode, gate: { reason: string; job?: string }): void {
  const keep = ctx.image.rollout.onFailure === 'keepCordoned';
  if (!keep && node.unschedulable && node.annotations[ANNOTATIONS.cordoned] === 'true')
    ctx.b.act({ kind: 'uncordon', spec: ctx.spec, node: node.name, reason: `${node.name}: ${gate.reason}` });
  fail(
    ctx,
    node,
    gate.reason,
    {
      ...(gate.job !== undefined ? { [ANNOTATIONS.job]: gate.job } : {}),
      ...(keep ? {} : { [ANNOTATIONS.cordoned]: null }),
    },
    true,
  );
}
