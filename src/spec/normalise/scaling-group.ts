/**
 * A ScalingGroup's provider: given, or read off the groupId's format (Constellation's
 * ScalingGroups have no provider field), and the groupId checked against that provider.
 */
import { GroupIdError, GROUP_ID_FORMATS, inferProvider, parseGroupId } from '../../cloud/group-id.js';
import type { NodeRole, Provider, ScalingGroup } from '../model.js';
import type { NormaliseContext } from './context.js';
import { meta } from './meta.js';

export interface ScalingGroupFields {
  readonly provider?: Provider;
  readonly groupId: string;
  readonly nodeImage: string;
  readonly role: NodeRole;
  readonly autoscaling: boolean | undefined;
  /** Seed documents cannot name a provider, so the hint differs. */
  readonly seed: boolean;
}

/**
 * A plain name in Constellation's own ScalingGroup is an AWS Auto Scaling group: that is how
 * Constellation on AWS writes it (GCP and Azure ids carry their path), and the sim cloud is
 * drydock's, never Constellation's.
 */
function seedProvider(f: ScalingGroupFields): Provider | undefined {
  return f.seed ? 'aws' : undefined;
}

export function scalingGroup(ctx: NormaliseContext, f: ScalingGroupFields): ScalingGroup | undefined {
  const provider = f.provider ?? inferProvider(f.groupId) ?? seedProvider(f);
  if (provider === undefined) {
    ctx.report(
      'ambiguous-provider',
      ['spec', 'groupId'],
      `cannot tell the cloud from groupId ${JSON.stringify(f.groupId)}`,
      f.seed
        ? "a plain name may be an AWS Auto Scaling group or a sim group; write this ScalingGroup as apiVersion: drydock.dev/v1alpha1 with provider: aws or provider: sim, or use the group's full GCP path, Azure id or AWS ARN"
        : `add provider: sim or provider: aws (a plain name could be either); GCP and Azure ids name their cloud: ${GROUP_ID_FORMATS.gcp}, ${GROUP_ID_FORMATS.azure}`,
    );
    return undefined;
  }
  try {
    parseGroupId(provider, f.groupId);
  } catch (err) {
    if (!(err instanceof GroupIdError)) throw err;
    ctx.report(
      'invalid-group-id',
      ['spec', 'groupId'],
      err.message,
      `write the ${provider} group's id as ${GROUP_ID_FORMATS[provider]}`,
    );
    return undefined;
  }
  return {
    ...meta(ctx.doc, 'ScalingGroup'),
    provider,
    groupId: f.groupId,
    nodeImage: f.nodeImage,
    role: f.role,
    ...(f.autoscaling !== undefined ? { autoscaling: f.autoscaling } : {}),
  };
}
