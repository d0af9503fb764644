/**
 * The run-wide steps around the nodes, one stage per round, each only once the one before is
 * observed done, so their order holds across restarts and the executor's lanes:
 *
 *   pause the target pools → label every node still to do with the rule labels → make the
 *   canary pool's nodeSelector leave out labelled nodes → the control plane runs the version
 *
 * and at the end (no node left to upgrade): unpause the pools drydock paused, take the rule
 * labels off every node. A pool drydock pauses carries drydock.dev/paused-by with the run, so
 * status names why it is paused and drydock never unpauses a pool a person paused.
 */
import type { ObservedNode, ObservedPool } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { LabelSelector, LabelSelectorRequirement } from '../../spec/model.js';
import type { PlanBuilder } from '../builder.js';
import type { SpecRef } from '../types.js';
import type { McoContext } from './context.js';

export function pausedByValue(run: string): string {
  return `MutexRunConfig/${run}`;
}

/** The canary's nodeSelector with a DoesNotExist term per rule label, or undefined when it has them. */
export function canarySelector(canary: ObservedPool, ruleLabels: readonly string[]): LabelSelector | undefined {
  const current = canary.nodeSelector ?? {};
  const expressions = current.matchExpressions ?? [];
  const has = (key: string): boolean => expressions.some((e) => e.key === key && e.operator === 'DoesNotExist');
  if (ruleLabels.every(has)) return undefined;
  const kept = expressions.filter((e) => !ruleLabels.includes(e.key));
  const ours: LabelSelectorRequirement[] = ruleLabels.map((key) => ({ key, operator: 'DoesNotExist' }));
  return { ...current, matchExpressions: [...kept, ...ours] };
}

/** Why new nodes may not be admitted yet, having written the next stage; undefined when ready. */
export function prepare(ctx: McoContext, toLabel: readonly ObservedNode[]): string | undefined {
  const { b, spec } = ctx;
  if (ctx.canary.paused)
    return `canary pool ${ctx.canary.name} is paused: unpause it (spec.paused: false) so the Machine Config Operator can upgrade the nodes admitted to it`;
  const unpaused = ctx.targets.filter((p) => !p.paused);
  for (const pool of unpaused)
    b.act({
      kind: 'patchPool',
      spec,
      pool: pool.name,
      paused: true,
      reason: `pause pool ${pool.name} for the upgrade to ${ctx.version}: its nodes go through canary pool ${ctx.canary.name} one at a time`,
    });
  if (unpaused.length > 0) return `pausing pool(s) ${unpaused.map((p) => p.name).join(', ')}`;
  const keys = Object.keys(ctx.ruleLabels);
  const unlabelled = toLabel.filter((n) => keys.some((k) => !(k in n.labels)));
  for (const n of unlabelled)
    b.act({
      kind: 'labelNode',
      spec,
      node: n.name,
      labels: ctx.ruleLabels,
      reason: `node ${n.name} waits for its turn out of canary pool ${ctx.canary.name} (its MutexRules run first)`,
    });
  if (unlabelled.length > 0) return `labelling ${unlabelled.length} node(s) with the MutexRules' labels`;
  const selector = canarySelector(ctx.canary, keys);
  if (selector !== undefined) {
    b.act({
      kind: 'patchPool',
      spec,
      pool: ctx.canary.name,
      nodeSelector: selector,
      reason: `canary pool ${ctx.canary.name} takes only nodes without the MutexRules' labels`,
    });
    return `making canary pool ${ctx.canary.name} leave out the nodes that wait`;
  }
  return undefined;
}

/** The end: pools this run paused are unpaused, and no node keeps a rule label. */
export function finish(
  b: PlanBuilder,
  spec: SpecRef,
  pools: readonly ObservedPool[],
  nodes: readonly ObservedNode[],
  ruleLabels: readonly string[],
): boolean {
  let acted = false;
  for (const pool of pools)
    if (pool.annotations[ANNOTATIONS.pausedBy] === pausedByValue(spec.name)) {
      acted = true;
      b.act({
        kind: 'patchPool',
        spec,
        pool: pool.name,
        paused: false,
        reason: `every node of pool ${pool.name} is upgraded; the pool is unpaused`,
      });
    }
  for (const n of nodes) {
    const left = ruleLabels.filter((k) => k in n.labels);
    if (left.length === 0) continue;
    acted = true;
    b.act({
      kind: 'labelNode',
      spec,
      node: n.name,
      labels: Object.fromEntries(left.map((k) => [k, null])),
      reason: `the upgrade is over: node ${n.name} no longer waits for its turn`,
    });
  }
  return acted;
}
