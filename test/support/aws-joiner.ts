/**
 * The part of a real AWS cluster moto does not have: kubelets. Every running instance of the
 * watched Auto Scaling groups joins the cluster as a KWOK node carrying its AWS providerID
 * (as the AWS cloud controller manager would set it), and its Node is deleted once the
 * instance is terminating or gone — so drydock sees nodes come and go as on EC2.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { DescribeAutoScalingGroupsCommand, type AutoScalingClient } from '@aws-sdk/client-auto-scaling';
import { DescribeInstancesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { fakeNode } from './control-plane.js';

/** Annotation with the AMI the node's instance runs, for assertions. */
export const JOINER_IMAGE_ANNOTATION = 'test.drydock.dev/image';
const JOINER_LABEL = 'test.drydock.dev/aws-group';

export interface AwsJoiner {
  /** Joins and removes once, now. */
  sync(): Promise<void>;
  stop(): Promise<void>;
}

export function startAwsJoiner(opts: {
  kc: KubeConfig;
  asg: AutoScalingClient;
  ec2: EC2Client;
  groups: readonly string[];
  intervalMs?: number;
}): AwsJoiner {
  const core = opts.kc.makeApiClient(CoreV1Api);
  let running: Promise<void> = Promise.resolve();
  const sync = async (): Promise<void> => {
    const out = await opts.asg.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [...opts.groups] }));
    const live = new Map<string, { group: string; zone: string }>();
    for (const g of out.AutoScalingGroups ?? []) {
      for (const i of g.Instances ?? []) {
        if (i.InstanceId && i.LifecycleState === 'InService')
          live.set(i.InstanceId, { group: g.AutoScalingGroupName ?? '', zone: i.AvailabilityZone ?? '' });
      }
    }
    const existing = await core.listNode({ labelSelector: JOINER_LABEL });
    const have = new Set<string>();
    for (const n of existing.items) {
      const id = n.spec?.providerID?.split('/').pop() ?? '';
      if (live.has(id)) have.add(id);
      else await core.deleteNode({ name: n.metadata?.name ?? '' }).catch(() => undefined);
    }
    const joining = [...live.keys()].filter((id) => !have.has(id));
    if (joining.length === 0) return;
    const ec2 = await opts.ec2.send(new DescribeInstancesCommand({ InstanceIds: joining }));
    const images = new Map(
      (ec2.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((i) => [i.InstanceId ?? '', i.ImageId ?? '']),
    );
    for (const id of joining) {
      const m = live.get(id);
      if (!m) continue;
      const node = fakeNode(`ip-${id}`, {
        providerID: `aws:///${m.zone}/${id}`,
        labels: { [JOINER_LABEL]: m.group, 'node-role.kubernetes.io/worker': '' },
        annotations: { [JOINER_IMAGE_ANNOTATION]: images.get(id) ?? '' },
      });
      await core.createNode({ body: node }).catch((err: unknown) => {
        if ((err as { code?: number }).code !== 409) throw err;
      });
    }
  };
  const timer = setInterval(() => {
    running = running.then(sync).catch(() => undefined);
  }, opts.intervalMs ?? 300);
  return {
    sync: () => (running = running.then(sync)),
    stop: async () => {
      clearInterval(timer);
      await running.catch(() => undefined);
    },
  };
}
