import { strict as assert } from 'node:assert';
import { CloudError } from '../../src/cloud/provider.js';
import { ManualClock } from '../../src/cloud/sim/clock.js';
import { SimCloud } from '../../src/cloud/sim/cloud.js';
import { cloudErrorFromResponse, parseRetryAfter } from '../../src/cloud/sim/http-api.js';
import { SimHttpProvider } from '../../src/cloud/sim/http-client.js';
import { MemoryNodeRegistry } from '../../src/cloud/sim/nodes.js';
import { startSimServer, type SimServer } from '../../src/cloud/sim/server.js';
import { smallConfig } from './sim-fixtures.js';

describe('sim cloud over HTTP', () => {
  let clock: ManualClock;
  let nodes: MemoryNodeRegistry;
  let cloud: SimCloud;
  let server: SimServer;
  let client: SimHttpProvider;

  beforeEach(async () => {
    clock = new ManualClock();
    nodes = new MemoryNodeRegistry();
    cloud = await SimCloud.open({
      config: smallConfig({ quota: { maxInstancesPerGroup: 4 }, faults: { retryAfterSeconds: 5 } }),
      nodes,
      clock,
    });
    server = await startSimServer({ cloud });
    client = new SimHttpProvider(server.url);
  });
  afterEach(async () => {
    await server.close();
    await cloud.close();
  });

  it('serves the provider interface', async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(await client.listGroups(), ['cp', 'workers']);
    await clock.advance(10_000);
    await client.setGroupImage('workers', 'os-v2');
    assert.deepEqual(await client.addCapacity('workers', 1), ['i-0004']);
    await client.removeInstance('workers', 'i-0001');
    await client.removeInstance('workers', 'i-0001');
    // What the client returns is what the in-process cloud says.
    assert.deepEqual(await client.describeGroup('workers'), await cloud.describeGroup('workers'));
    const group = await client.describeGroup('workers');
    assert.deepEqual(
      group.instances.map((i) => `${i.id}:${i.image}:${i.state}`),
      ['i-0001:os-v1:terminating', 'i-0002:os-v1:running', 'i-0003:os-v1:running', 'i-0004:os-v2:pending'],
    );
    assert.deepEqual(client.instanceForProviderID('sim://workers/i-0004'), {
      groupId: 'workers',
      instanceId: 'i-0004',
    });
  });

  it('encodes groupIds with slashes and the server decodes them whole', async () => {
    const gcp = 'projects/my-project/zones/europe-west3-a/instanceGroupManagers/workers';
    await assert.rejects(client.describeGroup(gcp), (err: unknown) => {
      assert.ok(err instanceof CloudError);
      assert.equal(err.code, 'NotFound');
      assert.equal(err.data.groupId, gcp);
      assert.ok(err.message.includes(`group "${gcp}" does not exist`), err.message);
      return true;
    });
  });

  describe('every error arrives as its typed CloudError', () => {
    const cases: Array<
      [string, (c: SimHttpProvider) => Promise<unknown>, CloudError['code'], RegExp, Record<string, unknown>]
    > = [
      [
        'unknown group',
        (c) => c.addCapacity('nope', 1),
        'NotFound',
        /group "nope" does not exist/,
        { groupId: 'nope' },
      ],
      [
        'empty image',
        (c) => c.setGroupImage('workers', ''),
        'Permanent',
        /image for group "workers" is empty/,
        { groupId: 'workers' },
      ],
      [
        'bad count',
        (c) => c.addCapacity('workers', 0),
        'Permanent',
        /group "workers".*whole number/,
        { groupId: 'workers' },
      ],
      [
        'exhausted quota',
        (c) => c.addCapacity('workers', 2),
        'QuotaExceeded',
        /group "workers".*quota of 4 instances per group, 3 in use/,
        { groupId: 'workers', quota: { scope: 'group', limit: 4, inUse: 3, requested: 2 } },
      ],
    ];
    for (const [name, call, code, message, data] of cases) {
      it(name, async () => {
        await assert.rejects(call(client), (err: unknown) => {
          assert.ok(err instanceof CloudError, String(err));
          assert.equal(err.code, code);
          assert.match(err.message, message);
          assert.deepEqual(err.data, data);
          return true;
        });
      });
    }

    it('injected throttling carries retry-after; injected 5xx is Transient; neither changes anything', async () => {
      await client.injectFaults('Throttled', 1);
      await client.injectFaults('Transient', 1);
      await assert.rejects(
        client.addCapacity('workers', 1),
        (err: unknown) =>
          err instanceof CloudError &&
          err.code === 'Throttled' &&
          err.data.retryAfterSeconds === 5 &&
          err.data.groupId === 'workers',
      );
      await assert.rejects(
        client.removeInstance('workers', 'i-0001'),
        (err: unknown) => err instanceof CloudError && err.code === 'Transient' && err.data.instanceId === 'i-0001',
      );
      assert.equal((await client.describeGroup('workers')).instances.length, 3);
    });

    it('the Retry-After header is sent', async () => {
      await client.injectFaults('Throttled', 1);
      const res = await fetch(`${server.url}/groups`);
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('retry-after'), '5');
      assert.deepEqual(((await res.json()) as { error: { code: string } }).error.code, 'Throttled');
    });

    it('injected boot failures: the instance runs but no Node joins', async () => {
      await client.injectFaults('BootFailure', 1);
      await clock.advance(10_000);
      assert.equal(nodes.nodes.size, 3);
    });

    it('an unreachable server is Transient', async () => {
      const gone = new SimHttpProvider(server.url);
      await server.close();
      await assert.rejects(
        gone.listGroups(),
        (err: unknown) => err instanceof CloudError && err.code === 'Transient' && /unreachable/.test(err.message),
      );
      server = await startSimServer({ cloud });
    });

    it('malformed requests are Permanent and say what to send', async () => {
      const res = await fetch(`${server.url}/groups/workers/capacity`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"count":"two"}',
      });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'Permanent');
      assert.match(body.error.message, /body must be \{"count": <whole number>\}/);
    });
  });

  it('fault settings can be read and changed, and out-of-range values are refused', async () => {
    await client.setFaults({ throttleRate: 0.5, latencyMs: { min: 0, max: 3 } });
    const settings = await client.getFaults();
    assert.equal(settings.throttleRate, 0.5);
    assert.deepEqual(settings.latencyMs, { min: 0, max: 3 });
    await assert.rejects(
      client.setFaults({ transientRate: 2 }),
      (err: unknown) =>
        err instanceof CloudError &&
        err.code === 'Permanent' &&
        /transientRate must be a number from 0 to 1/.test(err.message),
    );
    await assert.rejects(
      client.injectFaults('Nope' as 'Throttled'),
      (err: unknown) => err instanceof CloudError && err.code === 'Permanent' && /"kind" must be/.test(err.message),
    );
  });

  it('refuses a base URL that is not http(s)', () => {
    assert.throws(
      () => new SimHttpProvider('ftp://x'),
      (err: unknown) => err instanceof CloudError && err.code === 'Permanent',
    );
    assert.throws(
      () => new SimHttpProvider('not a url'),
      (err: unknown) => err instanceof CloudError && /not a URL/.test(err.message),
    );
  });
});

describe('sim cloud HTTP error mapping without a typed body', () => {
  const cases: Array<[number, string | null, unknown, CloudError['code'], number | undefined]> = [
    [429, '12', undefined, 'Throttled', 12],
    [429, null, undefined, 'Throttled', 1],
    [404, null, 'not json', 'NotFound', undefined],
    [502, null, '<html>bad gateway</html>', 'Transient', undefined],
    [500, null, { error: { code: 'Bogus', message: 'x' } }, 'Transient', undefined],
    [408, null, undefined, 'Transient', undefined],
    [400, null, undefined, 'Permanent', undefined],
    [503, '3', { error: { code: 'Throttled', message: 'slow down', data: {} } }, 'Throttled', 3],
  ];
  for (const [status, retryAfter, body, code, seconds] of cases) {
    it(`HTTP ${status}${retryAfter ? ` retry-after ${retryAfter}` : ''} → ${code}`, () => {
      const err = cloudErrorFromResponse(status, retryAfter, body, 'ctx');
      assert.equal(err.code, code);
      assert.equal(err.data.retryAfterSeconds, seconds);
    });
  }

  it('Retry-After as an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 12:00:30 GMT', now), 30);
    assert.equal(parseRetryAfter('soon', now), undefined);
  });
});
