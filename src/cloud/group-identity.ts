/**
 * Which cloud group a groupId names, compared as the cloud compares ids, so that two
 * ScalingGroups written differently for one group are caught as the duplicate they are.
 *
 * - Azure resource ids are case-insensitive throughout (ARM matches subscription, resource
 *   group, provider namespace and name without regard to case).
 * - GCP ids are case-sensitive, and parseGroupId already holds every part to lowercase; the
 *   identity is the parts, so only the same project, location and name compare equal.
 * - An AWS Auto Scaling group is named uniquely within an account and region, and drydock's
 *   AWS provider works in one of each: a plain name and an ARN ending in that name are one
 *   group. Names are case-sensitive.
 */
import type { Provider } from '../spec/model.js';
import { GroupIdError, parseGroupId } from './group-id.js';

/** A key equal for two ids exactly when they name the same group of `provider`. */
export function groupIdentity(provider: Provider, groupId: string): string {
  let parts;
  try {
    parts = parseGroupId(provider, groupId);
  } catch (err) {
    if (!(err instanceof GroupIdError)) throw err;
    return `${provider}:${groupId}`;
  }
  switch (parts.provider) {
    case 'azure':
      return `azure:${parts.subscriptionId}/${parts.resourceGroup}/${parts.name}`.toLowerCase();
    case 'gcp':
      return `gcp:${parts.project}/${parts.scope}/${parts.location}/${parts.name}`;
    case 'aws':
      return `aws:${parts.name}`;
    case 'sim':
      return `sim:${parts.name}`;
  }
}
