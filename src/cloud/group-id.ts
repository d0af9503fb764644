/**
 * Scaling-group id formats of every provider: recognising which provider an id belongs to
 * (so a ScalingGroup may leave `provider` out, as Constellation's do) and splitting an id into
 * its parts with an error that says which part is wrong and what it should look like.
 *
 * Kept free of runtime dependencies: the spec loader imports it.
 */
import type { Provider } from '../spec/model.js';
import { CodedError } from '../errors.js';

export type GroupIdParts =
  | {
      readonly provider: 'gcp';
      readonly project: string;
      /** A zonal or a regional managed instance group. */
      readonly scope: 'zone' | 'region';
      readonly location: string;
      readonly name: string;
    }
  | {
      readonly provider: 'azure';
      readonly subscriptionId: string;
      readonly resourceGroup: string;
      readonly name: string;
    }
  | {
      readonly provider: 'aws';
      readonly name: string;
      /** Present when the id is an Auto Scaling group ARN; absent for a plain group name. */
      readonly arn?: {
        readonly partition: string;
        readonly region: string;
        readonly accountId: string;
        readonly uuid: string;
      };
    }
  | { readonly provider: 'sim'; readonly name: string };

export interface GroupIdErrorData {
  readonly provider: Provider;
  readonly groupId: string;
  /** The part that is wrong (e.g. "project", "zone", "name"), or "format" for the whole id. */
  readonly part: string;
}

/** A groupId that does not fit its provider's format. */
export class GroupIdError extends CodedError<'InvalidGroupId', GroupIdErrorData> {
  override readonly name = 'GroupIdError';
  constructor(message: string, data: GroupIdErrorData) {
    super('InvalidGroupId', message, data);
  }
}

// Shapes only: which provider an id is written for. Parts are checked by parseGroupId.
const GCP_SHAPE = /^projects\/([^/]*)\/(zones|regions)\/([^/]*)\/instanceGroupManagers\/([^/]*)$/;
const AZURE_SHAPE =
  /^\/subscriptions\/([^/]*)\/resourceGroups\/([^/]*)\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/([^/]*)$/i;
const AWS_ARN_SHAPE = /^arn:([^:]*):autoscaling:([^:]*):([^:]*):autoScalingGroup:([^:]*):autoScalingGroupName\/(.*)$/;

const GCP_FORMAT = 'projects/<project>/zones/<zone>/instanceGroupManagers/<name> (or regions/<region>)';
const AZURE_FORMAT =
  '/subscriptions/<subscription id>/resourceGroups/<resource group>/providers/Microsoft.Compute/virtualMachineScaleSets/<name>';
const AWS_FORMAT =
  'an Auto Scaling group name or arn:aws:autoscaling:<region>:<account>:autoScalingGroup:<uuid>:autoScalingGroupName/<name>';
const SIM_FORMAT = 'a DNS label: lowercase letters, digits and "-", at most 40 characters, e.g. "workers"';

/** Format of each provider's groupId, for hints. */
export const GROUP_ID_FORMATS = {
  gcp: GCP_FORMAT,
  azure: AZURE_FORMAT,
  aws: AWS_FORMAT,
  sim: SIM_FORMAT,
} as const satisfies Record<Provider, string>;

/**
 * The provider whose format `groupId` is written in, or undefined when the format names none
 * (a plain name may be an AWS Auto Scaling group or a sim group; the spec must say which).
 */
export function inferProvider(groupId: string): Provider | undefined {
  if (GCP_SHAPE.test(groupId)) return 'gcp';
  if (AZURE_SHAPE.test(groupId)) return 'azure';
  if (AWS_ARN_SHAPE.test(groupId)) return 'aws';
  return undefined;
}

// RFC 1035 label, the rule GCP applies to instance group manager names.
const RFC1035 = /^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
// 6-30 characters; legacy domain-scoped projects carry a "domain:" prefix.
const GCP_PROJECT = /^(?:[a-z0-9][-a-z0-9.]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$/;
const GCP_ZONE = /^[a-z]+(?:-[a-z]+)*\d+-[a-z]$/;
const GCP_REGION = /^[a-z]+(?:-[a-z]+)*\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Letters, digits, "_", "-", ".", "(", ")"; 1-90 characters; not ending in ".".
const AZURE_RESOURCE_GROUP = /^[-\w.()]{0,89}[-\w()]$/u;
// Letters, digits, "_", "-", "."; 1-64 characters; starts with a letter or digit, no trailing "." or "-".
const AZURE_VMSS = /^[A-Za-z0-9](?:[-\w.]{0,62}[A-Za-z0-9_])?$/;
const AWS_PARTITION = /^aws(?:-[a-z]+)*$/;
const AWS_REGION = /^[a-z]{2}(?:-[a-z]+)+-\d+$/;
const AWS_ACCOUNT = /^\d{12}$/;
// Any printable characters except ":" (which would break the group's ARN), 1-255.
const AWS_NAME = /^[^\p{Cc}:]{1,255}$/u;
const SIM_NAME = /^[a-z0-9](?:[-a-z0-9]{0,38}[a-z0-9])?$/;

/**
 * Splits `groupId` into its parts for `provider`; throws GroupIdError naming the wrong part,
 * the id and the expected format.
 */
export function parseGroupId(provider: Provider, groupId: string): GroupIdParts {
  const fail = (part: string, problem: string, format: string): never => {
    throw new GroupIdError(`${provider} groupId ${JSON.stringify(groupId)}: ${problem}; expected ${format}`, {
      provider,
      groupId,
      part,
    });
  };
  if (typeof groupId !== 'string' || groupId.trim() === '') {
    return fail('format', 'is empty', GROUP_ID_FORMATS[provider]);
  }
  if (groupId !== groupId.trim()) {
    return fail('format', 'has leading or trailing whitespace', GROUP_ID_FORMATS[provider]);
  }
  const inferred = inferProvider(groupId);
  if (inferred !== undefined && inferred !== provider) {
    return fail(
      'format',
      `is written in ${inferred}'s format; set provider: ${inferred} or use a ${provider} id`,
      GROUP_ID_FORMATS[provider],
    );
  }

  switch (provider) {
    case 'gcp': {
      const m = GCP_SHAPE.exec(groupId);
      if (!m) return fail('format', 'is not an instance group manager path', GCP_FORMAT);
      const [, project = '', kind, location = '', name = ''] = m;
      const scope = kind === 'zones' ? 'zone' : 'region';
      if (!GCP_PROJECT.test(project)) {
        fail(
          'project',
          `project ${JSON.stringify(project)} is not a project id (6-30 lowercase letters, digits, "-")`,
          GCP_FORMAT,
        );
      }
      if (!(scope === 'zone' ? GCP_ZONE : GCP_REGION).test(location)) {
        const example = scope === 'zone' ? 'europe-west3-a' : 'europe-west3';
        fail(scope, `${scope} ${JSON.stringify(location)} is not a ${scope} name like ${example}`, GCP_FORMAT);
      }
      if (!RFC1035.test(name)) {
        fail(
          'name',
          `name ${JSON.stringify(name)} is not a lowercase RFC 1035 name (letters, digits, "-", at most 63)`,
          GCP_FORMAT,
        );
      }
      return { provider, project, scope, location, name };
    }
    case 'azure': {
      const m = AZURE_SHAPE.exec(groupId);
      if (!m) return fail('format', 'is not a virtual machine scale set resource id', AZURE_FORMAT);
      const [, subscriptionId = '', resourceGroup = '', name = ''] = m;
      if (!UUID.test(subscriptionId)) {
        fail('subscription', `subscription ${JSON.stringify(subscriptionId)} is not a GUID`, AZURE_FORMAT);
      }
      if (!AZURE_RESOURCE_GROUP.test(resourceGroup)) {
        fail(
          'resourceGroup',
          `resource group ${JSON.stringify(resourceGroup)} must be 1-90 letters, digits, "_", "-", ".", "(", ")" and not end in "."`,
          AZURE_FORMAT,
        );
      }
      if (!AZURE_VMSS.test(name)) {
        fail(
          'name',
          `scale set name ${JSON.stringify(name)} must be 1-64 letters, digits, "_", "-", "." starting with a letter or digit`,
          AZURE_FORMAT,
        );
      }
      return { provider, subscriptionId, resourceGroup, name };
    }
    case 'aws': {
      if (groupId.startsWith('arn:')) {
        const m = AWS_ARN_SHAPE.exec(groupId);
        if (!m) return fail('format', 'is not an Auto Scaling group ARN', AWS_FORMAT);
        const [, partition = '', region = '', accountId = '', uuid = '', name = ''] = m;
        if (!AWS_PARTITION.test(partition))
          fail('partition', `partition ${JSON.stringify(partition)} is not aws, aws-cn, aws-us-gov, …`, AWS_FORMAT);
        if (!AWS_REGION.test(region))
          fail('region', `region ${JSON.stringify(region)} is not a region like eu-central-1`, AWS_FORMAT);
        if (!AWS_ACCOUNT.test(accountId))
          fail('account', `account ${JSON.stringify(accountId)} is not 12 digits`, AWS_FORMAT);
        if (!UUID.test(uuid)) fail('uuid', `group uuid ${JSON.stringify(uuid)} is not a UUID`, AWS_FORMAT);
        if (!AWS_NAME.test(name))
          fail('name', `name ${JSON.stringify(name)} must be 1-255 printable characters without ":"`, AWS_FORMAT);
        return { provider, name, arn: { partition, region, accountId, uuid } };
      }
      if (groupId.includes('/') && (groupId.startsWith('projects/') || groupId.startsWith('/subscriptions/'))) {
        return fail('format', 'looks like a GCP or Azure path with a part missing', AWS_FORMAT);
      }
      if (!AWS_NAME.test(groupId)) {
        fail('name', 'must be 1-255 printable characters without ":"', AWS_FORMAT);
      }
      return { provider, name: groupId };
    }
    case 'sim': {
      if (!SIM_NAME.test(groupId)) fail('name', 'is not a sim group name', SIM_FORMAT);
      return { provider, name: groupId };
    }
  }
}
