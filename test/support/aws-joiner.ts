/**
 * The part of a real AWS cluster moto does not have: kubelets. Every running instance of the
 * watched Auto Scaling groups joins the cluster as a KWOK node carrying its AWS providerID
 * (as the AWS cloud controller manager would set it), and its Node is deleted once the
 * instance is terminating or gone — so drydock sees nodes come and go as on EC2. The joining
 * is cloud-joiner.ts's; this reads the members through the AWS API.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { DescribeAutoScalingGroupsCommand, type AutoScalingClient } from '@aws-sdk/client-auto-scaling';
import { DescribeInstancesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { JOINER_IMAGE_ANNOTATION, startCloudJoiner, type CloudJoiner, type CloudMember } from './cloud-joiner.js';

export { JOINER_IMAGE_ANNOTATION };
const JOINER_LABEL = 'test.drydock.dev/aws-group';

export type AwsJoiner = CloudJoiner;

export function startAwsJoiner(opts: {
  kc: KubeConfig;
  asg: AutoScalingClient;
  ec2: EC2Client;
  groups: readonly string[];
  intervalMs?: number;
}): AwsJoiner {
  /** AMIs never change under an instance: each is read once. */
  const images = new Map<string, string>();
  const list = async (): Promise<CloudMember[]> => {
    const out = await opts.asg.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [...opts.groups] }));
    const live: { id: string; group: string; zone: string }[] = [];
    for (const g of out.AutoScalingGroups ?? []) {
      for (const i of g.Instances ?? []) {
        if (i.InstanceId && i.LifecycleState === 'InService')
          live.push({ id: i.InstanceId, group: g.AutoScalingGroupName ?? '', zone: i.AvailabilityZone ?? '' });
      }
    }
    const unknown = live.map((m) => m.id).filter((id) => !images.has(id));
    if (unknown.length > 0) {
      const ec2 = await opts.ec2.send(new DescribeInstancesCommand({ InstanceIds: unknown }));
      for (const i of (ec2.Reservations ?? []).flatMap((r) => r.Instances ?? []))
        images.set(i.InstanceId ?? '', i.ImageId ?? '');
    }
    return live.map((m) => ({
      nodeName: `ip-${m.id}`,
      providerID: `aws:///${m.zone}/${m.id}`,
      group: m.group,
      image: images.get(m.id) ?? '',
    }));
  };
  return startCloudJoiner({
    kc: opts.kc,
    list,
    label: JOINER_LABEL,
    ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
  });
}
