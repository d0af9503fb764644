/** The service against a real API server: an idle reconcile makes zero API requests. */
import assert from 'node:assert/strict';
import { useControlPlane, eventually } from '../support/control-plane.js';
import { startIdleWorld, type IdleWorld } from './idle-world.js';
import { describeSeen } from './counting-proxy.js';

describe('service: idle reconciles', function () {
  this.timeout(120_000);
  const cp = useControlPlane();
  let world: IdleWorld;

  before(async function () {
    this.timeout(120_000);
    world = await startIdleWorld(cp().adminKubeConfig(), cp().kubeconfigPath, 50);
    await eventually(
      'service synced, leading and settled',
      async () => {
        const s = world.service.state();
        if (
          s.synced &&
          s.leading &&
          s.rounds > 0 &&
          s.lastOutcome !== undefined &&
          s.lastOutcome.plan.actions.length === 0
        )
          return true;
        throw new Error(
          `synced=${s.synced} leading=${s.leading} rounds=${s.rounds} actions=${JSON.stringify(s.lastOutcome?.plan.actions.slice(0, 3))} waits=${JSON.stringify(s.lastOutcome?.plan.waits.slice(0, 3))} status=${JSON.stringify(s.lastStatus?.lastError ?? s.lastStatus?.loadErrors)}`,
        );
      },
      { timeoutMs: 60_000 },
    );
  });
  after(async () => world?.close());
  const proxy = () => {
    assert.ok(world.proxy, 'the proxy runs in this process');
    return world.proxy;
  };

  it('makes zero API requests over 50 idle reconciles (counted by a proxy in front of the API server)', async () => {
    const r = await world.idleRounds(50);
    assert.ok(r.rounds >= 50);
    assert.equal(r.requests, 0, r.seen.map(describeSeen).join('\n'));
  });

  it('really goes through the proxy: the initial lists and watches were counted there', () => {
    const lists = proxy().requests.filter((r) => !r.watch && !r.lease && r.method === 'GET');
    const watches = proxy().requests.filter((r) => r.watch);
    assert.ok(lists.some((r) => r.path.startsWith('/api/v1/nodes')));
    assert.ok(watches.some((r) => r.path.startsWith('/api/v1/nodes')));
    assert.ok(
      proxy().requests.some((r) => r.lease),
      'lease renewals are counted apart',
    );
  });

  it('counts its own requests in /metrics, lease apart from cluster', async () => {
    const text = await world.service.metrics.registry.metrics();
    assert.match(text, /drydock_kube_api_requests_total\{client="cluster",verb="GET"\} \d+/);
    assert.match(text, /drydock_kube_api_requests_total\{client="lease",verb="(GET|PUT|POST)"\} \d+/);
    assert.match(text, /drydock_reconcile_duration_seconds_count\{result="ok"\} \d+/);
  });
});

describe('service: idle reconciles, counted by a proxy in a process of its own (the scale benchmark)', function () {
  this.timeout(120_000);
  const cp = useControlPlane();
  let world: IdleWorld;

  before(async function () {
    this.timeout(120_000);
    world = await startIdleWorld(cp().adminKubeConfig(), cp().kubeconfigPath, 5, 3, undefined, true);
    await eventually('service settled', () => {
      const s = world.service.state();
      return Promise.resolve(s.leading && s.lastOutcome !== undefined && s.lastOutcome.plan.actions.length === 0);
    });
  });
  after(async () => world?.close());

  it('counts the initial lists and watches and the lease apart, and zero requests per idle reconcile', async () => {
    assert.equal(world.proxy, undefined);
    assert.ok((await world.clusterRequests()) >= 10, 'the lists and watches went through the proxy');
    assert.ok((await world.leaseRequests()) > 0, 'lease requests are counted apart');
    const r = await world.idleRounds(20);
    assert.ok(r.rounds >= 20);
    assert.equal(r.requests, 0, r.seen.map(describeSeen).join('\n'));
  });

  it('hands back which requests it saw, for a report: the initial lists and watches, no lease', async () => {
    const seen = await world.seenSince(0);
    assert.ok(seen.some((r) => !r.watch && r.method === 'GET' && r.path.startsWith('/api/v1/nodes?')));
    assert.ok(seen.some((r) => r.watch && r.path.startsWith('/api/v1/nodes?')));
    assert.ok(!seen.some((r) => r.path.includes('/apis/coordination.k8s.io/')));
    assert.deepEqual(await world.seenSince(await world.mark()), []);
  });
});
