/**
 * The Azure provider against a stateful Resource Manager fake: operations polled through
 * Azure-AsyncOperation that stay InProgress for a few polls, a scale set that creates VMs on its
 * current model and deletes them over time, paged lists, and throttling with Retry-After. The
 * answer-table tests (azure-provider.test.ts) pin the exact requests; these pin what the
 * provider makes of a scale set that changes under it.
 */
import { strict as assert } from 'node:assert';
import { AzureProvider, CloudError } from '../../src/cloud/index.js';
import { startAzureFake, type AzureFake } from '../support/azure-fake.js';

const SUB = '00000000-1111-2222-3333-444444444444';
const GALLERY = `/subscriptions/${SUB}/resourceGroups/images-rg/providers/Microsoft.Compute/galleries/nodes/images/node-os/versions`;
const IMG1 = `${GALLERY}/1.0.0`;
const IMG2 = `${GALLERY}/2.0.0`;
const BOOT_MS = 300;
const DELETE_MS = 200;
const staticCredential = {
  getToken: async () => ({ token: 'test-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('azure provider (stateful Resource Manager fake)', () => {
  let fake: AzureFake;
  let provider: AzureProvider;
  let vmss = '';
  beforeEach(async () => {
    fake = await startAzureFake({ pollsPerOperation: 3, bootMs: BOOT_MS, deleteMs: DELETE_MS, pageSize: 2 });
    vmss = fake.createScaleSet(SUB, 'cluster-rg', 'workers', { id: IMG1 }, 3);
    provider = new AzureProvider({
      endpoint: fake.url,
      credential: staticCredential,
      ca: fake.ca,
      pollIntervalMs: 10,
      timeoutMs: 30_000,
    });
  });
  afterEach(() => fake.close());

  const polls = (): number => fake.requests.filter((r) => r.path.includes('/operations/')).length;

  it('addCapacity polls the operation until Succeeded; the new VM is pending, then running', async () => {
    await provider.describeGroup(vmss);
    await sleep(BOOT_MS);
    await provider.addCapacity(vmss, 1);
    assert.ok(polls() >= 3, `polled until Succeeded (${polls()} polls)`);
    const d = await provider.describeGroup(vmss);
    assert.equal(d.targetSize, 4);
    assert.deepEqual(
      d.instances.map((i) => [i.id, i.state]),
      [
        ['0', 'running'],
        ['1', 'running'],
        ['2', 'running'],
        ['3', 'pending'],
      ],
    );
    await sleep(BOOT_MS);
    assert.equal((await provider.describeGroup(vmss)).instances[3]?.state, 'running');
  });

  it('setGroupImage changes the model; new VMs run it, VMs already there keep theirs', async () => {
    await provider.setGroupImage(vmss, IMG2);
    assert.deepEqual(fake.scaleSet(vmss).imageReference, { id: IMG2 });
    await provider.addCapacity(vmss, 1);
    const d = await provider.describeGroup(vmss);
    assert.equal(d.image, IMG2);
    assert.deepEqual(
      d.instances.map((i) => i.image),
      [IMG1, IMG1, IMG1, IMG2],
    );
    const patches = (): number => fake.requests.filter((r) => r.method === 'PATCH').length;
    assert.equal(patches(), 2);
    await provider.setGroupImage(vmss, IMG2);
    assert.equal(patches(), 2, 'the model already has the image: nothing is patched');
  });

  it('removeInstance lowers the capacity; the VM is terminating, then gone, and not deleted twice', async () => {
    await provider.removeInstance(vmss, '1');
    const d = await provider.describeGroup(vmss);
    assert.equal(d.targetSize, 2);
    assert.equal(d.instances.find((i) => i.id === '1')?.state, 'terminating');
    await provider.removeInstance(vmss, '1');
    assert.equal(fake.requests.filter((r) => r.method === 'POST').length, 1);
    await sleep(DELETE_MS);
    assert.deepEqual(
      (await provider.describeGroup(vmss)).instances.map((i) => i.id),
      ['0', '2'],
    );
  });

  it("a 429 burst is Throttled with the answer's Retry-After, then calls go through", async () => {
    fake.throttle(2, 7);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(provider.describeGroup(vmss), (e: unknown) => {
        assert.ok(e instanceof CloudError, String(e));
        assert.equal(e.code, 'Throttled');
        assert.equal(e.data.retryAfterSeconds, 7);
        return true;
      });
    }
    assert.equal(fake.throttled, 2);
    assert.equal((await provider.describeGroup(vmss)).targetSize, 3);
  });

  it('a 429 while polling a capacity change is Throttled; the change itself went through', async () => {
    await provider.describeGroup(vmss);
    fake.throttle(1, 3, (r) => r.path.includes('/operations/'));
    await assert.rejects(
      provider.addCapacity(vmss, 1),
      (e: unknown) => e instanceof CloudError && e.code === 'Throttled' && e.data.retryAfterSeconds === 3,
    );
    assert.equal(fake.throttled, 1);
    assert.equal(fake.scaleSet(vmss).capacity, 4);
  });

  it('a scale set that does not exist is NotFound', async () => {
    await assert.rejects(
      provider.describeGroup(vmss.replace(/workers$/, 'nope')),
      (e: unknown) => e instanceof CloudError && e.code === 'NotFound' && /ResourceNotFound/.test(e.message),
    );
  });
});
