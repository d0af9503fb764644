/**
 * End to end, controlPlaneFirst across specs: one commit changes both example-like NodeImages
 * (control-plane and worker); no worker is locked while a control-plane node of the other
 * NodeImage still runs the old image, and both finish. Then across kinds: one commit changes
 * the control-plane NodeImage and adds a NodeOp on the workers; replayed from API-server
 * watches, no worker is locked, cordoned or given a Job while a control-plane node is outdated.
 */
import assert from 'node:assert/strict';
import { useControlPlane, eventually } from '../support/control-plane.js';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { ApiLog, replay } from './api-watch.js';
import {
  converged,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  IMAGE_V3,
  locked,
  nodes,
  notifyWebhook,
  specDoc,
  viewNode,
  startWorldWithDrydock,
  stopWorld,
  type DrydockChild,
  type FleetRepo,
} from './world.js';
import type { V1Job, V1Node } from '@kubernetes/client-node';

describe('e2e: control plane first across NodeImages', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  const dirs: string[] = [];

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, drydock } = await startWorldWithDrydock(cp(), dirs));
  });

  after(async function () {
    this.timeout(30_000);
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('every control-plane node is on the new image before any worker is locked', async () => {
    const kc = cp().adminKubeConfig();
    const f = fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V2 });
    await repo.push(
      {
        'images/worker.yaml': f['images/worker.yaml'] ?? '',
        'images/control-plane.yaml': f['images/control-plane.yaml'] ?? '',
      },
      'images: both v2',
    );
    assert.ok(drydock);
    assert.equal(await notifyWebhook(await drydock.url), 202);
    const violations: string[] = [];
    let sawControlPlaneFirst = false;
    await eventually(
      'all 9 nodes on v2',
      async () => {
        const ns = await nodes(kc);
        const oldControlPlane = ns.filter((n) => n.group === 'control-plane' && n.image === IMAGE_V1);
        const lockedWorkers = ns.filter(
          (n) =>
            n.group === 'workers' &&
            locked(n) &&
            n.annotations['drydock.dev/operation']?.startsWith('NodeImage/worker@'),
        );
        if (oldControlPlane.length > 0 && lockedWorkers.length > 0)
          violations.push(
            `${lockedWorkers.map((n) => n.name).join(', ')} locked while ${oldControlPlane.map((n) => n.name).join(', ')} still on v1`,
          );
        if (ns.some((n) => n.group === 'control-plane' && locked(n))) sawControlPlaneFirst = true;
        return converged(kc, IMAGE_V2, 9);
      },
      { timeoutMs: 240_000, intervalMs: 250 },
    );
    assert.deepEqual(violations, []);
    assert.ok(sawControlPlaneFirst, 'the control plane was seen in flight');
    // The status branch follows the cluster a round later.
    await eventually(
      'both NodeImages Complete on the status branch',
      async () => {
        const readme = (await repo.statusFile('README.md')) ?? '';
        return ['control-plane', 'worker'].every((name) =>
          new RegExp(`\\| \\[NodeImage/${name}\\]\\([^)]*\\) \\| Complete \\|`).test(readme),
        );
      },
      { timeoutMs: 30_000 },
    );
  });

  it('across kinds: a NodeOp on the workers starts no worker until the NodeImage control plane is done', async () => {
    const kc = cp().adminKubeConfig();
    const log = new ApiLog();
    // drydock's namespace (drydockArgs) is where its node Jobs run.
    await log.start(kc, { node: '/api/v1/nodes', job: '/apis/batch/v1/namespaces/kube-system/jobs' });
    const f = fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V3 });
    const nodeOp = specDoc('NodeOp', 'patch-workers', {
      nodeSelector: { matchLabels: { 'sim.drydock.dev/group': 'workers' } },
      image: 'busybox:1.36',
      command: ['sh', '-c', 'echo patched'],
      cordon: true,
      drainOptions: { enabled: false },
      rebootOnSuccess: false,
      backoffLimit: 0,
      concurrency: 2,
      stopOnFailure: true,
      rollout: { order: 'controlPlaneFirst' },
    });
    await repo.push(
      { 'images/control-plane.yaml': f['images/control-plane.yaml'] ?? '', 'clusters/patch-workers.yaml': nodeOp },
      'control plane to v3, and patch every worker',
    );
    assert.ok(drydock);
    assert.equal(await notifyWebhook(await drydock.url), 202);
    const record = 'nodeop.drydock.dev/patch-workers';
    await eventually(
      'control plane on v3 and every worker patched',
      async () => {
        const ns = await nodes(kc);
        const cps = ns.filter((n) => n.group === 'control-plane');
        const ws = ns.filter((n) => n.group === 'workers');
        return (
          cps.length === 3 &&
          cps.every((n) => n.image === IMAGE_V3 && !locked(n)) &&
          ws.length === 6 &&
          ws.every((n) => n.annotations[record] !== undefined && !locked(n) && !n.unschedulable)
        );
      },
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    log.stop();

    // Replay the cluster's history: at every worker lock, cordon and Job, the control plane as it stood then.
    const violations: string[] = [];
    let controlPlaneInFlight = false;
    const touched = new Map<string, Set<string>>();
    replay(log.events, (e, state) => {
      const all = [...(state.get('node')?.values() ?? [])].map((n) => viewNode(n as V1Node));
      const outdated = all.filter((n) => n.group === 'control-plane' && n.image !== IMAGE_V3).map((n) => n.name);
      if (all.some((n) => n.group === 'control-plane' && locked(n))) controlPlaneInFlight = true;
      const seen: [string, string][] = [];
      if (e.source === 'node') {
        const n = viewNode(e.obj as V1Node);
        if (n.group === 'workers' && n.annotations['drydock.dev/operation']?.startsWith('NodeOp/patch-workers@'))
          seen.push([n.name, 'locked']);
        if (n.group === 'workers' && n.unschedulable) seen.push([n.name, 'cordoned']);
      } else if (e.type === 'ADDED') {
        const labels = (e.obj as V1Job).metadata?.labels ?? {};
        if (labels['drydock.dev/operation'] === 'NodeOp.patch-workers')
          seen.push([labels['drydock.dev/node'] ?? '?', 'given a Job']);
      }
      for (const [worker, what] of seen) {
        touched.set(worker, (touched.get(worker) ?? new Set()).add(what));
        if (outdated.length > 0) violations.push(`${worker} ${what} while ${outdated.join(', ')} outdated`);
      }
    });
    assert.deepEqual(violations, []);
    assert.ok(controlPlaneInFlight, 'the control plane was seen in flight');
    assert.equal(touched.size, 6, 'every worker was touched');
    for (const [worker, what] of touched)
      assert.deepEqual(
        [...what].sort(),
        ['cordoned', 'given a Job', 'locked'],
        `${worker}: locked, cordoned, given a Job`,
      );
  });
});
