/** Watch-backed observation against a real API server. */
import assert from 'node:assert/strict';
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import { annotateNode } from '../../src/execute/actions.js';
import { createJob } from '../../src/execute/node-jobs.js';
import { pinnedJob } from '../../src/execute/jobs/node-job.js';
import type { Written } from '../../src/kube/written.js';
import { pino } from 'pino';
import { useControlPlane, eventually, fakeNode } from '../support/control-plane.js';
import { CountingKubeConfig, observe, startClusterCache, type ClusterCache } from '../../src/observe/index.js';
import { watchCollection, type CollectionChange, type CollectionOptions } from '../../src/kube/informer.js';
import { sameTrimmed, trimNode } from '../../src/observe/trim.js';
import type { DesiredState } from '../../src/spec/model.js';

const logger = pino({ level: 'silent' });
const noSpecs: Pick<DesiredState, 'scalingGroups' | 'autoscalingStrategies'> = {
  scalingGroups: [],
  autoscalingStrategies: [],
};

/** A node as the cache keeps it, less what a kubelet heartbeat changes (and the object's version). */
function withoutHeartbeat(n: V1Node | undefined): unknown {
  if (n === undefined) return undefined;
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = n.metadata ?? {};
  const conditions = (n.status?.conditions ?? []).map(({ lastHeartbeatTime: _hb, ...c }) => c);
  return { ...n, metadata, status: { ...n.status, conditions } };
}

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

  /** A trimmed node collection recording its changes; `opts` override the defaults. */
  const watchNodes = (changes: CollectionChange<V1Node>[], opts: Partial<CollectionOptions<V1Node>>) =>
    watchCollection<V1Node>({
      kubeConfig: kc,
      name: 'nodes',
      path: '/api/v1/nodes',
      logger,
      trim: trimNode,
      onChange: (c) => changes.push(c),
      list: (page) => kc.makeApiClient(CoreV1Api).listNode(page),
      ...opts,
    });

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

  it("shows drydock's own writes once whenSeen says so: a node patch, a no-op patch, a Job", async () => {
    const written: Written[] = [];
    const deps = {
      kube: {
        core: kc.makeApiClient(CoreV1Api),
        apps: kc.makeApiClient(AppsV1Api),
        batch: kc.makeApiClient(BatchV1Api),
        custom: kc.makeApiClient(CustomObjectsApi),
      },
      cloud: () => undefined,
      fieldManager: 'drydock-test',
      wrote: (w: Written) => void written.push(w),
    };
    const spec = { kind: 'NodeOp', name: 'seen', revision: 'r1' } as const;
    const annotate = {
      kind: 'annotateNode',
      spec,
      node: 'obs-a',
      annotations: { 'drydock.dev/phase': 'Draining' },
      reason: 'test',
    } as const;
    assert.equal((await annotateNode(annotate, deps)).kind, 'done');
    assert.equal(written.length, 1);
    assert.equal(written[0]?.collection, 'nodes');
    assert.equal(await cache.whenSeen(written, 10_000), true);
    const node = cache.snapshot().nodes.find((n) => n.name === 'obs-a');
    assert.equal(node?.annotations['drydock.dev/phase'], 'Draining', 'the snapshot holds the write');
    // The same patch again changes nothing: the version it answers with is the one the cache holds.
    assert.equal((await annotateNode(annotate, deps)).kind, 'done');
    assert.equal(await cache.whenSeen(written.slice(1), 10_000), true);
    await cp()
      .adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'obs-jobs' } } });
    const job = pinnedJob({
      operation: { kind: 'NodeOp', name: 'seen', revision: 'r1' },
      node: { name: 'obs-a', taints: [] },
      namespace: 'obs-jobs',
      step: 'operation',
      backoffLimit: 0,
      imagePullSecrets: [],
      container: { name: 'operation', image: 'busybox:1.36', command: ['true'] },
      volumes: [],
    });
    assert.equal((await createJob(job, deps)).kind, 'done');
    const jobWrite = written.at(-1);
    assert.ok(jobWrite !== undefined && jobWrite.collection === 'jobs', 'the Job write is told');
    assert.equal(await cache.whenSeen([jobWrite], 10_000), true);
    assert.ok(cache.snapshot().jobs.some((j) => j.name === job.metadata?.name));
    // A version no event carried is never seen: the wait ends at its bound.
    assert.equal(await cache.whenSeen([{ collection: 'nodes', name: 'obs-a', resourceVersion: '1' }], 200), false);
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

  it('a watch update that changes only what trimming drops (a heartbeat) is no change', async () => {
    const admin = cp().adminKubeConfig().makeApiClient(CoreV1Api);
    const changes: CollectionChange<V1Node>[] = [];
    const nodes = watchNodes(changes, { same: sameTrimmed });
    const merge = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
    const heartbeat = (name: string, at: string, status = 'True'): Promise<unknown> =>
      admin.patchNodeStatus(
        {
          name,
          body: {
            status: {
              conditions: [
                {
                  type: 'Ready',
                  status,
                  reason: 'KubeletReady',
                  lastHeartbeatTime: at,
                  lastTransitionTime: '2024-01-01T00:00:00Z',
                },
              ],
            },
          },
        },
        merge,
      );
    // Nodes KWOK does not manage (no kwok annotation): only this test writes their status.
    for (const name of ['obs-quiet', 'obs-marker']) await admin.createNode({ body: { metadata: { name } } });
    try {
      await heartbeat('obs-quiet', '2024-01-01T00:00:01Z');
      await nodes.synced;
      const ready = (name: string) =>
        nodes
          .list()
          .find((n) => n.metadata?.name === name)
          ?.status?.conditions?.some((c) => c.type === 'Ready');
      await eventually('obs-quiet Ready in the cache', () => Promise.resolve(ready('obs-quiet')));
      const mark = changes.length;
      const before = nodes.list().find((n) => n.metadata?.name === 'obs-quiet');
      await heartbeat('obs-quiet', '2024-01-01T00:00:02Z');
      await heartbeat('obs-quiet', '2024-01-01T00:00:03Z');
      // Watch events of one resource arrive in order: once this one is in, the heartbeats were too.
      await heartbeat('obs-marker', '2024-01-01T00:00:04Z');
      await eventually('the marker node changed', () => Promise.resolve(ready('obs-marker')));
      // Controllers write these nodes too (the TTL controller's annotation, the node lifecycle
      // controller's taints and conditions), later on a loaded machine: a reported update of
      // obs-quiet fails the test only when it differs from the one before in its heartbeat alone.
      const window = changes.slice(mark);
      const names = window.map((c) => `${c.type} ${c.object.metadata?.name ?? ''}`);
      let previous = before;
      const heartbeatOnly: string[] = [];
      for (const c of window.filter((x) => x.object.metadata?.name === 'obs-quiet')) {
        if (JSON.stringify(withoutHeartbeat(c.object)) === JSON.stringify(withoutHeartbeat(previous)))
          heartbeatOnly.push(`${c.type} obs-quiet`);
        previous = c.object;
      }
      assert.deepEqual(heartbeatOnly, [], 'the heartbeats alone were no change');
      assert.deepEqual(
        names.filter((n) => n !== 'update obs-marker' && n !== 'update obs-quiet'),
        [],
        'nothing else changed',
      );
      assert.ok(names.includes('update obs-marker'), 'the marker arrived');
      await heartbeat('obs-quiet', '2024-01-01T00:00:05Z', 'False');
      await eventually('Ready=False is a change', () =>
        Promise.resolve(changes.some((c) => c.type === 'update' && c.object.metadata?.name === 'obs-quiet')),
      );
    } finally {
      await nodes.stop();
    }
  });

  it('lists in pages: every object is cached, and the watch from the last page misses nothing', async () => {
    const admin = cp().adminKubeConfig().makeApiClient(CoreV1Api);
    for (const name of ['obs-page-1', 'obs-page-2', 'obs-page-3'])
      await admin.createNode({ body: fakeNode(name, { providerID: `sim://w/${name}` }) });
    const pages: (string | undefined)[] = [];
    const changes: CollectionChange<V1Node>[] = [];
    const nodes = watchNodes(changes, {
      pageSize: 2,
      list: (page) => {
        pages.push(page._continue);
        return kc.makeApiClient(CoreV1Api).listNode(page);
      },
    });
    try {
      await nodes.synced;
      const all = (await admin.listNode()).items.map((n) => n.metadata?.name).sort();
      assert.ok(all.length >= 5, `${all.length} nodes`);
      assert.deepEqual(
        nodes
          .list()
          .map((n) => n.metadata?.name)
          .sort(),
        all,
      );
      assert.equal(pages.length, Math.ceil(all.length / 2), 'one request per page of two');
      assert.equal(pages[0], undefined);
      assert.ok(pages.slice(1).every((token) => typeof token === 'string' && token !== ''));
      // The cached node is the compact one; the watch follows from the list's resourceVersion.
      assert.equal(nodes.list().find((n) => n.metadata?.name === 'obs-page-1')?.metadata?.managedFields, undefined);
      await admin.createNode({ body: fakeNode('obs-page-4') });
      await eventually('the node created after the list arrives by the watch', () =>
        Promise.resolve(changes.some((c) => c.type === 'add' && c.object.metadata?.name === 'obs-page-4')),
      );
      assert.equal(pages.length, Math.ceil(all.length / 2), 'no second list');
    } finally {
      await nodes.stop();
    }
  });

  it('after an eviction, whenPdbSettled resolves once the disruption controller has written the PDB to agree with its pods', async () => {
    const admin = cp().adminKubeConfig();
    const core = admin.makeApiClient(CoreV1Api);
    const policy = admin.makeApiClient(PolicyV1Api);
    const ns = 'settle';
    const key = `${ns}/api`;
    await core.createNode({ body: fakeNode('obs-settle') });
    await core.createNamespace({ body: { metadata: { name: ns } } });
    await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'api' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'api' } },
          template: {
            metadata: { labels: { app: 'api' } },
            spec: { nodeSelector: { 'kubernetes.io/hostname': 'obs-settle' }, containers: [{ name: 'c', image: 'x' }] },
          },
        },
      },
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: { metadata: { name: 'api' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'api' } } } },
    });
    const pdbOf = () => cache.snapshot().pdbs.find((p) => `${p.namespace}/${p.name}` === key);
    const podsOf = () => cache.snapshot().pods.filter((p) => p.pdbs.includes(key));
    await eventually(
      'three Ready pods, counted by the controller',
      () => {
        const pdb = pdbOf();
        const ready = podsOf().filter((p) => p.ready && !p.terminating);
        return Promise.resolve(pdb?.currentHealthy === 3 && pdb.unobserved === undefined && ready.length === 3);
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(await cache.whenPdbSettled(key, new Set(), 0), true, 'settled before any eviction');
    const victim = podsOf()[0];
    assert.ok(victim);
    await core.createNamespacedPodEviction({
      name: victim.name,
      namespace: ns,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: victim.name, namespace: ns } },
    });
    // Counting the evicted pod as being deleted, as the pacer does the moment the eviction answers.
    const settled = await cache.whenPdbSettled(key, new Set([victim.uid]), 20_000);
    assert.equal(settled, true, `the PDB as the caches hold it: ${JSON.stringify(pdbOf())}`);
    const held = pdbOf();
    assert.equal(held?.disruptedPods?.[victim.name], undefined, 'the evicted pod has left disruptedPods');
    assert.ok(held !== undefined && held.currentHealthy <= 3);
    // The API server's PDB is the controller's write, not the eviction's: the pod is out of disruptedPods.
    const live = await policy.readNamespacedPodDisruptionBudget({ name: 'api', namespace: ns });
    assert.equal(live.status?.disruptedPods?.[victim.name], undefined);
  });
});
