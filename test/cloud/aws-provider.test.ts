/**
 * The AWS provider against moto (the AWS emulator as a local server): every interface call
 * through the real SDK and the emulated Auto Scaling and EC2 APIs.
 */
import { strict as assert } from 'node:assert';
import { createServer, type Server, type Socket } from 'node:net';
import { DescribeAutoScalingGroupsCommand } from '@aws-sdk/client-auto-scaling';
import { DescribeInstancesCommand, DescribeLaunchTemplateVersionsCommand } from '@aws-sdk/client-ec2';
import { AwsProvider, CloudError, createProvider } from '../../src/cloud/index.js';
import { MOTO_CREDENTIALS, MOTO_REGION, useMoto } from '../support/moto.js';
import { awsFixture, createGroup, twoAmis, type AwsFixture } from '../support/aws-fixture.js';

describe('aws provider (moto)', function () {
  this.timeout(60_000);
  const moto = useMoto();
  let f: AwsFixture;
  let provider: AwsProvider;

  beforeEach(async () => {
    await moto().reset();
    const base = awsFixture(moto().endpoint);
    f = { ...base, amis: await twoAmis(base.ec2) };
    provider = new AwsProvider({
      endpoint: moto().endpoint,
      region: MOTO_REGION,
      credentials: MOTO_CREDENTIALS,
      pageSize: 2,
    });
  });

  it('lists every group over several pages, sorted', async () => {
    for (const name of ['workers-c', 'workers-a', 'control-plane']) await createGroup(f, name, f.amis[0], 0);
    assert.deepEqual(await provider.listGroups(), ['control-plane', 'workers-a', 'workers-c']);
  });

  it('describes a group: launch-template image, desired capacity, instances with their providerIDs', async () => {
    await createGroup(f, 'workers', f.amis[0], 2);
    const d = await provider.describeGroup('workers');
    assert.equal(d.groupId, 'workers');
    assert.equal(d.image, f.amis[0]);
    assert.equal(d.targetSize, 2);
    assert.equal(d.instances.length, 2);
    const ec2 = await f.ec2.send(new DescribeInstancesCommand({ InstanceIds: d.instances.map((i) => i.id) }));
    const launched = new Map((ec2.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((i) => [i.InstanceId, i]));
    assert.deepEqual(
      [...d.instances].map((i) => i.id),
      [...d.instances].map((i) => i.id).sort(),
      'sorted by id',
    );
    for (const inst of d.instances) {
      const e = launched.get(inst.id);
      assert.ok(e, `${inst.id} is an EC2 instance`);
      assert.equal(inst.providerID, `aws:///${e.Placement?.AvailabilityZone}/${inst.id}`);
      assert.match(inst.providerID, /^aws:\/\/\/eu-central-1a\/i-[0-9a-f]+$/);
      assert.equal(inst.image, f.amis[0]);
      assert.equal(inst.state, 'running');
      assert.equal(inst.createdAt, e.LaunchTime?.toISOString());
      assert.deepEqual(provider.instanceForProviderID(inst.providerID), { groupId: 'workers', instanceId: inst.id });
    }
    assert.equal(
      provider.instanceForProviderID('aws:///eu-central-1a/i-0123456789abcdef0'),
      undefined,
      'an instance of no described group',
    );
    assert.equal(provider.instanceForProviderID('gce://p/z/n'), undefined);
  });

  it("setGroupImage makes a new launch-template version with the AMI the group's version, once", async () => {
    const ltId = await createGroup(f, 'workers', f.amis[0], 1);
    await provider.setGroupImage('workers', f.amis[1]);
    await provider.setGroupImage('workers', f.amis[1]);
    const versions = await f.ec2.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: ltId }));
    const byNumber = new Map((versions.LaunchTemplateVersions ?? []).map((v) => [v.VersionNumber, v]));
    assert.equal(byNumber.size, 2, 'a second call made no third version');
    assert.equal(byNumber.get(2)?.LaunchTemplateData?.ImageId, f.amis[1]);
    // The rest of version 2 is copied by AWS from SourceVersion, which moto does not emulate.
    const g = await f.asg.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: ['workers'] }));
    assert.equal(g.AutoScalingGroups?.[0]?.LaunchTemplate?.Version, '2');
    const d = await provider.describeGroup('workers');
    assert.equal(d.image, f.amis[1]);
    assert.deepEqual(
      d.instances.map((i) => i.image),
      [f.amis[0]],
      'existing instances keep theirs',
    );
  });

  it('addCapacity raises the desired capacity; new instances come from the new image', async () => {
    await createGroup(f, 'workers', f.amis[0], 1);
    await provider.setGroupImage('workers', f.amis[1]);
    assert.deepEqual(await provider.addCapacity('workers', 2), []);
    const d = await provider.describeGroup('workers');
    assert.equal(d.targetSize, 3);
    assert.equal(d.instances.length, 3);
    assert.deepEqual(d.instances.map((i) => i.image).sort(), [f.amis[0], f.amis[1], f.amis[1]].sort());
  });

  it('addCapacity beyond MaxSize is QuotaExceeded, naming the limit', async () => {
    await createGroup(f, 'workers', f.amis[0], 2, 2);
    await assert.rejects(provider.addCapacity('workers', 1), (err: unknown) => {
      assert.ok(err instanceof CloudError);
      assert.equal(err.code, 'QuotaExceeded');
      assert.deepEqual(err.data.quota, { scope: 'group', limit: 2, inUse: 2, requested: 1 });
      assert.match(err.message, /raise MaxSize/);
      return true;
    });
  });

  it('removeInstance terminates exactly that instance and lowers the desired capacity; again is a no-op', async () => {
    await createGroup(f, 'workers', f.amis[0], 3);
    const before = await provider.describeGroup('workers');
    const victim = before.instances[1]?.id ?? '';
    await provider.removeInstance('workers', victim);
    await provider.removeInstance('workers', victim);
    const after = await provider.describeGroup('workers');
    assert.equal(after.targetSize, 2);
    const left = after.instances.filter((i) => i.state !== 'terminating').map((i) => i.id);
    assert.deepEqual(
      left,
      before.instances.filter((i) => i.id !== victim).map((i) => i.id),
    );
  });

  it('removeInstance leaves an instance of another group alone', async () => {
    await createGroup(f, 'workers', f.amis[0], 1);
    await createGroup(f, 'others', f.amis[0], 1);
    const other = (await provider.describeGroup('others')).instances[0]?.id ?? '';
    await provider.removeInstance('workers', other);
    assert.equal((await provider.describeGroup('others')).instances.filter((i) => i.state === 'running').length, 1);
    assert.equal((await provider.describeGroup('workers')).targetSize, 1);
  });

  it('a missing group is NotFound; a wrong image is Permanent; both name the group', async () => {
    await assert.rejects(
      provider.describeGroup('nope'),
      (err: unknown) =>
        err instanceof CloudError &&
        err.code === 'NotFound' &&
        err.data.groupId === 'nope' &&
        /check the ScalingGroup's groupId/.test(err.message),
    );
    await createGroup(f, 'workers', f.amis[0], 0);
    await assert.rejects(
      provider.setGroupImage('workers', 'ubuntu:24.04'),
      (err: unknown) => err instanceof CloudError && err.code === 'Permanent' && /not an AMI id/.test(err.message),
    );
  });

  it('the group ARN is read too, and names the region', async () => {
    await createGroup(f, 'workers', f.amis[0], 1);
    const g = await f.asg.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: ['workers'] }));
    const arn = g.AutoScalingGroups?.[0]?.AutoScalingGroupARN ?? '';
    const elsewhere = new AwsProvider({
      endpoint: moto().endpoint,
      region: 'us-east-1',
      credentials: MOTO_CREDENTIALS,
    });
    const d = await elsewhere.describeGroup(arn);
    assert.equal(d.instances.length, 1);
    assert.equal(d.groupId, arn);
  });

  it('createProvider builds it from the config', () => {
    assert.ok(createProvider({ provider: 'aws', region: MOTO_REGION }) instanceof AwsProvider);
  });
});

describe('aws provider: unreachable and silent endpoints', function () {
  let silent: Server;
  let port = 0;
  const sockets: Socket[] = [];
  before(async () => {
    // accepts connections and never answers
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const addr = silent.address();
    port = typeof addr === 'object' && addr ? addr.port : 0;
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });

  it('a call that gets no answer within its timeout is Transient', async () => {
    const provider = new AwsProvider({
      endpoint: `http://127.0.0.1:${port}`,
      region: MOTO_REGION,
      credentials: MOTO_CREDENTIALS,
      timeoutMs: 300,
    });
    const started = Date.now();
    await assert.rejects(
      provider.describeGroup('workers'),
      (err: unknown) => err instanceof CloudError && err.code === 'Transient' && /no answer/.test(err.message),
    );
    assert.ok(Date.now() - started < 5_000, 'gave up at the deadline');
  });

  it('a refused connection is Transient', async () => {
    const provider = new AwsProvider({
      endpoint: 'http://127.0.0.1:1',
      region: MOTO_REGION,
      credentials: MOTO_CREDENTIALS,
      timeoutMs: 5_000,
    });
    await assert.rejects(
      provider.listGroups(),
      (err: unknown) => err instanceof CloudError && err.code === 'Transient',
    );
  });
});
