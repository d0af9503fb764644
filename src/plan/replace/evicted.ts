/**
 * The evicted-workloads half of a replace rollout's health gate (health.ts holds the shared
 * check). A replacement's own gate (it and its pods Ready) passes before the old node is
 * drained, so it cannot see what the drain moves; and the old node, where in-place kinds keep
 * the record, is deleted once it is drained. So the record is written on the old node when it
 * is cordoned (what runs there then is what the drain moves), and read after its drain, before
 * its instance and Node are removed: until the evicted Deployments and StatefulSets are back at
 * their desired ready replicas the old node stays (Verifying) and in flight, so the next node
 * waits. healthGate.timeout counts from the end of the drain, when Verifying was entered.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { workloadsOf, workloadShort } from '../health.js';
import { podsOn } from '../view.js';
import { since as phaseSince, type RolloutContext } from './context.js';

/**
 * The record to write with the cordon: the workloads with pods on the node now. Written as ''
 * over an older record (a node failed and released under another revision), left out when
 * there is neither, so a rollout of workload-less nodes writes nothing more.
 */
export function evictedRecord(ctx: RolloutContext, node: ObservedNode): Record<string, string> {
  const workloads = workloadsOf(podsOn(ctx.view, node.name));
  return workloads !== '' || node.annotations[ANNOTATIONS.evicted] !== undefined
    ? { [ANNOTATIONS.evicted]: workloads }
    : {};
}

export type EvictedResult =
  { readonly kind: 'back' } | { readonly kind: 'waiting' } | { readonly kind: 'failed'; readonly reason: string };

/** Whether the workloads evicted from the drained `node` are back; waits (or times out) when not. */
export function evictedBack(ctx: RolloutContext, node: ObservedNode, verifying: boolean): EvictedResult {
  const short = workloadShort(ctx.view, node.annotations[ANNOTATIONS.evicted]);
  if (short === undefined) return { kind: 'back' };
  const limit = ctx.image.rollout.healthGate.timeoutSeconds;
  const since = verifying ? phaseSince(ctx, node) : ctx.now;
  const deadline = limit !== undefined ? since + limit * 1000 : undefined;
  if (deadline !== undefined && deadline <= ctx.now)
    return {
      kind: 'failed',
      reason: `the workloads evicted from ${node.name} were not back within the health gate's ${limit ?? 0}s (${short})`,
    };
  if (!verifying)
    ctx.b.act({
      kind: 'annotateNode',
      spec: ctx.spec,
      node: node.name,
      annotations: { [ANNOTATIONS.phase]: 'Verifying', [ANNOTATIONS.phaseSince]: ctx.nowIso },
      reason: `${node.name} is drained; it stays until the workloads evicted from it are back`,
    });
  ctx.b.wait(ctx.spec, 'health', `${node.name} is drained; health gate: ${short}`, {
    node: node.name,
    ...(deadline !== undefined ? { until: deadline } : {}),
  });
  return { kind: 'waiting' };
}
