/** Resources in moto for AWS tests: two AMIs, a launch template and an Auto Scaling group on it. */
import { strict as assert } from 'node:assert';
import { AutoScalingClient, CreateAutoScalingGroupCommand } from '@aws-sdk/client-auto-scaling';
import { CreateLaunchTemplateCommand, DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { MOTO_CREDENTIALS, MOTO_REGION } from './moto.js';

export interface AwsFixture {
  readonly asg: AutoScalingClient;
  readonly ec2: EC2Client;
  readonly amis: readonly [string, string];
}

export function awsFixture(endpoint: string): Omit<AwsFixture, 'amis'> {
  const config = { endpoint, region: MOTO_REGION, credentials: MOTO_CREDENTIALS };
  return { asg: new AutoScalingClient(config), ec2: new EC2Client(config) };
}

/** Two AMIs moto knows, by id. */
export async function twoAmis(ec2: EC2Client): Promise<[string, string]> {
  const images = await ec2.send(new DescribeImagesCommand({ Owners: ['amazon'] }));
  const ids = (images.Images ?? [])
    .map((i) => i.ImageId ?? '')
    .filter((id) => /^ami-[0-9a-f]+$/.test(id))
    .sort();
  assert.ok(ids.length >= 2, 'moto offers at least two AMIs');
  return [ids[0] ?? '', ids[1] ?? ''];
}

/** A launch template on `ami` and an Auto Scaling group of `size` on its version 1. */
export async function createGroup(
  f: Omit<AwsFixture, 'amis'>,
  name: string,
  ami: string,
  size: number,
  maxSize = 10,
): Promise<string> {
  const lt = await f.ec2.send(
    new CreateLaunchTemplateCommand({
      LaunchTemplateName: `${name}-lt`,
      LaunchTemplateData: { ImageId: ami, InstanceType: 't3.medium' },
    }),
  );
  await f.asg.send(
    new CreateAutoScalingGroupCommand({
      AutoScalingGroupName: name,
      LaunchTemplate: { LaunchTemplateId: lt.LaunchTemplate?.LaunchTemplateId, Version: '1' },
      MinSize: 0,
      MaxSize: maxSize,
      DesiredCapacity: size,
      AvailabilityZones: [`${MOTO_REGION}a`],
    }),
  );
  return lt.LaunchTemplate?.LaunchTemplateId ?? '';
}
