import { strict as assert } from 'node:assert';
import { parse } from 'yaml';
import { parseSimConfigText } from '../../src/cloud/sim/config.js';
import { bottlerocketGroup, fleetGroups, nodeImageFile, simCloudConfigYaml } from '../../src/sandbox/fleet-groups.js';

const images = [
  'apiVersion: drydock.dev/v1alpha1',
  'kind: NodeImage',
  'metadata: {name: worker}',
  'spec: {image: sandbox/node:1.0.0}',
  '---',
  'apiVersion: update.edgeless.systems/v1alpha1',
  'kind: NodeImage',
  'metadata: {name: cp}',
  'spec: {image: sandbox/node:0.9.0}',
].join('\n');

describe('sandbox fleet groups', () => {
  it('reads drydock and Constellation ScalingGroups of provider sim, sized by role', () => {
    const files = new Map([
      ['images.yaml', images],
      [
        'groups/workers.yaml',
        'kind: ScalingGroup\nmetadata: {name: workers}\nspec: {provider: sim, groupId: workers, nodeImage: worker}\n',
      ],
      [
        'groups/cp.yaml',
        'kind: ScalingGroup\nmetadata: {name: control-plane}\nspec: {groupId: control-plane, nodeImage: cp, role: ControlPlane}\n',
      ],
      [
        'groups/gcp.yaml',
        'kind: ScalingGroup\nmetadata: {name: gcp}\nspec: {groupId: projects/p/zones/z/instanceGroupManagers/m, nodeImage: worker}\n',
      ],
      ['README.md', '# not yaml: ['],
      ['broken.yaml', 'kind: [\n'],
    ]);
    assert.deepEqual(fleetGroups(files), [
      {
        groupId: 'control-plane',
        scalingGroup: 'control-plane',
        nodeImage: 'cp',
        role: 'control-plane',
        size: 3,
        image: 'sandbox/node:0.9.0',
      },
      {
        groupId: 'workers',
        scalingGroup: 'workers',
        nodeImage: 'worker',
        role: 'worker',
        size: 6,
        image: 'sandbox/node:1.0.0',
      },
    ]);
  });

  it('names a ScalingGroup whose NodeImage is missing', () => {
    const files = new Map([
      [
        'g.yaml',
        'kind: ScalingGroup\nmetadata: {name: workers}\nspec: {provider: sim, groupId: workers, nodeImage: gpu}\n',
      ],
    ]);
    assert.throws(
      () => fleetGroups(files),
      /ScalingGroup workers names NodeImage gpu, which the fleet repository does not define/,
    );
  });

  it('refuses a repository without sim groups', () => {
    assert.throws(() => fleetGroups(new Map([['images.yaml', images]])), /no ScalingGroup with provider sim/);
  });

  it('writes the sim cloud configuration', () => {
    const groups = fleetGroups(
      new Map([
        ['images.yaml', images],
        [
          'g.yaml',
          'kind: ScalingGroup\nmetadata: {name: w}\nspec: {provider: sim, groupId: workers, nodeImage: worker}\n',
        ],
      ]),
    );
    assert.deepEqual(parse(simCloudConfigYaml(groups, 2)), {
      bootDelaySeconds: 2,
      terminateDelaySeconds: 2,
      groups: [{ id: 'workers', role: 'worker', size: 6, image: 'sandbox/node:1.0.0' }],
    });
    // The sim cloud itself accepts it.
    assert.deepEqual(
      parseSimConfigText(simCloudConfigYaml(groups, 2)).groups.map((g) => [g.id, g.role, g.size, g.image]),
      [['workers', 'worker', 6, 'sandbox/node:1.0.0']],
    );
  });

  it('writes a Bottlerocket group the sim cloud plays as Bottlerocket hosts, on 1.19.2 with 1.20.3 offered', () => {
    const config = parseSimConfigText(simCloudConfigYaml([bottlerocketGroup()], 2));
    assert.deepEqual(
      config.groups.map((g) => [g.id, g.role, g.size, g.bottlerocket]),
      [
        [
          'bottlerocket',
          'worker',
          2,
          { version: '1.19.2', variant: 'aws-k8s-1.30', available: ['1.19.2', '1.20.3'], faults: [] },
        ],
      ],
    );
  });

  it('finds the file defining a NodeImage', () => {
    const files = new Map([
      ['b/images.yaml', images],
      ['a/other.yaml', 'kind: NodeImage\nmetadata: {name: gpu}\nspec: {image: x}\n'],
    ]);
    assert.equal(nodeImageFile(files, 'cp'), 'b/images.yaml');
    assert.equal(nodeImageFile(files, 'gpu'), 'a/other.yaml');
    assert.equal(nodeImageFile(files, 'none'), undefined);
  });
});
