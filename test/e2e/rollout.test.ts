/**
 * End to end, driven only by commits to a real Git server: the service (a child process)
 * rolls a 6-node worker group and a 3-node control-plane group on the sim cloud to a new
 * image, with workloads under PDBs and the autoscaler paused and restored.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { useControlPlane, eventually } from '../support/control-plane.js';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { ApiLog, cordonedNodes } from './api-watch.js';
import { DRAIN_PENDING_TAINT } from '../../src/protocol/keys.js';
import {
  afterRounds,
  leads,
  applyDeployRbac,
  notifyWebhook,
  serviceAccountKubeconfig,
  converged,
  autoscalerReplicas,
  fleetFiles,
  IMAGE_V1,
  IMAGE_V2,
  IMAGE_V3,
  IMAGE_V4,
  E2E_APPS,
  locked,
  nodes,
  startDrydockChild,
  startWorld,
  drydockArgs,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

describe('e2e: image rollout driven by Git', function () {
  this.timeout(300_000);
  const cp = useControlPlane();
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  // Two replicas: `drydock` leads (it started first), `standby` waits for the Lease.
  let drydock: DrydockChild | undefined;
  let standby: DrydockChild | undefined;
  let args: string[] = [];
  let cacheDir = '';
  const dirs: string[] = [];
  // Every change to Nodes the API server announced, all along: the budget is judged from it.
  const nodeLog = new ApiLog();
  // Log records of service processes that were killed and replaced.
  const pastRecords: Record<string, unknown>[] = [];
  const imageFiles = (image: string): Record<string, string> => {
    const f = fleetFiles({ worker: image, controlPlane: image });
    return {
      'images/worker.yaml': f['images/worker.yaml'] ?? '',
      'images/control-plane.yaml': f['images/control-plane.yaml'] ?? '',
    };
  };
  /**
   * Pushes and tells drydock through its webhook (polling is hourly in this world) — on the
   * standby, as a Service may: the standby must relay it to the leader.
   */
  async function push(
    files: Record<string, string | null>,
    message: string,
    to: 'standby' | 'leader' = 'standby',
  ): Promise<string> {
    const commit = await repo.push(files, message);
    const child = to === 'standby' ? standby : drydock;
    assert.ok(child);
    notifiedAt = Date.now();
    assert.equal(await notifyWebhook(await child.url), 202);
    return commit;
  }
  let notifiedAt = 0;
  async function startReplica(): Promise<DrydockChild> {
    const child = startDrydockChild(args);
    const url = await child.url;
    await eventually('drydock ready', async () => (await fetch(`${url}/readyz`)).ok, { timeoutMs: 30_000 });
    return child;
  }

  before(async function () {
    this.timeout(120_000);
    ({ sim, repo, cacheDir } = await startWorld(cp(), dirs));
    const kc = cp().adminKubeConfig();
    // The service runs as deploy/'s ServiceAccount, under deploy/'s RBAC and nothing more.
    await applyDeployRbac(kc);
    args = drydockArgs(repo, await serviceAccountKubeconfig(cp()), sim.url, cacheDir, 'drydock-system').map((a) =>
      a === '1s' ? '1h' : a,
    );
    drydock = await startReplica();
    await eventually('the first replica leads', () => leads(drydock!), { timeoutMs: 15_000 });
    standby = await startReplica();
    await nodeLog.start(kc, { nodes: '/api/v1/nodes' });
  });

  after(async function () {
    this.timeout(30_000);
    nodeLog.stop();
    for (const c of [drydock, standby]) {
      if (c && c.proc.exitCode === null) {
        c.kill('SIGTERM');
        await c.exited;
      }
    }
    await sim?.stop();
    await repo?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('is idle on the current image: no node touched', async () => {
    assert.ok(drydock);
    await afterRounds(drydock);
    const ns = await nodes(cp().adminKubeConfig());
    assert.ok(ns.every((n) => !n.unschedulable && n.annotations['drydock.dev/operation'] === undefined));
    await converged(cp().adminKubeConfig(), IMAGE_V1);
    assert.deepEqual(await autoscalerReplicas(cp().adminKubeConfig()), { replicas: 2 });
  });

  it('rolls every node to the new image, pausing and restoring the autoscaler, each node replaced once', async () => {
    const kc = cp().adminKubeConfig();
    let pausedSeen = false;
    const watcher = setInterval(() => {
      void autoscalerReplicas(kc).then(
        (a) => {
          if (a.replicas === 0 && a.previous === '2') pausedSeen = true;
        },
        () => undefined,
      );
    }, 250);
    try {
      await push(imageFiles(IMAGE_V2), 'images: node-os v2', 'leader');
      const leader = drydock;
      assert.ok(leader);
      const sentAt = notifiedAt;
      // The webhook, not the hourly poll, started the round. DESIGN.md's 1 s target for it is
      // measured by the git benchmark (`npm run bench`), not bounded here: a timed assertion on
      // a loaded 2-core machine fails at random; the bound below only tells webhook from poll.
      const first = await eventually('the first action after the webhook', async () =>
        leader.records().find((r) => r.msg === 'action applied' && Date.parse(String(r.time)) >= sentAt),
      );
      const latency = Date.parse(String(first.time)) - sentAt;
      process.stderr.write(`      (webhook → first action: ${latency} ms, ${String(first.action)})\n`);
      assert.ok(latency <= 30_000, `webhook to first action took ${latency} ms (the poll is hourly)`);
      await eventually('every node on v2, Ready, uncordoned and unlocked', () => converged(kc, IMAGE_V2), {
        timeoutMs: 150_000,
        intervalMs: 1_000,
      });
      await eventually('autoscaler restored', async () => {
        const a = await autoscalerReplicas(kc);
        return a.replicas === 2 && a.previous === undefined;
      });
    } finally {
      clearInterval(watcher);
    }
    assert.ok(pausedSeen, 'the autoscaler was scaled to 0 with its 2 replicas remembered during the rollout');
    await eventually('the status branch reports both images complete', async () => {
      const readme = await repo.statusFile('README.md');
      if (readme === undefined) throw new Error('no status branch yet');
      const rows = readme.split('\n').filter((l) => /NodeImage/.test(l));
      if (rows.length !== 2 || !rows.every((l) => /Complete/.test(l))) throw new Error(rows.join(' / '));
      return true;
    });
    // Each old instance replaced exactly once: 6 + 6 and 3 + 3 instances ever created.
    assert.equal(sim.cloud.inspectGroup('workers').nextInstance - 1, 12);
    assert.equal(sim.cloud.inspectGroup('control-plane').nextInstance - 1, 6);

    // The workers drained later carried drydock's PreferNoSchedule taint while the rollout ran, as
    // the API server announced them; the scheduler then put each drain's pods on the new nodes,
    // so every workload pod was evicted once, none again from the next worker drained.
    const taintedOf = (e: { obj: { spec?: unknown } }): boolean =>
      ((e.obj.spec as { taints?: { key: string }[] } | undefined)?.taints ?? []).some(
        (t) => t.key === DRAIN_PENDING_TAINT.key,
      );
    const marked = new Set(
      nodeLog.events.filter((e) => e.source === 'nodes' && taintedOf(e)).map((e) => e.obj.metadata?.name ?? ''),
    );
    assert.ok(
      [...marked].filter((n) => n.startsWith('workers-')).length >= 2,
      `workers marked as drained later: ${[...marked].join(', ')}`,
    );
    const left = (await kc.makeApiClient(CoreV1Api).listNode()).items.filter((n) => taintedOf({ obj: n }));
    assert.deepEqual(
      left.map((n) => n.metadata?.name),
      [],
      'no node keeps the taint once its turn passed',
    );
    assert.ok(drydock);
    const evicted = drydock
      .records()
      .filter((r) => r.msg === 'action applied' && r.action === 'evict' && r.outcome === 'done');
    const pods = E2E_APPS.reduce((n, a) => n + a.replicas, 0);
    assert.equal(evicted.length, pods, `evictions: ${evicted.map((r) => String(r.target)).join(', ')}`);
  });

  it('refuses an invalid commit whole: nothing changes, the last valid commit stays in force', async () => {
    const kc = cp().adminKubeConfig();
    const before = await nodes(kc);
    const validHead = await repo.head();
    const bad = await push(
      {
        // One good change and one broken file: neither may be applied.
        ...imageFiles(IMAGE_V3),
        'clusters/workers.yaml':
          'apiVersion: drydock.dev/v1alpha1\nkind: ScalingGroup\nmetadata:\n  name: workers\nspec:\n  groupId: workers\n  nodeImage: worker\n  role: wrker\n',
      },
      'images: v3 with a typo',
    );
    const child = drydock;
    assert.ok(child);
    await eventually('the commit refused by the leader', async () =>
      child
        .records()
        .some((r) => String(r.msg).startsWith('commit refused') && r.commit === bad && r.inForce === validHead),
    );
    await afterRounds(child);
    const after = await nodes(kc);
    assert.deepEqual(
      after.map((n) => [n.name, n.image, n.unschedulable]),
      before.map((n) => [n.name, n.image, n.unschedulable]),
    );
    assert.equal(sim.cloud.inspectGroup('workers').image, IMAGE_V2);
    const url = await child.url;
    assert.equal((await fetch(`${url}/readyz`)).status, 200, 'still ready: a valid commit is in force');
    const status = child
      .records()
      .filter((r) => r.msg === 'status changed')
      .at(-1);
    assert.ok(
      status && typeof status.loadErrors === 'number' && status.loadErrors > 0,
      'the status carries the errors',
    );
    // Fix it: the next valid commit is applied.
    await eventually('errors.yaml on the status branch names the file and line', async () => {
      const errors = await repo.statusFile('errors.yaml');
      return errors !== undefined && /clusters\/workers\.yaml/.test(errors) && /line/.test(errors);
    });
    await push(fleetFiles({ worker: IMAGE_V2, controlPlane: IMAGE_V2 }), 'clusters: fix the role typo, back to v2');
  });

  it('survives SIGKILL of the leader mid-rollout: the standby finishes, no node replaced twice', async () => {
    const kc = cp().adminKubeConfig();
    const workersBefore = sim.cloud.inspectGroup('workers').nextInstance;
    const cpBefore = sim.cloud.inspectGroup('control-plane').nextInstance;
    await push(imageFiles(IMAGE_V3), 'images: node-os v3');
    const sentAt = notifiedAt;
    const leaderBefore = drydock;
    // Kill while a node is in flight, after at least one was replaced.
    await eventually(
      'one node replaced and another in flight',
      async () => {
        const ns = (await nodes(kc)).filter((n) => n.group !== '');
        return ns.some((n) => n.image === IMAGE_V3 && n.ready) && ns.some((n) => locked(n) && n.image !== IMAGE_V3);
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const leader = drydock;
    const next = standby;
    assert.ok(leader && next);
    assert.equal(await leads(next), false, 'the standby is not leading before the kill');
    const relayed = leader.records().find((r) => r.msg === 'action applied' && Date.parse(String(r.time)) >= sentAt);
    if (relayed && leaderBefore === leader) {
      process.stderr.write(
        `      (webhook on the standby → leader's first action: ${Date.parse(String(relayed.time)) - sentAt} ms)\n`,
      );
    }
    leader.kill('SIGKILL');
    await leader.exited;
    const killedAt = Date.now();
    pastRecords.push(...leader.records());
    // The standby takes over once the Lease expires; the killed one comes back as the standby.
    await eventually('the standby takes over', () => leads(next), { timeoutMs: 15_000 });
    drydock = next;
    standby = await startReplica();
    await eventually('every node on v3', () => converged(kc, IMAGE_V3), { timeoutMs: 150_000, intervalMs: 1_000 });
    const earlyActions = next
      .records()
      .filter((r) => r.msg === 'action applied' && Date.parse(String(r.time)) < killedAt);
    assert.deepEqual(earlyActions, [], 'the standby acted only after the leader was gone');
    assert.equal(
      sim.cloud.inspectGroup('workers').nextInstance - workersBefore,
      6,
      'six new worker instances, no more',
    );
    assert.equal(
      sim.cloud.inspectGroup('control-plane').nextInstance - cpBefore,
      3,
      'three new control-plane instances, no more',
    );
  });

  it('converges back when a revert is pushed mid-rollout', async () => {
    const kc = cp().adminKubeConfig();
    await push(imageFiles(IMAGE_V4), 'images: node-os v4');
    await eventually(
      'two nodes on v4',
      async () => (await nodes(kc)).filter((n) => n.image === IMAGE_V4 && n.ready).length >= 2,
      {
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );
    await push(imageFiles(IMAGE_V3), 'Revert "images: node-os v4"');
    await eventually('every node back on v3', () => converged(kc, IMAGE_V3), { timeoutMs: 180_000, intervalMs: 1_000 });
    assert.equal(sim.cloud.inspectGroup('workers').image, IMAGE_V3);
    await eventually('autoscaler restored', async () => {
      const a = await autoscalerReplicas(kc);
      return a.replicas === 2 && a.previous === undefined;
    });
  });

  it("did everything under deploy/'s least-privilege RBAC: nothing forbidden, Events recorded", async () => {
    const all = [...(drydock?.records() ?? []), ...(standby?.records() ?? []), ...pastRecords];
    const forbidden = all.filter(
      (r) =>
        JSON.stringify(r).includes('"code":403') ||
        r.code === 'Forbidden' ||
        String(r.msg).startsWith('event not recorded'),
    );
    assert.deepEqual(forbidden, []);
    assert.ok(all.filter((r) => r.msg === 'action applied').length > 0);
    const events = await cp()
      .adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .listNamespacedEvent({ namespace: 'default', fieldSelector: 'reason=DrydockCordon' });
    assert.ok(events.items.length >= 9, `a DrydockCordon Event per replaced node, saw ${events.items.length}`);
    const lease = await cp()
      .adminKubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'drydock', namespace: 'drydock-system' });
    assert.ok(lease.spec?.holderIdentity, 'the Lease in drydock-system is held');
  });

  it('never had more nodes cordoned at once than the budget allows', () => {
    const maxCordoned = nodeLog.maxOver('nodes', cordonedNodes);
    assert.ok(maxCordoned >= 1, 'nodes were cordoned at all');
    assert.ok(maxCordoned <= 2, `at most 2 cordoned at once, saw ${maxCordoned}`);
  });

  it('SIGTERM finishes cleanly: exit 0 and the Lease handed back at once', async () => {
    const leader = drydock;
    assert.ok(leader && standby);
    const coord = cp().adminKubeConfig().makeApiClient(CoordinationV1Api);
    leader.kill('SIGTERM');
    assert.equal(await leader.exited, 0);
    const t0 = Date.now();
    const next = standby;
    await eventually('the standby leads', () => leads(next), { timeoutMs: 10_000, intervalMs: 100 });
    // Released, not expired: well under the 3 s lease duration plus a retry period.
    assert.ok(Date.now() - t0 < 3_000, `took ${Date.now() - t0} ms`);
    const lease = await coord.readNamespacedLease({ name: 'drydock', namespace: 'drydock-system' });
    assert.ok(leader.records().some((r) => r.msg === 'lease released'));
    assert.notEqual(lease.spec?.holderIdentity, '');
  });
});
