import { strict as assert } from 'node:assert';
import { GroupIdError, inferProvider, parseGroupId, type GroupIdParts } from '../../src/cloud/group-id.js';
import type { Provider } from '../../src/spec/model.js';

const SUB = '0d9a1b2c-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
const ASG_UUID = '5d5a9c1e-0f12-4b3c-9d8e-7f6a5b4c3d2e';
const ARN = `arn:aws:autoscaling:eu-central-1:123456789012:autoScalingGroup:${ASG_UUID}:autoScalingGroupName/workers-v2`;

describe('groupId formats', () => {
  describe('inferProvider', () => {
    const cases: Array<[string, Provider | undefined]> = [
      ['projects/my-project/zones/europe-west3-a/instanceGroupManagers/workers', 'gcp'],
      ['projects/my-project/regions/europe-west3/instanceGroupManagers/workers', 'gcp'],
      [
        `/subscriptions/${SUB}/resourceGroups/rg-prod/providers/Microsoft.Compute/virtualMachineScaleSets/workers`,
        'azure',
      ],
      // Azure resource ids are case-insensitive.
      [
        `/subscriptions/${SUB}/resourcegroups/rg-prod/providers/microsoft.compute/virtualmachinescalesets/workers`,
        'azure',
      ],
      [ARN, 'aws'],
      ['workers', undefined],
      ['my-asg-name', undefined],
      ['', undefined],
      ['projects/p/zones/z/instanceGroups/workers', undefined],
      ['projects/p/global/instanceGroupManagers/workers', undefined],
    ];
    for (const [groupId, expected] of cases) {
      it(`${JSON.stringify(groupId)} → ${expected ?? 'undefined'}`, () => {
        assert.equal(inferProvider(groupId), expected);
      });
    }
  });

  describe('parseGroupId accepts', () => {
    const cases: Array<[Provider, string, GroupIdParts]> = [
      [
        'gcp',
        'projects/my-project/zones/europe-west3-a/instanceGroupManagers/workers',
        { provider: 'gcp', project: 'my-project', scope: 'zone', location: 'europe-west3-a', name: 'workers' },
      ],
      [
        'gcp',
        'projects/example.com:my-project/regions/us-central1/instanceGroupManagers/cp-0',
        { provider: 'gcp', project: 'example.com:my-project', scope: 'region', location: 'us-central1', name: 'cp-0' },
      ],
      [
        'azure',
        `/subscriptions/${SUB}/resourceGroups/rg_prod.(eu)/providers/Microsoft.Compute/virtualMachineScaleSets/Workers_01`,
        { provider: 'azure', subscriptionId: SUB, resourceGroup: 'rg_prod.(eu)', name: 'Workers_01' },
      ],
      [
        'aws',
        ARN,
        {
          provider: 'aws',
          name: 'workers-v2',
          arn: { partition: 'aws', region: 'eu-central-1', accountId: '123456789012', uuid: ASG_UUID },
        },
      ],
      [
        'aws',
        `arn:aws-us-gov:autoscaling:us-gov-west-1:123456789012:autoScalingGroup:${ASG_UUID}:autoScalingGroupName/My ASG`,
        {
          provider: 'aws',
          name: 'My ASG',
          arn: { partition: 'aws-us-gov', region: 'us-gov-west-1', accountId: '123456789012', uuid: ASG_UUID },
        },
      ],
      ['aws', 'eks-workers-20240101', { provider: 'aws', name: 'eks-workers-20240101' }],
      ['sim', 'workers', { provider: 'sim', name: 'workers' }],
      ['sim', 'control-plane', { provider: 'sim', name: 'control-plane' }],
    ];
    for (const [provider, groupId, expected] of cases) {
      it(`${provider} ${groupId}`, () => {
        assert.deepEqual(parseGroupId(provider, groupId), expected);
      });
    }
  });

  describe('parseGroupId refuses, naming the wrong part', () => {
    const cases: Array<[Provider, string, string, RegExp]> = [
      ['gcp', '', 'format', /is empty/],
      ['gcp', ' projects/my-project/zones/europe-west3-a/instanceGroupManagers/w', 'format', /whitespace/],
      ['gcp', 'workers', 'format', /not an instance group manager path/],
      ['gcp', 'projects/My_Project/zones/europe-west3-a/instanceGroupManagers/workers', 'project', /"My_Project"/],
      ['gcp', 'projects/my-project/zones/europe-west3/instanceGroupManagers/workers', 'zone', /like europe-west3-a/],
      [
        'gcp',
        'projects/my-project/regions/europe-west3-a/instanceGroupManagers/workers',
        'region',
        /like europe-west3/,
      ],
      ['gcp', 'projects/my-project/zones/europe-west3-a/instanceGroupManagers/Workers', 'name', /RFC 1035/],
      [
        'gcp',
        `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/w`,
        'format',
        /set provider: azure/,
      ],
      [
        'azure',
        `/subscriptions/not-a-guid/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/w`,
        'subscription',
        /not a GUID/,
      ],
      [
        'azure',
        `/subscriptions/${SUB}/resourceGroups/rg./providers/Microsoft.Compute/virtualMachineScaleSets/w`,
        'resourceGroup',
        /not end in "."/,
      ],
      [
        'azure',
        `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/-w`,
        'name',
        /scale set name/,
      ],
      ['azure', 'workers', 'format', /not a virtual machine scale set/],
      [
        'aws',
        `arn:aws:autoscaling:eu-central-1:1234:autoScalingGroup:${ASG_UUID}:autoScalingGroupName/w`,
        'account',
        /12 digits/,
      ],
      [
        'aws',
        `arn:aws:autoscaling:europe:123456789012:autoScalingGroup:${ASG_UUID}:autoScalingGroupName/w`,
        'region',
        /eu-central-1/,
      ],
      [
        'aws',
        'arn:aws:autoscaling:eu-central-1:123456789012:autoScalingGroup:nope:autoScalingGroupName/w',
        'uuid',
        /not a UUID/,
      ],
      ['aws', 'arn:aws:ec2:eu-central-1:123456789012:instance/i-1', 'format', /not an Auto Scaling group ARN/],
      ['aws', 'projects/my-project/zones/europe-west3-a/instanceGroupManagers/workers', 'format', /set provider: gcp/],
      ['aws', 'a:b', 'name', /without ":"/],
      ['aws', 'x'.repeat(256), 'name', /1-255/],
      ['sim', 'Workers', 'name', /DNS label/],
      ['sim', 'w'.repeat(41), 'name', /at most 40/],
      ['sim', ARN, 'format', /set provider: aws/],
    ];
    for (const [provider, groupId, part, message] of cases) {
      it(`${provider} ${JSON.stringify(groupId.slice(0, 60))}: ${part}`, () => {
        assert.throws(
          () => parseGroupId(provider, groupId),
          (err: unknown) =>
            err instanceof GroupIdError &&
            err.code === 'InvalidGroupId' &&
            err.data.part === part &&
            err.data.groupId === groupId &&
            err.message.includes(JSON.stringify(groupId)) &&
            message.test(err.message),
        );
      });
    }
  });
});
