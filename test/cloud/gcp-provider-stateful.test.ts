/**
 * The GCP provider against a stateful Compute fake: operations that stay RUNNING for a few
 * waits, a group that creates instances on its current template and deletes them over time,
 * and throttling with Retry-After. The answer-table tests (gcp-provider.test.ts) pin the exact
 * requests; these pin what the provider makes of a group that changes under it.
 */
import { strict as assert } from 'node:assert';
import { CloudError, derivedTemplateName, GcpProvider } from '../../src/cloud/index.js';
import { startGcpFake, staticGcpAuth, type GcpFake } from '../support/gcp-fake.js';

const PROJECT = 'proj-123456';
const ZONE = 'europe-west3-a';
const V1 = 'projects/images-prj/global/images/node-os-v1';
const V2 = 'projects/images-prj/global/images/node-os-v2';
const BOOT_MS = 300;
const DELETE_MS = 200;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('gcp provider (stateful Compute fake)', () => {
  let fake: GcpFake;
  let provider: GcpProvider;
  let group = '';
  beforeEach(async () => {
    fake = await startGcpFake({ pollsPerOperation: 3, waitMs: 10, bootMs: BOOT_MS, deleteMs: DELETE_MS });
    const template = fake.createTemplate(PROJECT, 'workers-v1', V1);
    group = fake.createGroup(PROJECT, ZONE, 'workers', template, 3);
    provider = new GcpProvider({ endpoint: fake.url, authClient: staticGcpAuth, pageSize: 2, timeoutMs: 30_000 });
  });
  afterEach(() => fake.close());

  const waits = (): number => fake.requests.filter((r) => r.path.includes('/wait')).length;

  it('addCapacity waits for the resize to be DONE; the new instance is pending, then running', async () => {
    await provider.describeGroup(group);
    await sleep(BOOT_MS);
    const before = waits();
    assert.deepEqual(await provider.addCapacity(group, 1), []);
    assert.equal(waits() - before, 3, 'the operation was RUNNING at two waits and DONE at the third');
    const d = await provider.describeGroup(group);
    assert.equal(d.targetSize, 4);
    assert.deepEqual(
      d.instances.map((i) => i.state),
      ['running', 'running', 'running', 'pending'],
    );
    const added = d.instances[3]?.id ?? '';
    await sleep(BOOT_MS);
    const later = await provider.describeGroup(group);
    assert.equal(later.instances.find((i) => i.id === added)?.state, 'running', 'the same instance, by name');
  });

  it('setGroupImage changes what new instances run; instances already there keep theirs', async () => {
    await provider.setGroupImage(group, V2);
    await provider.addCapacity(group, 1);
    const d = await provider.describeGroup(group);
    assert.equal(d.image, V2);
    assert.deepEqual(
      d.instances.map((i) => i.image),
      [V1, V1, V1, V2],
    );
    const inserts = (): number =>
      fake.requests.filter((r) => r.method === 'POST' && /instanceTemplates$/.test(r.path.split('?')[0] ?? '')).length;
    assert.equal(inserts(), 1);
    await provider.setGroupImage(group, V2);
    assert.equal(inserts(), 1, 'the group already has the image: nothing is inserted');
  });

  it('setGroupImage after an attempt that inserted the template but did not set it', async () => {
    fake.createTemplate(PROJECT, derivedTemplateName('workers-v1', V2), V2);
    await provider.setGroupImage(group, V2);
    assert.equal(fake.templateImage(fake.group(group).template), V2);
  });

  it('removeInstance lowers the target size; the instance is terminating, then gone, and not deleted twice', async () => {
    const victim = (await provider.describeGroup(group)).instances[0]?.id ?? '';
    await provider.removeInstance(group, victim);
    const d = await provider.describeGroup(group);
    assert.equal(d.targetSize, 2);
    assert.equal(d.instances.find((i) => i.id === victim)?.state, 'terminating');
    await provider.removeInstance(group, victim);
    assert.equal(fake.requests.filter((r) => r.path.includes('/deleteInstances')).length, 1);
    await sleep(DELETE_MS);
    const after = await provider.describeGroup(group);
    assert.equal(after.instances.length, 2);
    assert.ok(!after.instances.some((i) => i.id === victim));
  });

  it("a 429 burst is Throttled with the answer's Retry-After, then calls go through", async () => {
    fake.throttle(2, 7);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(provider.describeGroup(group), (e: unknown) => {
        assert.ok(e instanceof CloudError, String(e));
        assert.equal(e.code, 'Throttled');
        assert.equal(e.data.retryAfterSeconds, 7);
        assert.match(e.message, /rateLimitExceeded/);
        return true;
      });
    }
    assert.equal(fake.throttled, 2);
    assert.equal((await provider.describeGroup(group)).targetSize, 3);
  });

  it('a 429 while waiting on a resize is Throttled; the resize itself went through', async () => {
    await provider.describeGroup(group);
    // The resize is answered, its first wait is throttled.
    const before = fake.requests.length;
    const resized = provider.addCapacity(group, 1);
    while (!fake.requests.slice(before).some((r) => r.path.includes('/resize'))) await sleep(1);
    fake.throttle(1, 3);
    await assert.rejects(resized, (e: unknown) => e instanceof CloudError && e.code === 'Throttled');
    assert.equal(fake.group(group).targetSize, 4);
  });

  it('a group that does not exist is NotFound', async () => {
    await assert.rejects(
      provider.describeGroup(`projects/${PROJECT}/zones/${ZONE}/instanceGroupManagers/nope`),
      (e: unknown) => e instanceof CloudError && e.code === 'NotFound' && /was not found/.test(e.message),
    );
  });
});
