/** The executor against a real API server: idempotence, eviction through PDBs, autoscaler memory. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Node,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { useControlPlane, eventually, fakeNode } from '../support/control-plane.js';
import { resolveBinDir } from '../../src/sandbox/control-plane/index.js';
import {
  executeActions,
  kubeApis,
  NO_EVENTS,
  kubeEventRecorder,
  type ActionResult,
  type ExecuteOptions,
} from '../../src/execute/index.js';
import { ANNOTATIONS } from '../../src/observe/types.js';
import type { Action, SpecRef } from '../../src/plan/types.js';
import { startCountingProxy, type CountingProxy } from '../service/counting-proxy.js';

const spec: SpecRef = { kind: 'NodeImage', name: 'worker' };
const logger = pino({ level: 'silent' });

describe('execute against a real API server', function () {
  this.timeout(60_000);
  const cp = useControlPlane();
  let kc: KubeConfig;
  let core: CoreV1Api;

  /** The executor's options, reaching the API server with `config`. */
  const options = (config: KubeConfig, events = NO_EVENTS): ExecuteOptions => ({
    kube: kubeApis(config),
    cloud: () => undefined,
    fieldManager: 'drydock',
    logger,
    events,
    now: () => new Date(),
  });
  async function run(actions: Action[], events = NO_EVENTS): Promise<ActionResult[]> {
    return executeActions(actions, options(kc, events));
  }
  /**
   * Runs `body` with an executor that reaches the API server through a counting proxy, whose
   * requests the test reads; `extra` adds to the executor's options.
   */
  async function throughProxy(
    body: (runVia: (actions: Action[]) => Promise<ActionResult[]>, proxy: CountingProxy) => Promise<void>,
    extra: Partial<ExecuteOptions> = {},
  ): Promise<void> {
    const proxy = await startCountingProxy(kc);
    try {
      const viaProxy = new KubeConfig();
      viaProxy.loadFromString(proxy.kubeconfig);
      await body((actions) => executeActions(actions, { ...options(viaProxy), ...extra }), proxy);
    } finally {
      await proxy.close();
    }
  }
  const kinds = (rs: ActionResult[]): string[] => rs.map((r) => r.outcome.kind);

  before(async () => {
    kc = cp().adminKubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    for (const name of ['n-cordon', 'n-manual', 'n-drain', 'n-delete', 'n-pending']) {
      await core.createNode({ body: fakeNode(name, name === 'n-manual' ? { unschedulable: true } : {}) });
    }
  });

  it("cordons once, marks it as drydock's, and a repeat is a no-op", async () => {
    assert.deepEqual(kinds(await run([{ kind: 'cordon', spec, reason: 'test', node: 'n-cordon' }])), ['done']);
    assert.deepEqual(kinds(await run([{ kind: 'cordon', spec, reason: 'test', node: 'n-cordon' }])), ['skipped']);
    const node = await core.readNode({ name: 'n-cordon' });
    assert.equal(node.spec?.unschedulable, true);
    assert.equal(node.metadata?.annotations?.[ANNOTATIONS.cordoned], 'true');
  });

  it('uncordons only what it cordoned, clears its mark, and a repeat is a no-op', async () => {
    assert.deepEqual(kinds(await run([{ kind: 'uncordon', spec, reason: 'test', node: 'n-cordon' }])), ['done']);
    assert.deepEqual(kinds(await run([{ kind: 'uncordon', spec, reason: 'test', node: 'n-cordon' }])), ['skipped']);
    const node = await core.readNode({ name: 'n-cordon' });
    assert.notEqual(node.spec?.unschedulable, true);
    assert.equal(node.metadata?.annotations?.[ANNOTATIONS.cordoned], undefined);
  });

  it('leaves a node a person cordoned alone: no claim, no uncordon', async () => {
    assert.deepEqual(
      kinds(
        await run([
          { kind: 'cordon', spec, reason: 'test', node: 'n-manual' },
          { kind: 'uncordon', spec, reason: 'test', node: 'n-manual' },
        ]),
      ),
      ['skipped', 'skipped'],
    );
    const node = await core.readNode({ name: 'n-manual' });
    assert.equal(node.spec?.unschedulable, true);
    assert.equal(node.metadata?.annotations?.[ANNOTATIONS.cordoned], undefined);
  });

  it("marks a node drained later with a PreferNoSchedule taint, keeps the others' taints, and takes off only its own", async () => {
    const mark = (pending: boolean): Action => ({
      kind: 'markDrainPending',
      spec,
      reason: 'test',
      node: 'n-pending',
      pending,
    });
    const other = { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' };
    await core.patchNode(
      { name: 'n-pending', body: { spec: { taints: [other] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(kinds(await run([mark(true)])), ['done']);
    assert.deepEqual(kinds(await run([mark(true)])), ['skipped'], 'a repeat changes nothing');
    let node = await core.readNode({ name: 'n-pending' });
    assert.deepEqual(
      node.spec?.taints?.map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`),
      ['example.com/dedicated=db:NoSchedule', 'drydock.dev/drain-pending=:PreferNoSchedule'],
    );
    assert.equal(node.metadata?.annotations?.[ANNOTATIONS.drainPending], 'NodeImage/worker');
    assert.deepEqual(kinds(await run([mark(false)])), ['done']);
    assert.deepEqual(kinds(await run([mark(false)])), ['skipped']);
    node = await core.readNode({ name: 'n-pending' });
    assert.deepEqual(
      node.spec?.taints?.map((t) => t.key),
      ['example.com/dedicated'],
    );
    assert.equal(node.metadata?.annotations?.[ANNOTATIONS.drainPending], undefined);
    // The same taint put on by someone else (no annotation of drydock's) is not drydock's to take off.
    await core.patchNode(
      {
        name: 'n-pending',
        body: { spec: { taints: [other, { key: 'drydock.dev/drain-pending', effect: 'PreferNoSchedule' }] } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    assert.deepEqual(kinds(await run([mark(false)])), ['skipped']);
    assert.equal((await core.readNode({ name: 'n-pending' })).spec?.taints?.length, 2);
  });

  it("an uncordon takes drydock's mark of a node drained later off in the same patch, and no one else's taint", async () => {
    const other = { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' };
    await core.patchNode(
      { name: 'n-cordon', body: { spec: { taints: [other] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const mark: Action = { kind: 'markDrainPending', spec, reason: 'test', node: 'n-cordon', pending: true };
    assert.deepEqual(kinds(await run([mark, { kind: 'cordon', spec, reason: 'test', node: 'n-cordon' }])), [
      'done',
      'done',
    ]);
    // The node lifecycle controller taints a cordoned node: the uncordon reads that taint with the rest.
    await eventually('the controller taints the cordoned node', async () =>
      ((await core.readNode({ name: 'n-cordon' })).spec?.taints ?? []).some(
        (t) => t.key === 'node.kubernetes.io/unschedulable',
      ),
    );
    assert.deepEqual(kinds(await run([{ kind: 'uncordon', spec, reason: 'test', node: 'n-cordon' }])), ['done']);
    // Read at once, before the controller could take its taint off: the uncordon's patch left it out.
    const node = await core.readNode({ name: 'n-cordon' });
    assert.notEqual(node.spec?.unschedulable, true);
    assert.deepEqual(
      node.spec?.taints?.map((t) => t.key),
      ['example.com/dedicated'],
    );
    assert.equal(node.metadata?.annotations?.[ANNOTATIONS.drainPending], undefined);
  });

  it('annotates, with null removing an annotation', async () => {
    await run([
      {
        kind: 'annotateNode',
        spec,
        reason: 'test',
        node: 'n-cordon',
        annotations: { [ANNOTATIONS.phase]: 'Draining', [ANNOTATIONS.operation]: 'NodeImage/worker@r1' },
      },
    ]);
    await run([
      { kind: 'annotateNode', spec, reason: 'test', node: 'n-cordon', annotations: { [ANNOTATIONS.phase]: null } },
    ]);
    const ann = (await core.readNode({ name: 'n-cordon' })).metadata?.annotations ?? {};
    assert.equal(ann[ANNOTATIONS.phase], undefined);
    assert.equal(ann[ANNOTATIONS.operation], 'NodeImage/worker@r1');
  });

  it('keeps the drydock.dev/phase label in step with the annotation, so kubectl get nodes -L shows it', async () => {
    await run([
      {
        kind: 'annotateNode',
        spec,
        reason: 'test',
        node: 'n-delete',
        annotations: { [ANNOTATIONS.phase]: 'Cordoned', [ANNOTATIONS.operation]: 'NodeImage/worker@r1' },
      },
    ]);
    // The sandbox's command (docs/getting-started.md), run as a person runs it.
    const kubectl = (): string => {
      const r = spawnSync(
        path.join(resolveBinDir(), 'kubectl'),
        ['get', 'nodes', 'n-delete', '-L', 'sim.drydock.dev/image', '-L', 'drydock.dev/phase'],
        {
          encoding: 'utf8',
          env: { ...process.env, KUBECONFIG: cp().kubeconfigPath },
        },
      );
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    const [header, row] = kubectl().trim().split('\n');
    assert.match(header ?? '', /\bPHASE\s*$/);
    assert.match(row ?? '', /^n-delete\s.*\sCordoned\s*$/);
    await run([
      {
        kind: 'annotateNode',
        spec,
        reason: 'test',
        node: 'n-delete',
        annotations: { [ANNOTATIONS.phase]: null, [ANNOTATIONS.operation]: null },
      },
    ]);
    const node = await core.readNode({ name: 'n-delete' });
    assert.equal(node.metadata?.labels?.['drydock.dev/phase'], undefined);
    assert.doesNotMatch(kubectl(), /Cordoned/);
    // Annotations that leave the phase alone leave the label alone.
    await run([
      { kind: 'annotateNode', spec, reason: 'test', node: 'n-cordon', annotations: { [ANNOTATIONS.phase]: 'Done' } },
    ]);
    await run([
      { kind: 'annotateNode', spec, reason: 'test', node: 'n-cordon', annotations: { [ANNOTATIONS.reason]: 'x' } },
    ]);
    assert.equal((await core.readNode({ name: 'n-cordon' })).metadata?.labels?.['drydock.dev/phase'], 'Done');
  });

  it('copies labels onto the replacement', async () => {
    await run([
      {
        kind: 'copyLabels',
        spec,
        reason: 'test',
        from: 'n-manual',
        to: 'n-cordon',
        labels: { 'pool.example.com/team': 'blue' },
      },
    ]);
    assert.equal((await core.readNode({ name: 'n-cordon' })).metadata?.labels?.['pool.example.com/team'], 'blue');
  });

  it('evicts through the Eviction API: 429 while a PDB forbids it (waiting), accepted when it allows, 404 = gone', async () => {
    const policy = kc.makeApiClient(PolicyV1Api);
    await core.createNamespace({ body: { metadata: { name: 'evict' } } });
    for (const name of ['web-1', 'web-2']) {
      await core.createNamespacedPod({
        namespace: 'evict',
        body: {
          metadata: { name, labels: { app: 'web' } },
          spec: { nodeName: 'n-drain', containers: [{ name: 'c', image: 'busybox' }] },
        },
      });
    }
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'evict',
      body: { metadata: { name: 'web' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } },
    });
    await eventually('PDB computed with 2 healthy pods', async () => {
      const p = await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'evict' });
      return p.status?.currentHealthy === 2 && p.status.disruptionsAllowed === 0;
    });
    const blocked = await run([
      { kind: 'evict', spec, reason: 'test', node: 'n-drain', namespace: 'evict', pod: 'web-1', gracePeriodSeconds: 0 },
    ]);
    assert.equal(blocked[0]?.outcome.kind, 'waiting');
    assert.equal(blocked[0]?.outcome.kind === 'waiting' ? blocked[0].outcome.code : '', 'TooManyRequests');
    // Still there: the PDB held.
    await core.readNamespacedPod({ name: 'web-1', namespace: 'evict' });

    await policy.patchNamespacedPodDisruptionBudget({
      name: 'web',
      namespace: 'evict',
      body: [{ op: 'replace', path: '/spec/minAvailable', value: 1 }],
    });
    await eventually('PDB allows one disruption', async () => {
      const p = await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'evict' });
      return p.status?.disruptionsAllowed === 1;
    });
    const accepted = await run([
      { kind: 'evict', spec, reason: 'test', node: 'n-drain', namespace: 'evict', pod: 'web-1', gracePeriodSeconds: 0 },
    ]);
    assert.equal(accepted[0]?.outcome.kind, 'done');
    await eventually('evicted pod gone', async () => {
      try {
        await core.readNamespacedPod({ name: 'web-1', namespace: 'evict' });
        return false;
      } catch {
        return true;
      }
    });
    const gone = await run([
      { kind: 'evict', spec, reason: 'test', node: 'n-drain', namespace: 'evict', pod: 'web-1' },
    ]);
    assert.equal(gone[0]?.outcome.kind, 'skipped');
  });

  it('force-deletes a pod only when asked, and a repeat finds it gone', async () => {
    const a: Action = {
      kind: 'deletePod',
      spec,
      node: 'n-drain',
      namespace: 'evict',
      pod: 'web-2',
      gracePeriodSeconds: 0,
      reason: 'drain timed out (onTimeout: force)',
    };
    assert.deepEqual(kinds(await run([a])), ['done']);
    await eventually('pod gone', async () =>
      core.readNamespacedPod({ name: 'web-2', namespace: 'evict' }).then(
        () => false,
        () => true,
      ),
    );
    assert.deepEqual(kinds(await run([a])), ['skipped']);
  });

  it('remembers the exact autoscaler replicas, keeps the first memory on repeat, and restores them', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'cluster-autoscaler' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'ca' } },
          template: { metadata: { labels: { app: 'ca' } }, spec: { containers: [{ name: 'ca', image: 'ca' }] } },
        },
      },
    });
    const read = () => apps.readNamespacedDeployment({ name: 'cluster-autoscaler', namespace: 'kube-system' });
    const down: Action = {
      kind: 'scaleDeployment',
      spec,
      reason: 'test',
      namespace: 'kube-system',
      name: 'cluster-autoscaler',
      replicas: 0,
      rememberPrevious: 3,
    };
    assert.deepEqual(kinds(await run([down])), ['done']);
    let d = await read();
    assert.equal(d.spec?.replicas, 0);
    assert.equal(d.metadata?.annotations?.[ANNOTATIONS.previousReplicas], '3');
    // A repeat after a crash sees 0 replicas; the remembered 3 must survive.
    assert.deepEqual(kinds(await run([{ ...down, rememberPrevious: 0 }])), ['skipped']);
    assert.equal((await read()).metadata?.annotations?.[ANNOTATIONS.previousReplicas], '3');
    const up: Action = {
      kind: 'scaleDeployment',
      spec,
      reason: 'test',
      namespace: 'kube-system',
      name: 'cluster-autoscaler',
      replicas: 3,
    };
    assert.deepEqual(kinds(await run([up])), ['done']);
    d = await read();
    assert.equal(d.spec?.replicas, 3);
    assert.equal(d.metadata?.annotations?.[ANNOTATIONS.previousReplicas], undefined);
    assert.deepEqual(kinds(await run([up])), ['skipped']);
  });

  it('deletes a node; a repeat finds it gone', async () => {
    assert.deepEqual(kinds(await run([{ kind: 'deleteNode', spec, reason: 'test', node: 'n-delete' }])), ['done']);
    assert.deepEqual(kinds(await run([{ kind: 'deleteNode', spec, reason: 'test', node: 'n-delete' }])), ['skipped']);
  });

  it("holds back the rest of a node's steps when its cordon fails", async () => {
    const rs = await run([
      { kind: 'cordon', spec, reason: 'test', node: 'no-such-node' },
      { kind: 'evict', spec, reason: 'test', node: 'no-such-node', namespace: 'evict', pod: 'whatever' },
    ]);
    assert.equal(rs[0]?.outcome.kind, 'transient');
    assert.equal(rs[1]?.outcome.kind === 'transient' ? rs[1].outcome.code : '', 'Deferred');
  });

  it('records a Kubernetes Event on the node for each action that changed something', async () => {
    const recorder = kubeEventRecorder(kc, logger, 'test');
    await run([{ kind: 'cordon', spec, reason: 'test', node: 'n-cordon' }], recorder);
    // The run does not wait for its Events; the recorder says when they are written.
    await recorder.idle();
    const events = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.name=n-cordon,reason=DrydockCordon',
    });
    assert.equal(events.items.length, 1);
    assert.equal(events.items[0]?.source?.component, 'drydock');
    assert.equal(events.items[0]?.metadata?.annotations?.['drydock.dev/operation'], 'NodeImage/worker');
  });
  it('writes a phase change and the cordon or uncordon next to it as one patch, and the phase alone when the cordon is not ours', async () => {
    await throughProxy(async (runVia, proxy) => {
      // Patches that changed the node (a 409 from KWOK's status update on the fresh node is retried).
      const patches = () => proxy.requests.filter((r) => r.method === 'PATCH' && r.status === 200).length;
      await core.createNode({ body: fakeNode('n-pair') });
      const phase = (node: string, p: string): Action => ({
        kind: 'annotateNode',
        spec,
        reason: 'test',
        node,
        annotations: { [ANNOTATIONS.phase]: p },
      });
      const cordon: Action = { kind: 'cordon', spec, reason: 'test', node: 'n-pair' };
      const uncordon: Action = { kind: 'uncordon', spec, reason: 'test', node: 'n-pair' };
      assert.deepEqual(kinds(await runVia([phase('n-pair', 'Cordoned'), cordon])), ['done', 'done']);
      assert.equal(patches(), 1);
      let node = await core.readNode({ name: 'n-pair' });
      assert.equal(node.spec?.unschedulable, true);
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.phase], 'Cordoned');
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.cordoned], 'true');
      assert.equal(node.metadata?.labels?.['drydock.dev/phase'], 'Cordoned');
      assert.deepEqual(kinds(await runVia([uncordon, phase('n-pair', 'Verifying')])), ['done', 'done']);
      assert.equal(patches(), 2);
      node = await core.readNode({ name: 'n-pair' });
      assert.notEqual(node.spec?.unschedulable, true);
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.cordoned], undefined);
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.phase], 'Verifying');
      // A person's cordon: drydock does not claim it, yet its phase is still written.
      const manual: Action = { kind: 'cordon', spec, reason: 'test', node: 'n-manual' };
      assert.deepEqual(kinds(await runVia([manual, phase('n-manual', 'Draining')])), ['skipped', 'done']);
      assert.equal(patches(), 3);
      node = await core.readNode({ name: 'n-manual' });
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.phase], 'Draining');
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.cordoned], undefined);
      // A failed cordon writes no phase either: the node's steps wait for the next round.
      const rs = await runVia([phase('no-such-node', 'Cordoned'), { ...cordon, node: 'no-such-node' }]);
      assert.deepEqual(kinds(rs), ['transient', 'transient']);
      assert.equal(patches(), 3);
    });
  });

  it("writes a NodeOp's lock, its cordon and the phase after it as one patch, or none of them", async () => {
    await throughProxy(async (runVia, proxy) => {
      const patches = () => proxy.requests.filter((r) => r.method === 'PATCH' && r.status === 200).length;
      const lock = (node: string): Action => ({
        kind: 'annotateNode',
        spec,
        reason: 'test',
        node,
        annotations: { [ANNOTATIONS.operation]: 'NodeOp/patch@r1', [ANNOTATIONS.phase]: 'Pending' },
      });
      const draining = (node: string): Action => ({
        kind: 'annotateNode',
        spec,
        reason: 'test',
        node,
        annotations: { [ANNOTATIONS.phase]: 'Draining', [ANNOTATIONS.job]: 'drydock/job-1' },
      });
      const cordon = (node: string): Action => ({ kind: 'cordon', spec, reason: 'test', node });
      await core.createNode({ body: fakeNode('n-triple') });
      assert.deepEqual(kinds(await runVia([lock('n-triple'), cordon('n-triple'), draining('n-triple')])), [
        'done',
        'done',
        'done',
      ]);
      assert.equal(patches(), 1);
      let node = await core.readNode({ name: 'n-triple' });
      const ann = node.metadata?.annotations ?? {};
      assert.equal(node.spec?.unschedulable, true);
      assert.equal(ann[ANNOTATIONS.operation], 'NodeOp/patch@r1');
      assert.equal(ann[ANNOTATIONS.job], 'drydock/job-1');
      assert.equal(ann[ANNOTATIONS.phase], 'Draining', 'the later phase wins');
      assert.equal(ann[ANNOTATIONS.cordoned], 'true');
      assert.equal(node.metadata?.labels?.['drydock.dev/phase'], 'Draining');
      // A person's cordon: not claimed; the lock and the phase still go, in one patch of their own.
      await core.createNode({ body: fakeNode('n-triple-manual', { unschedulable: true }) });
      const manual = [lock('n-triple-manual'), cordon('n-triple-manual'), draining('n-triple-manual')];
      assert.deepEqual(kinds(await runVia(manual)), ['done', 'skipped', 'done']);
      assert.equal(patches(), 2);
      node = await core.readNode({ name: 'n-triple-manual' });
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.operation], 'NodeOp/patch@r1');
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.phase], 'Draining');
      assert.equal(node.metadata?.annotations?.[ANNOTATIONS.cordoned], undefined);
      // A failed cordon leaves the node unlocked too: nothing of the three is written.
      const failed = await runVia([lock('no-such-node'), cordon('no-such-node'), draining('no-such-node')]);
      assert.deepEqual(kinds(failed), ['transient', 'transient', 'transient']);
      assert.equal(patches(), 2);
    });
  });

  it("cordons and uncordons from the caches' copy of the node without reading it, and reads it when that copy is behind", async () => {
    let cached: V1Node | undefined;
    const cachedNode = (name: string) => (cached?.metadata?.name === name ? cached : undefined);
    await throughProxy(
      async (runVia, proxy) => {
        const calls = (method: string, status?: number) =>
          proxy.requests.filter(
            (r) =>
              r.method === method &&
              r.path.startsWith('/api/v1/nodes/n-cached') &&
              (status === undefined || r.status === status),
          ).length;
        // A node nothing else writes to (no kubelet: not a KWOK node), so a copy stays current.
        await core.createNode({ body: { metadata: { name: 'n-cached' } } });
        const cordon: Action = { kind: 'cordon', spec, reason: 'test', node: 'n-cached' };
        const uncordon: Action = { kind: 'uncordon', spec, reason: 'test', node: 'n-cached' };
        cached = await core.readNode({ name: 'n-cached' });
        assert.deepEqual(kinds(await runVia([cordon])), ['done']);
        assert.deepEqual([calls('GET'), calls('PATCH', 200)], [0, 1]);
        assert.equal((await core.readNode({ name: 'n-cached' })).spec?.unschedulable, true);
        // Someone writes to the node after the copy was taken: the uncordon's 409 has it read the node and write again.
        cached = await core.readNode({ name: 'n-cached' });
        const cordonedCopy = cached;
        await core.patchNode(
          { name: 'n-cached', body: { metadata: { labels: { team: 'blue' } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        assert.deepEqual(kinds(await runVia([uncordon])), ['done']);
        assert.deepEqual([calls('GET'), calls('PATCH', 409), calls('PATCH', 200)], [1, 1, 2]);
        let node = await core.readNode({ name: 'n-cached' });
        assert.notEqual(node.spec?.unschedulable, true);
        assert.equal(node.metadata?.annotations?.[ANNOTATIONS.cordoned], undefined);
        assert.equal(node.metadata?.labels?.team, 'blue', 'the write in between is kept');
        // A copy that says there is nothing to do is not believed: the node is read, and cordoned.
        cached = cordonedCopy;
        assert.deepEqual(kinds(await runVia([cordon])), ['done']);
        assert.deepEqual([calls('GET'), calls('PATCH', 200)], [2, 3]);
        node = await core.readNode({ name: 'n-cached' });
        assert.equal(node.spec?.unschedulable, true);
        // A node deleted since the caches saw it has nothing to uncordon.
        cached = node;
        await core.deleteNode({ name: 'n-cached' });
        assert.deepEqual(kinds(await runVia([uncordon])), ['skipped']);
      },
      { cachedNode },
    );
  });
});
