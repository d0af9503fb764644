/** update.edgeless.systems/v1alpha1 (Constellation node operator) documents → the model. */
import type { EdgelessAutoscalingStrategyDocument } from '../generated/edgeless-autoscaling-strategy.schema.js';
import type { EdgelessNodeImageDocument } from '../generated/edgeless-node-image.schema.js';
import type { EdgelessScalingGroupDocument } from '../generated/edgeless-scaling-group.schema.js';
import type { AutoscalingStrategy, NodeImage, Spec } from '../model.js';
import type { NormaliseContext } from './context.js';
import { meta, raw } from './meta.js';
import { scalingGroup } from './scaling-group.js';

/** Constellation replaces outdated nodes with new ones: strategy replace, the repo's rollout. */
export function eNodeImage(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<EdgelessNodeImageDocument>(ctx.doc);
  const image: NodeImage = {
    ...meta(ctx.doc, 'NodeImage'),
    image: spec.image,
    strategy: 'replace',
    rollout: ctx.rollout,
  };
  return [image];
}

export function eScalingGroup(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<EdgelessScalingGroupDocument>(ctx.doc);
  const sg = scalingGroup(ctx, {
    groupId: spec.groupId,
    nodeImage: spec.nodeImage,
    role: spec.role === 'ControlPlane' ? 'control-plane' : 'worker',
    autoscaling: spec.autoscaling,
    seed: true,
  });
  return sg ? [sg] : [];
}

export function eAutoscalingStrategy(ctx: NormaliseContext): Spec[] {
  const { spec } = raw<EdgelessAutoscalingStrategyDocument>(ctx.doc);
  const s: AutoscalingStrategy = {
    ...meta(ctx.doc, 'AutoscalingStrategy'),
    enabled: spec.enabled,
    deploymentName: spec.deploymentName,
    deploymentNamespace: spec.deploymentNamespace,
  };
  return [s];
}
