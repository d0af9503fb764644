/**
 * End to end, driven only by Git commits: NodeOps on the real control plane whose Job pods and
 * reboots the sim hosts play, drydock running as deploy/'s ServiceAccount. Jobs and reboot
 * pods are counted from the API server (a watch, by uid), never from drydock's logs.
 */
import assert from 'node:assert/strict';
import { BatchV1Api, CoreV1Api, Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import {
  afterRounds,
  OPS_REPO_CONFIG,
  specDoc,
  startDrydockChild,
  startWorkerWorld,
  stopWorld,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

const NS = 'drydock-system';
const FAILING = 'workers-i-0003';

const doc = specDoc;

function nodeOpDoc(name: string, selector: Record<string, string>, o: Record<string, unknown> = {}): string {
  return doc('NodeOp', name, {
    nodeSelector: { matchLabels: selector },
    image: 'busybox:1.36',
    command: ['sh', '-c', 'echo patched'],
    cordon: true,
    rebootOnSuccess: true,
    backoffLimit: 0,
    concurrency: 2,
    stopOnFailure: true,
    ...o,
  });
}

/** Distinct objects (by uid) drydock made, per node and step, as the API server announced them. */
class Census {
  readonly seen = new Map<string, Set<string>>();
  private readonly stops: (() => void)[] = [];
  async start(kc: KubeConfig): Promise<void> {
    const w = new Watch(kc);
    for (const [kind, path] of [
      ['Job', `/apis/batch/v1/namespaces/${NS}/jobs`],
      ['Pod', `/api/v1/namespaces/${NS}/pods`],
    ] as const) {
      const req = await w.watch(
        path,
        { labelSelector: 'app.kubernetes.io/managed-by=drydock' },
        (type: string, obj: KubernetesObject) => {
          const labels = obj.metadata?.labels ?? {};
          // A Job's own pods carry the Job's labels too; count Jobs and reboot pods only.
          if (type !== 'ADDED' || (kind === 'Pod' && labels['drydock.dev/step'] !== 'reboot')) return;
          const key = `${labels['drydock.dev/operation']} ${labels['drydock.dev/node']} ${labels['drydock.dev/step']}`;
          const set = this.seen.get(key) ?? new Set<string>();
          set.add(obj.metadata?.uid ?? '');
          this.seen.set(key, set);
        },
        () => undefined,
      );
      this.stops.push(() => req.abort());
    }
  }
  count(op: string, node: string, step: 'operation' | 'reboot'): number {
    return this.seen.get(`NodeOp.${op} ${node} ${step}`)?.size ?? 0;
  }
  stop(): void {
    for (const s of this.stops) s();
  }
}

interface HostNode {
  readonly name: string;
  readonly bootID: string;
  readonly unschedulable: boolean;
  readonly annotations: Record<string, string>;
}

async function hostNodes(kc: KubeConfig): Promise<Map<string, HostNode>> {
  const list = await kc.makeApiClient(CoreV1Api).listNode({ labelSelector: 'sim.drydock.dev/group=workers' });
  return new Map(
    list.items.map((n) => [
      n.metadata?.name ?? '',
      {
        name: n.metadata?.name ?? '',
        bootID: n.status?.nodeInfo?.bootID ?? '',
        unschedulable: n.spec?.unschedulable === true,
        annotations: n.metadata?.annotations ?? {},
      },
    ]),
  );
}

describe('e2e: NodeOp on the real control plane', function () {
  this.timeout(300_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  let args: string[];
  const census = new Census();
  const dirs: string[] = [];
  let boots = new Map<string, HostNode>();

  before(async function () {
    this.timeout(120_000);
    // The census watches from before drydock starts, so it sees every Job and reboot pod.
    await census.start(cp().adminKubeConfig());
    ({ sim, repo, drydock, args } = await startWorkerWorld(cp(), dirs, {
      name: 'nodeop',
      size: 6,
      host: { rebootSeconds: 3, jobRunSeconds: 2, failJobsOnNodes: [FAILING] },
      files: { 'drydock.yaml': OPS_REPO_CONFIG, 'ops/.keep': '' },
    }));
    boots = await hostNodes(cp().adminKubeConfig());
  });

  after(async function () {
    this.timeout(30_000);
    census.stop();
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it('concurrency 2 over 6 workers: a node whose Job fails is uncordoned and named with its Job; stopOnFailure halts cleanly', async () => {
    const kc = cp().adminKubeConfig();
    await repo.push(
      { 'ops/patch.yaml': nodeOpDoc('patch', { 'sim.drydock.dev/group': 'workers' }) },
      'ops: patch every worker, two at a time',
    );
    let maxInFlight = 0;
    const halted = await eventually(
      'patch halted with nothing in flight',
      async () => {
        const ns = [...(await hostNodes(kc)).values()];
        const inFlight = ns.filter(
          (n) =>
            n.annotations['drydock.dev/operation']?.startsWith('NodeOp/patch@') &&
            n.annotations['drydock.dev/phase'] !== 'Failed',
        ).length;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const status = await repo.statusFile('status/NodeOp/patch.yaml');
        return inFlight === 0 && status !== undefined && /phase: Halted/.test(status) ? { ns, status } : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    assert.ok(maxInFlight <= 2, `at most 2 nodes in flight, saw ${maxInFlight}`);
    const byName = new Map(halted.ns.map((n) => [n.name, n]));
    const failed = byName.get(FAILING);
    assert.equal(failed?.annotations['drydock.dev/phase'], 'Failed');
    assert.equal(failed?.unschedulable, false, 'the failed node is uncordoned');
    const job = failed?.annotations['drydock.dev/job'] ?? '';
    assert.match(job, /^drydock-system\/nodeop-patch-workers-i-0003-/);
    assert.ok(
      failed?.annotations['drydock.dev/reason']?.includes(`Job ${job} failed`),
      failed?.annotations['drydock.dev/reason'],
    );
    assert.ok(halted.status.includes(job), 'status names the failed Job');
    assert.equal(census.count('patch', FAILING, 'reboot'), 0, 'no reboot after a failed Job');
    let done = 0;
    for (const n of halted.ns) {
      const record = n.annotations['nodeop.drydock.dev/patch'];
      if (record === undefined) {
        if (n.name !== FAILING) assert.equal(census.count('patch', n.name, 'operation'), 0, `${n.name} never started`);
        continue;
      }
      done++;
      assert.equal(census.count('patch', n.name, 'operation'), 1, `${n.name}: one Job`);
      assert.equal(census.count('patch', n.name, 'reboot'), 1, `${n.name}: one reboot pod`);
      assert.notEqual(n.bootID, boots.get(n.name)?.bootID, `${n.name} rebooted`);
      assert.equal(n.unschedulable, false);
    }
    assert.ok(done >= 2 && done <= 3, `the first pair and at most the failing node's partner finished, got ${done}`);
    assert.ok(
      halted.ns.some((n) => n.annotations['nodeop.drydock.dev/patch'] === undefined && n.name !== FAILING),
      'stopOnFailure left nodes unstarted',
    );
  });

  it('SIGKILL between Job success and reboot: after a restart the node reboots exactly once and its Job was created once', async () => {
    const kc = cp().adminKubeConfig();
    const target = 'workers-i-0006';
    const before = (await hostNodes(kc)).get(target);
    assert.equal(before?.annotations['drydock.dev/operation'], undefined, `${target} is free`);
    await repo.push(
      { 'ops/kernel.yaml': nodeOpDoc('kernel', { 'kubernetes.io/hostname': target }, { concurrency: 1 }) },
      'ops: kernel update on one worker',
    );
    // Kill the moment the Job's success is on the node (Rebooting) or the Job completed.
    const batch = kc.makeApiClient(BatchV1Api);
    await eventually(
      'the Job succeeded',
      async () => {
        const n = (await hostNodes(kc)).get(target);
        if (n?.annotations['drydock.dev/phase'] === 'Rebooting') return true;
        const jobs = await batch.listNamespacedJob({
          namespace: NS,
          labelSelector: 'drydock.dev/operation=NodeOp.kernel',
        });
        return jobs.items.some((j) => (j.status?.succeeded ?? 0) > 0);
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    drydock?.kill('SIGKILL');
    await drydock?.exited;
    const atKill = (await hostNodes(kc)).get(target);
    assert.equal(atKill?.bootID, before?.bootID, 'killed before the node rebooted');
    drydock = startDrydockChild(args);
    await eventually(
      `${target} done`,
      async () => (await hostNodes(kc)).get(target)?.annotations['nodeop.drydock.dev/kernel'] !== undefined,
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    const after = (await hostNodes(kc)).get(target);
    assert.notEqual(after?.bootID, before?.bootID, 'rebooted');
    assert.equal(after?.unschedulable, false);
    assert.equal(after?.annotations['drydock.dev/operation'], undefined, 'lock released');
    assert.equal(census.count('kernel', target, 'operation'), 1, 'Job created exactly once');
    assert.equal(census.count('kernel', target, 'reboot'), 1, 'rebooted exactly once');
    // Stays so: a few more rounds change nothing.
    assert.ok(drydock);
    await afterRounds(drydock);
    assert.equal(census.count('kernel', target, 'operation'), 1);
    assert.equal(census.count('kernel', target, 'reboot'), 1);
    assert.equal((await hostNodes(kc)).get(target)?.bootID, after?.bootID, 'no second reboot');
  });

  it('NodeImage inPlace: the update Job runs the image, the node reboots once, and reports the image', async () => {
    const kc = cp().adminKubeConfig();
    const targets = ['workers-i-0005', 'workers-i-0006'];
    const spec = {
      image: 'os-v2',
      strategy: 'inPlace',
      nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: targets }] },
      rollout: { concurrency: 1, drain: { enabled: false }, healthGate: { minReadySeconds: 1 } },
    };
    await repo.push({ 'ops/edge.yaml': doc('NodeImage', 'edge', spec) }, 'images: edge nodes to os-v2 in place');
    const core = kc.makeApiClient(CoreV1Api);
    await eventually(
      'both nodes on os-v2',
      async () => {
        const list = await core.listNode({ labelSelector: 'sim.drydock.dev/group=workers' });
        const on = list.items.filter(
          (n) =>
            targets.includes(n.metadata?.name ?? '') &&
            n.status?.nodeInfo?.osImage === 'os-v2' &&
            n.metadata?.annotations?.['drydock.dev/image'] === 'os-v2' &&
            n.metadata.annotations['drydock.dev/operation'] === undefined,
        );
        return on.length === 2;
      },
      { timeoutMs: 120_000, intervalMs: 300 },
    );
    for (const t of targets) {
      assert.equal(census.seen.get(`NodeImage.edge ${t} operation`)?.size, 1, `${t}: one update Job`);
      assert.equal(census.seen.get(`NodeImage.edge ${t} reboot`)?.size, 1, `${t}: one reboot`);
    }
    await eventually(
      'status says Complete',
      async () => /phase: Complete/.test((await repo.statusFile('status/NodeImage/edge.yaml')) ?? ''),
      { timeoutMs: 30_000 },
    );
  });
});
