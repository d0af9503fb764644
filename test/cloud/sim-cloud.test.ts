import { strict as assert } from 'node:assert';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CloudError } from '../../src/cloud/provider.js';
import { ManualClock } from '../../src/cloud/sim/clock.js';
import { SimCloud } from '../../src/cloud/sim/cloud.js';
import { MemoryNodeRegistry } from '../../src/cloud/sim/nodes.js';
import { SimProvider } from '../../src/cloud/sim/provider.js';
import { FileStateStore, STATE_FILE, SimStateError } from '../../src/cloud/sim/state.js';
import { smallConfig } from './sim-fixtures.js';

function isCloudError(code: CloudError['code'], pattern: RegExp) {
  return (err: unknown): boolean => err instanceof CloudError && err.code === code && pattern.test(err.message);
}

describe('sim cloud (in-process, manual clock)', () => {
  let dir: string;
  let clock: ManualClock;
  let nodes: MemoryNodeRegistry;
  const opened: SimCloud[] = [];

  async function open(config = smallConfig()): Promise<SimCloud> {
    const cloud = await SimCloud.open({ config, store: new FileStateStore(dir), nodes, clock });
    opened.push(cloud);
    return cloud;
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'drydock-sim-'));
    clock = new ManualClock();
    nodes = new MemoryNodeRegistry();
  });
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the configured groups; instances are pending until their boot delay has passed', async () => {
    const cloud = await open();
    assert.deepEqual(await cloud.listGroups(), ['cp', 'workers']);
    const before = await cloud.describeGroup('workers');
    assert.equal(before.targetSize, 3);
    assert.deepEqual(
      before.instances.map((i) => [i.id, i.state, i.image, i.providerID]),
      [
        ['i-0001', 'pending', 'os-v1', 'sim://workers/i-0001'],
        ['i-0002', 'pending', 'os-v1', 'sim://workers/i-0002'],
        ['i-0003', 'pending', 'os-v1', 'sim://workers/i-0003'],
      ],
    );
    assert.equal(nodes.nodes.size, 0);

    await clock.advance(9_999);
    assert.equal(nodes.nodes.size, 0);
    await clock.advance(1);
    assert.deepEqual([...nodes.nodes.keys()].sort(), [
      'cp-i-0001',
      'workers-i-0001',
      'workers-i-0002',
      'workers-i-0003',
    ]);
    assert.ok((await cloud.describeGroup('workers')).instances.every((i) => i.state === 'running'));
  });

  it('registers Nodes the way KWOK and drydock expect', async () => {
    await open();
    await clock.advance(10_000);
    const worker = nodes.nodes.get('workers-i-0002');
    assert.deepEqual(worker?.metadata?.labels, {
      pool: 'general',
      'kubernetes.io/hostname': 'workers-i-0002',
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'node-role.kubernetes.io/worker': '',
      type: 'kwok',
      'sim.drydock.dev/group': 'workers',
      'sim.drydock.dev/instance': 'i-0002',
      'sim.drydock.dev/image': 'os-v1',
    });
    assert.equal(worker?.metadata?.annotations?.['kwok.x-k8s.io/node'], 'fake');
    assert.equal(worker?.metadata?.annotations?.['sim.drydock.dev/image'], 'os-v1');
    assert.equal(worker?.spec?.providerID, 'sim://workers/i-0002');
    assert.equal(worker?.spec?.taints, undefined);
    assert.deepEqual(worker?.status?.allocatable, { cpu: '4', memory: '16Gi', pods: '110' });
    assert.equal(worker?.status?.nodeInfo?.osImage, 'os-v1');

    const cp = nodes.nodes.get('cp-i-0001');
    assert.equal(cp?.metadata?.labels?.['node-role.kubernetes.io/control-plane'], '');
    assert.deepEqual(cp?.spec?.taints, [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]);
  });

  it('a new image applies to new instances only; a surge boots on it', async () => {
    const cloud = await open();
    await clock.advance(10_000);
    await cloud.setGroupImage('workers', 'os-v2');
    const ids = await cloud.addCapacity('workers', 2);
    assert.deepEqual(ids, ['i-0004', 'i-0005']);
    const group = await cloud.describeGroup('workers');
    assert.equal(group.image, 'os-v2');
    assert.equal(group.targetSize, 5);
    assert.deepEqual(
      group.instances.map((i) => `${i.id}:${i.image}:${i.state}`),
      [
        'i-0001:os-v1:running',
        'i-0002:os-v1:running',
        'i-0003:os-v1:running',
        'i-0004:os-v2:pending',
        'i-0005:os-v2:pending',
      ],
    );
    await clock.advance(10_000);
    assert.equal(nodes.nodes.get('workers-i-0005')?.metadata?.labels?.['sim.drydock.dev/image'], 'os-v2');
  });

  it('removing an instance removes its Node at once; the instance is terminating, then gone', async () => {
    const cloud = await open();
    await clock.advance(10_000);
    await cloud.removeInstance('workers', 'i-0002');
    assert.equal(nodes.nodes.has('workers-i-0002'), false);
    let group = await cloud.describeGroup('workers');
    assert.equal(group.targetSize, 2);
    assert.equal(group.instances.find((i) => i.id === 'i-0002')?.state, 'terminating');
    // Idempotent, also while terminating and once gone.
    await cloud.removeInstance('workers', 'i-0002');
    await clock.advance(4_000);
    group = await cloud.describeGroup('workers');
    assert.deepEqual(
      group.instances.map((i) => i.id),
      ['i-0001', 'i-0003'],
    );
    await cloud.removeInstance('workers', 'i-0002');
  });

  it('an instance removed while pending never joins', async () => {
    const cloud = await open();
    await cloud.removeInstance('workers', 'i-0001');
    await clock.advance(10_000);
    assert.equal(nodes.nodes.has('workers-i-0001'), false);
    assert.equal(nodes.nodes.has('workers-i-0002'), true);
  });

  it('bad input: unknown group, empty image, bad count — typed errors naming group and cause', async () => {
    const cloud = await open();
    await assert.rejects(
      cloud.describeGroup('nope'),
      isCloudError('NotFound', /group "nope" does not exist \(known groups: cp, workers\)/),
    );
    await assert.rejects(cloud.setGroupImage('nope', 'x'), isCloudError('NotFound', /"nope"/));
    await assert.rejects(
      cloud.setGroupImage('workers', ''),
      isCloudError('Permanent', /image for group "workers" is empty/),
    );
    await assert.rejects(
      cloud.setGroupImage('workers', ' os-v2'),
      isCloudError('Permanent', /"workers".*not a valid image/),
    );
    await assert.rejects(
      cloud.removeInstance('workers', 'workers-i-0001'),
      isCloudError('Permanent', /"workers-i-0001" is not an instance id of group "workers"/),
    );
    for (const count of [0, -1, 1.5, Number.NaN]) {
      await assert.rejects(
        cloud.addCapacity('workers', count),
        isCloudError('Permanent', /group "workers".*whole number/),
      );
    }
    // Nothing changed.
    const group = await cloud.describeGroup('workers');
    assert.equal(group.image, 'os-v1');
    assert.equal(group.instances.length, 3);
  });

  it('an exhausted quota is QuotaExceeded with the limit, and creates nothing', async () => {
    const cloud = await open(smallConfig({ quota: { maxInstancesPerGroup: 4, maxInstancesTotal: 6 } }));
    await assert.rejects(cloud.addCapacity('workers', 2), (err: unknown) => {
      assert.ok(err instanceof CloudError);
      assert.equal(err.code, 'QuotaExceeded');
      assert.match(err.message, /group "workers".*4 instances per group, 3 in use/);
      assert.deepEqual(err.data, { groupId: 'workers', quota: { scope: 'group', limit: 4, inUse: 3, requested: 2 } });
      return true;
    });
    await cloud.addCapacity('workers', 1);
    await assert.rejects(
      cloud.addCapacity('cp', 2),
      isCloudError('QuotaExceeded', /"cp".*6 instances in total, 5 in use/),
    );
    // Terminating instances hold quota until they are gone.
    await cloud.removeInstance('workers', 'i-0001');
    await assert.rejects(cloud.addCapacity('workers', 1), isCloudError('QuotaExceeded', /per group/));
    await clock.advance(4_000);
    assert.deepEqual(await cloud.addCapacity('workers', 1), ['i-0005']);
  });

  it('injected API faults: typed errors that change nothing', async () => {
    const cloud = await open(smallConfig({ faults: { retryAfterSeconds: 3 } }));
    await cloud.injectApiFaults('Throttled', 1);
    await cloud.injectApiFaults('Transient', 1);
    await assert.rejects(
      cloud.addCapacity('workers', 1),
      (err: unknown) => err instanceof CloudError && err.code === 'Throttled' && err.data.retryAfterSeconds === 3,
    );
    await assert.rejects(cloud.setGroupImage('workers', 'os-v2'), isCloudError('Transient', /"workers"/));
    const group = await cloud.describeGroup('workers');
    assert.equal(group.instances.length, 3);
    assert.equal(group.image, 'os-v1');
  });

  it('boots that never join: the instance runs, no Node appears', async () => {
    const cloud = await open();
    await cloud.failNextBoots(1);
    await clock.advance(10_000);
    const running = (await cloud.describeGroup('workers')).instances.filter((i) => i.state === 'running');
    assert.equal(running.length, 3);
    // Timers due together fire in creation order: cp's instance boots first.
    assert.equal(nodes.nodes.has('cp-i-0001'), false);
    assert.deepEqual([...nodes.nodes.keys()].sort(), ['workers-i-0001', 'workers-i-0002', 'workers-i-0003']);
  });

  it('latency delays calls on the world clock', async () => {
    const cloud = await open(smallConfig({ faults: { latencyMs: { min: 200, max: 200 } } }));
    let done = false;
    const call = cloud.listGroups().then(() => (done = true));
    await clock.advance(199);
    assert.equal(done, false);
    await clock.advance(1);
    await call;
    assert.equal(done, true);
  });

  it('a restart keeps every instance, its state and its pending timers', async () => {
    const first = await open();
    await clock.advance(10_000);
    await first.setGroupImage('workers', 'os-v2');
    await first.addCapacity('workers', 1);
    await first.removeInstance('workers', 'i-0001');
    const before = await first.describeGroup('workers');
    await first.close();

    const second = await open();
    assert.deepEqual(await second.describeGroup('workers'), before);
    // The surge instance still boots, the removed one still goes, ids are not reused.
    await clock.advance(10_000);
    const after = await second.describeGroup('workers');
    assert.deepEqual(
      after.instances.map((i) => `${i.id}:${i.state}`),
      ['i-0002:running', 'i-0003:running', 'i-0004:running'],
    );
    assert.equal(nodes.nodes.get('workers-i-0004')?.metadata?.labels?.['sim.drydock.dev/image'], 'os-v2');
    assert.deepEqual(await second.addCapacity('workers', 1), ['i-0005']);
  });

  it('writes state atomically: one file, no temporary files left behind', async () => {
    const cloud = await open();
    await cloud.addCapacity('workers', 2);
    assert.deepEqual(await readdir(dir), [STATE_FILE]);
    const saved = JSON.parse(await readFile(path.join(dir, STATE_FILE), 'utf8')) as {
      version: number;
      groups: Array<{ id: string; instances: unknown[] }>;
    };
    assert.equal(saved.version, 1);
    assert.deepEqual(
      saved.groups.map((g) => [g.id, g.instances.length]),
      [
        ['cp', 1],
        ['workers', 5],
      ],
    );
  });

  it('a corrupt state file is refused with the file named, not overwritten', async () => {
    await writeFile(path.join(dir, STATE_FILE), '{"version": 1, "groups": [');
    await assert.rejects(
      open(),
      (err: unknown) =>
        err instanceof SimStateError &&
        err.code === 'InvalidSimState' &&
        err.message.includes(STATE_FILE) &&
        /remove it/.test(err.message),
    );
    assert.equal(await readFile(path.join(dir, STATE_FILE), 'utf8'), '{"version": 1, "groups": [');
  });

  it('a Node the cluster refuses is retried until it registers', async () => {
    let refusals = 2;
    const flaky = new MemoryNodeRegistry();
    const register = flaky.register.bind(flaky);
    flaky.register = async (node) => {
      if (refusals-- > 0) throw Object.assign(new Error('unavailable'), { code: 503 });
      return register(node);
    };
    const cloud = await SimCloud.open({
      config: smallConfig({ groups: [{ id: 'w', size: 1, image: 'a' }] }),
      nodes: flaky,
      clock,
      retryDelayMs: 1000,
    });
    opened.push(cloud);
    await clock.advance(10_000);
    assert.equal(flaky.nodes.size, 0);
    await clock.advance(2_000);
    assert.deepEqual([...flaky.nodes.keys()], ['w-i-0001']);
  });

  it('SimProvider maps providerIDs back to instances', async () => {
    const provider = new SimProvider(await open());
    assert.deepEqual(provider.instanceForProviderID('sim://workers/i-0003'), {
      groupId: 'workers',
      instanceId: 'i-0003',
    });
    for (const foreign of ['aws:///eu-central-1a/i-0abc', 'sim://workers', 'sim://Workers/i-1', 'kwok://x']) {
      assert.equal(provider.instanceForProviderID(foreign), undefined, foreign);
    }
  });
});
