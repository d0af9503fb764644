/** Watch-backed observation against a real API server. */
import assert from 'node:assert/strict';
import { CoreV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { useControlPlane, eventually, fakeNode } from '../support/control-plane.js';
import { CountingKubeConfig, observe, startClusterCache, type ClusterCache } from '../../src/observe/index.js';
import { watchCollection } from '../../src/observe/informer.js';
import type { DesiredState } from '../../src/spec/model.js';

const logger = pino({ level: 'silent' });
const noSpecs: Pick<DesiredState, 'scalingGroups' | 'autoscalingStrategies'> = {
  scalingGroups: [],
  autoscalingStrategies: [],
};

describe('observe against a real API server', function () {
  this.timeout(60_000);
  const cp = useControlPlane();
  let kc: CountingKubeConfig;
  let cache: ClusterCache;
  let changes = 0;

  before(async () => {
    kc = new CountingKubeConfig();
    kc.loadFromString(cp().kubeconfig);
    const admin = cp().adminKubeConfig().makeApiClient(CoreV1Api);
    await admin.createNode({ body: fakeNode('obs-a', { providerID: 'sim://w/i-1' }) });
    await admin.createNamespace({ body: { metadata: { name: 'obs' } } });
    await admin.createNamespacedPod({
      namespace: 'obs',
      body: {
        metadata: { name: 'web-1', labels: { app: 'web' } },
        spec: { nodeName: 'obs-a', containers: [{ name: 'c', image: 'x' }] },
      },
    });
    await cp()
      .adminKubeConfig()
      .makeApiClient(PolicyV1Api)
      .createNamespacedPodDisruptionBudget({
        namespace: 'obs',
        body: { metadata: { name: 'web' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } } },
      });
    cache = startClusterCache({ kubeConfig: kc, logger, onChange: () => changes++ });
    await cache.synced();
  });
  after(async () => cache?.stop());

  it('sees nodes, pods and the PDBs covering them after the initial list', async () => {
    const o = await observe(noSpecs, cache, () => undefined);
    assert.ok(o.nodes.some((n) => n.name === 'obs-a' && n.providerID === 'sim://w/i-1'));
    const pod = o.pods.find((p) => p.namespace === 'obs' && p.name === 'web-1');
    assert.deepEqual(pod?.pdbs, ['obs/web']);
    assert.ok(o.pdbs.some((p) => p.name === 'web'));
  });

  it('makes zero API requests per idle reconcile', async () => {
    const before = kc.requestCount;
    for (let i = 0; i < 20; i++) await observe(noSpecs, cache, () => undefined);
    assert.equal(kc.requestCount - before, 0);
  });

  it('follows changes through the watch, still without a request of its own', async () => {
    const before = kc.requestCount;
    const changesBefore = changes;
    await cp()
      .adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .createNode({ body: fakeNode('obs-b') });
    await eventually('new node in the snapshot', async () =>
      (await observe(noSpecs, cache, () => undefined)).nodes.some((n) => n.name === 'obs-b'),
    );
    assert.ok(changes > changesBefore, 'change callback fired');
    assert.equal(kc.requestCount - before, 0);
  });

  it('returns the same frozen snapshot while nothing changes', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const a = cache.snapshot();
    const b = cache.snapshot();
    assert.equal(a, b);
    assert.ok(Object.isFrozen(a.nodes));
  });

  it('restarts a failed list with backoff and then syncs', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    let calls = 0;
    const errors: unknown[] = [];
    const c = watchCollection({
      kubeConfig: kc,
      name: 'nodes',
      path: '/api/v1/nodes',
      logger,
      onChange: () => undefined,
      onError: (e) => errors.push(e),
      backoff: { initialMs: 50, maxMs: 200 },
      list: async () => {
        calls += 1;
        if (calls < 3) throw Object.assign(new Error('boom'), { statusCode: 500 });
        return core.listNode();
      },
    });
    try {
      await c.synced;
      assert.equal(calls, 3);
      assert.equal(errors.length, 2);
      assert.ok(c.list().some((n) => n.metadata?.name === 'obs-a'));
    } finally {
      await c.stop();
    }
  });
});
