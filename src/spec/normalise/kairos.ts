/** operator.kairos.io/v1alpha1 (Kairos operator) documents → the model, with Kairos' defaults. */
import type { KairosNodeOpUpgradeDocument } from '../generated/kairos-node-op-upgrade.schema.js';
import type { KairosNodeOpDocument } from '../generated/kairos-node-op.schema.js';
import type { DrainOptions, LabelSelector, NodeOp, Spec } from '../model.js';
import type { NormaliseContext } from './context.js';
import { meta, raw, writtenNamespace } from './meta.js';
import { checkDrainNeedsCordon, KAIROS_DEFAULTS, KAIROS_DRAIN, nodeOpJob, nodeOpUpgrade } from './node-op.js';
import { checkSelector, labelSelector } from './rollout.js';

/** Older Kairos releases name nodes in targetNodes; that is a selector on the hostname label. */
function selector(ctx: NormaliseContext, spec: KairosNodeOpDocument['spec']): LabelSelector | undefined {
  const targets = spec.targetNodes ?? [];
  if (targets.length > 0 && spec.nodeSelector !== undefined) {
    ctx.report(
      'invalid-value',
      ['spec', 'targetNodes'],
      'targetNodes and nodeSelector cannot both be set',
      'keep one of them',
    );
  }
  if (targets.length > 0)
    return { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [...targets].sort() }] };
  checkSelector(ctx, ['spec', 'nodeSelector'], spec.nodeSelector);
  return labelSelector(spec.nodeSelector);
}

export function kNodeOp(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<KairosNodeOpDocument>(ctx.doc);
  const d = spec.drainOptions ?? {};
  checkDrainNeedsCordon(ctx, d.enabled, spec.cordon);
  const drain: DrainOptions = {
    ...KAIROS_DRAIN,
    enabled: d.enabled ?? KAIROS_DRAIN.enabled,
    force: d.force ?? KAIROS_DRAIN.force,
    ignoreDaemonSets: d.ignoreDaemonSets ?? KAIROS_DRAIN.ignoreDaemonSets,
    deleteEmptyDirData: d.deleteEmptyDirData ?? KAIROS_DRAIN.deleteEmptyDirData,
    // Kairos: a negative grace period means each pod's own.
    ...(d.gracePeriodSeconds !== undefined && d.gracePeriodSeconds >= 0
      ? { gracePeriodSeconds: d.gracePeriodSeconds }
      : {}),
    ...(d.timeoutSeconds !== undefined ? { timeoutSeconds: d.timeoutSeconds } : {}),
  };
  const nodeSelector = selector(ctx, spec);
  const concurrency = spec.concurrency ?? KAIROS_DEFAULTS.concurrency;
  const stopOnFailure = spec.stopOnFailure ?? KAIROS_DEFAULTS.stopOnFailure;
  const op: NodeOp = {
    ...meta(ctx.doc, 'NodeOp'),
    ...(nodeSelector !== undefined ? { nodeSelector } : {}),
    ...nodeOpJob(spec, drain),
    concurrency,
    stopOnFailure,
    // "The controller runs it once for that object": not on nodes that join later.
    followNewNodes: false,
    rollout: { ...ctx.rollout, concurrency, stopOnFailure, drain },
    ...writtenNamespace(ctx.doc),
  };
  return [op];
}

export function kNodeOpUpgrade(ctx: NormaliseContext): Spec[] {
  const specs = nodeOpUpgrade(ctx, raw<KairosNodeOpUpgradeDocument>(ctx.doc).spec, false);
  return specs.map((s) => (s.kind === 'NodeOpUpgrade' ? { ...s, ...writtenNamespace(ctx.doc) } : s));
}
