/**
 * AWS Auto Scaling groups with launch templates, through the AWS SDK for JavaScript v3.
 *
 * - image: the AMI of the group's launch-template version; setGroupImage creates a new version
 *   (copied from the current one, ImageId replaced) and makes it the group's version;
 * - surge: SetDesiredCapacity; the group launches the instances on its own, so addCapacity
 *   resolves to no ids (the planner claims new instances in a later round, as it does when a
 *   surge's ids were lost);
 * - removal: TerminateInstanceInAutoScalingGroup with ShouldDecrementDesiredCapacity.
 *
 * Credentials and region come from the SDK's default chain (an IAM role for the service
 * account in EKS, instance profile, AWS_* variables); a groupId given as an ARN names its region.
 */
import type {
  AutoScalingClient,
  AutoScalingClientConfig,
  AutoScalingGroup,
  LaunchTemplateSpecification,
} from '@aws-sdk/client-auto-scaling';
import type { EC2Client, Instance as Ec2Instance } from '@aws-sdk/client-ec2';
import { parseGroupId } from '../group-id.js';
import {
  CloudError,
  type CloudErrorData,
  type CloudProvider,
  type GroupDescription,
  type Instance,
  type InstanceState,
} from '../provider.js';
import { byId, DEFAULT_CALL_TIMEOUT_MS, FirstSeen, withDeadline } from '../calls.js';
import { awsCloudError } from './errors.js';
import { awsProviderID, parseAwsProviderID } from './provider-id.js';

export interface AwsProviderOptions {
  /** Region for groupIds given by name; default: the SDK's chain (AWS_REGION, profile). */
  readonly region?: string;
  /** Another endpoint for both APIs (an emulator, a VPC endpoint); default: AWS's. */
  readonly endpoint?: string;
  /** Static credentials; default: the SDK's default chain. */
  readonly credentials?: AutoScalingClientConfig['credentials'];
  /** Per call; default 30 s. */
  readonly timeoutMs?: number;
  /** Groups per DescribeAutoScalingGroups page when listing; default 100 (the API's maximum). */
  readonly pageSize?: number;
}

interface Clients {
  readonly autoscaling: AutoScalingClient;
  readonly ec2: EC2Client;
  /** The SDK modules, loaded on first use so other commands do not pay for them. */
  readonly asgSdk: typeof import('@aws-sdk/client-auto-scaling');
  readonly ec2Sdk: typeof import('@aws-sdk/client-ec2');
}

// DescribeInstances takes at most 1000 ids per call.
const DESCRIBE_INSTANCES_CHUNK = 200;

export class AwsProvider implements CloudProvider {
  readonly name = 'aws' as const;
  private readonly timeoutMs: number;
  private readonly clients = new Map<string, Promise<Clients>>();
  /** For an instance DescribeInstances does not show yet (eventual consistency right after launch). */
  private readonly firstSeen = new FirstSeen();
  /** instance id → group, as last described: providerIDs do not name their group. */
  private readonly membership = new Map<string, string>();

  constructor(private readonly options: AwsProviderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  async listGroups(): Promise<readonly string[]> {
    const { autoscaling, asgSdk } = await this.clientsFor(undefined);
    return this.call('list Auto Scaling groups', {}, async (abortSignal) => {
      const names: string[] = [];
      for await (const page of asgSdk.paginateDescribeAutoScalingGroups(
        { client: autoscaling, pageSize: this.options.pageSize ?? 100 },
        {},
        { abortSignal },
      )) {
        for (const g of page.AutoScalingGroups ?? []) if (g.AutoScalingGroupName) names.push(g.AutoScalingGroupName);
      }
      return names.sort();
    });
  }

  async describeGroup(groupId: string): Promise<GroupDescription> {
    const group = await this.group(groupId);
    const template = launchTemplateOf(group, groupId);
    const image = await this.templateImage(groupId, template);
    const members = (group.Instances ?? []).filter((i) => i.InstanceId);
    const details = await this.ec2Instances(
      groupId,
      members.map((i) => i.InstanceId ?? ''),
    );
    const instances: Instance[] = members.map((m) => {
      const id = m.InstanceId ?? '';
      const ec2 = details.get(id);
      const zone = m.AvailabilityZone ?? ec2?.Placement?.AvailabilityZone ?? '';
      this.membership.set(id, groupId);
      return {
        id,
        providerID: awsProviderID(zone, id),
        image: ec2?.ImageId ?? '',
        state: instanceState(m.LifecycleState, ec2?.State?.Name),
        createdAt: ec2?.LaunchTime?.toISOString() ?? this.firstSeen.at(id),
      };
    });
    return { groupId, image, targetSize: group.DesiredCapacity ?? 0, instances: instances.sort(byId) };
  }

  async setGroupImage(groupId: string, image: string): Promise<void> {
    if (!/^ami-[0-9a-f]{8,17}$/.test(image)) {
      throw new CloudError(
        'Permanent',
        `aws: set image of group ${groupId}: ${JSON.stringify(image)} is not an AMI id (ami-…); set NodeImage spec.image to an AMI id`,
        { groupId },
      );
    }
    const group = await this.group(groupId);
    const template = launchTemplateOf(group, groupId);
    const { ec2, ec2Sdk } = await this.clientsFor(groupId);
    const ids = { groupId };
    const versions = await this.call(`read launch template of group ${groupId}`, ids, (abortSignal) =>
      ec2.send(
        new ec2Sdk.DescribeLaunchTemplateVersionsCommand({
          LaunchTemplateId: template.LaunchTemplateId,
          LaunchTemplateName: template.LaunchTemplateId ? undefined : template.LaunchTemplateName,
          Versions: [template.Version ?? '$Default', '$Latest'],
        }),
        { abortSignal },
      ),
    );
    const [current, latest] = resolveVersions(versions.LaunchTemplateVersions ?? [], template.Version ?? '$Default');
    if (!current)
      throw new CloudError(
        'NotFound',
        `aws: launch template version ${template.Version ?? '$Default'} of group ${groupId} does not exist; fix the group's launch template`,
        ids,
      );
    if (current.LaunchTemplateData?.ImageId === image && /^\d+$/.test(template.Version ?? '')) return;
    // A retry after the version was made but before the group took it reuses that version.
    let version =
      latest?.LaunchTemplateData?.ImageId === image && latest.VersionDescription === versionDescription(image)
        ? latest.VersionNumber
        : undefined;
    if (version === undefined) {
      const created = await this.call(
        `create launch template version with ${image} for group ${groupId}`,
        ids,
        (abortSignal) =>
          ec2.send(
            new ec2Sdk.CreateLaunchTemplateVersionCommand({
              LaunchTemplateId: current.LaunchTemplateId,
              SourceVersion: String(current.VersionNumber),
              VersionDescription: versionDescription(image),
              LaunchTemplateData: { ImageId: image },
            }),
            { abortSignal },
          ),
      );
      version = created.LaunchTemplateVersion?.VersionNumber;
    }
    const spec: LaunchTemplateSpecification = { LaunchTemplateId: current.LaunchTemplateId, Version: String(version) };
    const update = group.MixedInstancesPolicy?.LaunchTemplate
      ? { MixedInstancesPolicy: { LaunchTemplate: { LaunchTemplateSpecification: spec } } }
      : { LaunchTemplate: spec };
    const { autoscaling, asgSdk } = await this.clientsFor(groupId);
    await this.call(`set launch template version ${version} on group ${groupId}`, ids, (abortSignal) =>
      autoscaling.send(
        new asgSdk.UpdateAutoScalingGroupCommand({ AutoScalingGroupName: group.AutoScalingGroupName, ...update }),
        { abortSignal },
      ),
    );
  }

  async addCapacity(groupId: string, count: number): Promise<readonly string[]> {
    if (!Number.isInteger(count) || count < 1)
      throw new CloudError(
        'Permanent',
        `aws: add capacity to group ${groupId}: count ${count} is not a positive integer`,
        { groupId },
      );
    const group = await this.group(groupId);
    const desired = group.DesiredCapacity ?? 0;
    const max = group.MaxSize ?? 0;
    if (desired + count > max) {
      throw new CloudError(
        'QuotaExceeded',
        `aws: add ${count} to group ${groupId}: desired capacity ${desired} + ${count} exceeds the group's MaxSize ${max}; raise MaxSize by the rollout's maxSurge`,
        {
          groupId,
          quota: { scope: 'group', limit: max, inUse: desired, requested: count },
        },
      );
    }
    const { autoscaling, asgSdk } = await this.clientsFor(groupId);
    await this.call(`set desired capacity of group ${groupId} to ${desired + count}`, { groupId }, (abortSignal) =>
      autoscaling.send(
        new asgSdk.SetDesiredCapacityCommand({
          AutoScalingGroupName: group.AutoScalingGroupName,
          DesiredCapacity: desired + count,
          HonorCooldown: false,
        }),
        { abortSignal },
      ),
    );
    return [];
  }

  async removeInstance(groupId: string, instanceId: string): Promise<void> {
    const group = await this.group(groupId);
    const member = (group.Instances ?? []).find((i) => i.InstanceId === instanceId);
    // Gone, or already on its way out: nothing to do (and never touch another group's instance).
    if (!member || instanceState(member.LifecycleState, undefined) === 'terminating') return;
    const { autoscaling, asgSdk } = await this.clientsFor(groupId);
    await this.call(`terminate instance ${instanceId} of group ${groupId}`, { groupId, instanceId }, (abortSignal) =>
      autoscaling.send(
        new asgSdk.TerminateInstanceInAutoScalingGroupCommand({
          InstanceId: instanceId,
          ShouldDecrementDesiredCapacity: true,
        }),
        { abortSignal },
      ),
    );
  }

  /** The group comes from the last describeGroup that listed the instance: an AWS providerID does not name it. */
  instanceForProviderID(providerID: string): { groupId: string; instanceId: string } | undefined {
    const parsed = parseAwsProviderID(providerID);
    const groupId = parsed && this.membership.get(parsed.instanceId);
    return parsed && groupId !== undefined ? { groupId, instanceId: parsed.instanceId } : undefined;
  }

  private async group(groupId: string): Promise<AutoScalingGroup> {
    const { name } = parseAwsGroupId(groupId);
    const { autoscaling, asgSdk } = await this.clientsFor(groupId);
    const out = await this.call(`describe group ${groupId}`, { groupId }, (abortSignal) =>
      autoscaling.send(new asgSdk.DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [name] }), { abortSignal }),
    );
    const group = out.AutoScalingGroups?.find((g) => g.AutoScalingGroupName === name);
    if (!group)
      throw new CloudError(
        'NotFound',
        `aws: Auto Scaling group ${JSON.stringify(name)} does not exist in this account and region; check the ScalingGroup's groupId`,
        { groupId },
      );
    return group;
  }

  private async templateImage(groupId: string, template: LaunchTemplateSpecification): Promise<string> {
    const { ec2, ec2Sdk } = await this.clientsFor(groupId);
    const out = await this.call(`read launch template of group ${groupId}`, { groupId }, (abortSignal) =>
      ec2.send(
        new ec2Sdk.DescribeLaunchTemplateVersionsCommand({
          LaunchTemplateId: template.LaunchTemplateId,
          LaunchTemplateName: template.LaunchTemplateId ? undefined : template.LaunchTemplateName,
          Versions: [template.Version ?? '$Default'],
        }),
        { abortSignal },
      ),
    );
    return out.LaunchTemplateVersions?.[0]?.LaunchTemplateData?.ImageId ?? '';
  }

  private async ec2Instances(groupId: string, ids: readonly string[]): Promise<Map<string, Ec2Instance>> {
    const { ec2, ec2Sdk } = await this.clientsFor(groupId);
    const found = new Map<string, Ec2Instance>();
    for (let i = 0; i < ids.length; i += DESCRIBE_INSTANCES_CHUNK) {
      const chunk = ids.slice(i, i + DESCRIBE_INSTANCES_CHUNK);
      let token: string | undefined;
      do {
        const page = await this.call(`describe instances of group ${groupId}`, { groupId }, (abortSignal) =>
          ec2.send(new ec2Sdk.DescribeInstancesCommand({ InstanceIds: chunk, NextToken: token }), { abortSignal }),
        );
        for (const r of page.Reservations ?? [])
          for (const inst of r.Instances ?? []) if (inst.InstanceId) found.set(inst.InstanceId, inst);
        token = page.NextToken;
      } while (token);
    }
    return found;
  }

  private clientsFor(groupId: string | undefined): Promise<Clients> {
    const region =
      groupId === undefined ? this.options.region : (parseAwsGroupId(groupId).arn?.region ?? this.options.region);
    const key = region ?? '';
    let c = this.clients.get(key);
    if (!c) {
      const config = {
        ...(region !== undefined ? { region } : {}),
        ...(this.options.endpoint !== undefined ? { endpoint: this.options.endpoint } : {}),
        ...(this.options.credentials !== undefined ? { credentials: this.options.credentials } : {}),
        // One retry inside the deadline for a dropped connection; throttling reaches the planner, which waits.
        maxAttempts: 2,
      };
      c = Promise.all([import('@aws-sdk/client-auto-scaling'), import('@aws-sdk/client-ec2')]).then(
        ([asgSdk, ec2Sdk]) => ({
          autoscaling: new asgSdk.AutoScalingClient(config),
          ec2: new ec2Sdk.EC2Client(config),
          asgSdk,
          ec2Sdk,
        }),
      );
      this.clients.set(key, c);
    }
    return c;
  }

  private async call<T>(context: string, data: CloudErrorData, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await withDeadline(`aws: ${context}`, this.timeoutMs, data, fn);
    } catch (err) {
      throw awsCloudError(err, context, data);
    }
  }
}

function parseAwsGroupId(groupId: string): { name: string; arn?: { region: string } } {
  const parts = parseGroupId('aws', groupId);
  if (parts.provider !== 'aws')
    throw new CloudError('Permanent', `aws: ${groupId} is not an Auto Scaling group`, { groupId });
  return parts;
}

function versionDescription(image: string): string {
  return `drydock: image ${image}`;
}

function launchTemplateOf(group: AutoScalingGroup, groupId: string): LaunchTemplateSpecification {
  const t = group.LaunchTemplate ?? group.MixedInstancesPolicy?.LaunchTemplate?.LaunchTemplateSpecification;
  if (!t || (!t.LaunchTemplateId && !t.LaunchTemplateName)) {
    throw new CloudError(
      'Permanent',
      `aws: group ${groupId} has no launch template (a launch configuration?); drydock rolls out launch-template versions, so move the group to a launch template`,
      { groupId },
    );
  }
  return t;
}

function resolveVersions<T extends { VersionNumber?: number; DefaultVersion?: boolean }>(
  versions: readonly T[],
  wanted: string,
): [T | undefined, T | undefined] {
  const latest = versions.reduce<T | undefined>(
    (a, v) => (a === undefined || (v.VersionNumber ?? 0) > (a.VersionNumber ?? 0) ? v : a),
    undefined,
  );
  const current =
    wanted === '$Latest'
      ? latest
      : wanted === '$Default'
        ? versions.find((v) => v.DefaultVersion)
        : versions.find((v) => String(v.VersionNumber) === wanted);
  return [current, latest];
}

const PENDING = /^(Pending|Warmed)/;
const LEAVING = /^(Terminat|Detach)/;

function instanceState(lifecycle: string | undefined, ec2State: string | undefined): InstanceState {
  if (
    LEAVING.test(lifecycle ?? '') ||
    ec2State === 'shutting-down' ||
    ec2State === 'terminated' ||
    ec2State === 'stopping' ||
    ec2State === 'stopped'
  )
    return 'terminating';
  if (PENDING.test(lifecycle ?? '') || ec2State === 'pending') return 'pending';
  return 'running';
}
