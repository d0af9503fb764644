/**
 * End to end, driven only by Git commits: UpgradeGates on NodeOps and on a replace rollout, on
 * the real control plane, the gate Jobs' pods played by the sim hosts, drydock running as
 * deploy/'s ServiceAccount.
 * What happened is read from the API server (watches on Jobs, their pods and Nodes, with the
 * time each change arrived), never from drydock's logs.
 */
import assert from 'node:assert/strict';
import { CoreV1Api, Watch, type KubeConfig, type V1Job, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type { RunningSimCloud } from '../../src/sim-host/index.js';
import { eventually, useControlPlane } from '../support/control-plane.js';
import {
  afterLeaderRounds,
  OPS_REPO_CONFIG,
  rolloutYaml,
  specDoc,
  startWorkerWorld,
  stopWorld,
  type DrydockChild,
  type FleetRepo,
} from './world.js';

const NS = 'drydock-system';
const HELD = 'workers-i-0001';
const PASSED = 'workers-i-0002';

const doc = specDoc;

const onNode = (node: string, o: Record<string, unknown> = {}): string =>
  doc('NodeOp', `op-${node.slice(-4)}`, {
    nodeSelector: { matchLabels: { 'kubernetes.io/hostname': node } },
    image: 'busybox:1.36',
    command: ['sh', '-c', 'echo patched'],
    cordon: true,
    rebootOnSuccess: false,
    backoffLimit: 0,
    concurrency: 1,
    stopOnFailure: true,
    ...o,
  });

/** A gate Job whose pod the sim host ends after a second with `exitCode`. */
const gateJob = (name: string, exitCode: number) => ({
  name,
  spec: {
    backoffLimit: 0,
    template: {
      metadata: { annotations: { 'sim.drydock.dev/run-seconds': '1', 'sim.drydock.dev/exit-code': String(exitCode) } },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'check', image: 'busybox:1.36', command: ['sh', '-c', 'echo $NODE_NAME'] }],
      },
    },
  },
});

const gateDoc = (name: string, nodeOp: string, before: unknown[], after: unknown[]): string =>
  doc('UpgradeGate', name, { appliesTo: { targets: [{ kind: 'NodeOp', name: nodeOp }] }, before, after });

interface Seen<T> {
  readonly at: number;
  readonly type: string;
  readonly obj: T;
}

/** Every change of drydock's Jobs and of the workers, with the time it arrived. */
class Recorder {
  readonly jobs: Seen<V1Job>[] = [];
  readonly pods: Seen<V1Pod>[] = [];
  readonly nodes: Seen<V1Node>[] = [];
  private readonly stops: (() => void)[] = [];
  async start(kc: KubeConfig): Promise<void> {
    const w = new Watch(kc);
    const jobs = await w.watch(
      `/apis/batch/v1/namespaces/${NS}/jobs`,
      { labelSelector: 'app.kubernetes.io/managed-by=drydock' },
      (type: string, obj: V1Job) => this.jobs.push({ at: Date.now(), type, obj }),
      () => undefined,
    );
    const pods = await w.watch(
      `/api/v1/namespaces/${NS}/pods`,
      {},
      (type: string, obj: V1Pod) => this.pods.push({ at: Date.now(), type, obj }),
      () => undefined,
    );
    const nodes = await w.watch(
      '/api/v1/nodes',
      { labelSelector: 'sim.drydock.dev/group=workers' },
      (type: string, obj: V1Node) => this.nodes.push({ at: Date.now(), type, obj }),
      () => undefined,
    );
    this.stops.push(
      () => jobs.abort(),
      () => pods.abort(),
      () => nodes.abort(),
    );
  }
  /**
   * Distinct Jobs (by uid) for `node` and step, with when each was first seen and first seen
   * finished: its status counting a pod, or (as drydock reads a Job of one completion) its pod
   * seen Succeeded or Failed, whichever came first.
   */
  jobsFor(node: string, step: string): { uid: string; name: string; created: number; finished?: number }[] {
    const out = new Map<string, { uid: string; name: string; created: number; finished?: number }>();
    const finish = (uid: string, at: number): void => {
      const row = out.get(uid);
      if (row !== undefined && (row.finished === undefined || at < row.finished)) row.finished = at;
    };
    for (const s of this.jobs) {
      const labels = s.obj.metadata?.labels ?? {};
      if (labels['drydock.dev/node'] !== node || labels['drydock.dev/step'] !== step) continue;
      const uid = s.obj.metadata?.uid ?? '';
      if (!out.has(uid)) out.set(uid, { uid, name: s.obj.metadata?.name ?? '', created: s.at });
      if ((s.obj.status?.succeeded ?? 0) + (s.obj.status?.failed ?? 0) > 0) finish(uid, s.at);
    }
    for (const s of this.pods) {
      const phase = s.obj.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed')
        finish(s.obj.metadata?.labels?.['batch.kubernetes.io/controller-uid'] ?? '', s.at);
    }
    return [...out.values()];
  }
  /** The times `node` turned unschedulable and schedulable again. */
  cordons(node: string): { on: number[]; off: number[] } {
    const on: number[] = [];
    const off: number[] = [];
    let last = false;
    for (const s of this.nodes) {
      if (s.obj.metadata?.name !== node) continue;
      const now = s.obj.spec?.unschedulable === true;
      if (now && !last) on.push(s.at);
      if (!now && last) off.push(s.at);
      last = now;
    }
    return { on, off };
  }
  stop(): void {
    for (const s of this.stops) s();
  }
}

describe('e2e: UpgradeGates on the real control plane', function () {
  this.timeout(180_000);
  const cp = useControlPlane({ jobPods: 'host' });
  let sim: RunningSimCloud;
  let repo: FleetRepo;
  let drydock: DrydockChild | undefined;
  const recorder = new Recorder();
  const dirs: string[] = [];

  before(async function () {
    this.timeout(120_000);
    // The recorder watches from before the workers join, so it sees every cordon and Job.
    await recorder.start(cp().adminKubeConfig());
    ({ sim, repo, drydock } = await startWorkerWorld(cp(), dirs, {
      name: 'gates',
      size: 3,
      host: { rebootSeconds: 2, jobRunSeconds: 1 },
      files: { 'drydock.yaml': OPS_REPO_CONFIG, 'ops/.keep': '' },
    }));
  });

  after(async function () {
    this.timeout(30_000);
    recorder.stop();
    await stopWorld({ drydock, sim, repo, dirs });
  });

  it("a failing before-Job holds its node: never cordoned, no operation Job, Failed with the gate Job's name", async () => {
    const kc = cp().adminKubeConfig();
    await repo.push(
      {
        'ops/held.yaml': onNode(HELD),
        'ops/hold.yaml': gateDoc('hold', `op-${HELD.slice(-4)}`, [gateJob('precheck', 1)], []),
      },
      'ops: a NodeOp whose gate fails',
    );
    const core = kc.makeApiClient(CoreV1Api);
    const failed = await eventually(
      `${HELD} Failed and the status names the gate Job`,
      async () => {
        const n = await core.readNode({ name: HELD });
        const status = (await repo.statusFile(`status/NodeOp/op-${HELD.slice(-4)}.yaml`)) ?? '';
        const job = n.metadata?.annotations?.['drydock.dev/job'];
        return n.metadata?.annotations?.['drydock.dev/phase'] === 'Failed' &&
          job !== undefined &&
          status.includes(job) &&
          /phase: Halted/.test(status)
          ? { n, job, status }
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    assert.match(failed.job, /^drydock-system\/precheck-before0-workers-i-0001-/);
    assert.match(failed.n.metadata?.annotations?.['drydock.dev/reason'] ?? '', /UpgradeGate hold before-Job .* failed/);
    assert.equal(failed.n.spec?.unschedulable ?? false, false);
    assert.deepEqual(recorder.cordons(HELD).on, [], 'never cordoned');
    assert.equal(recorder.jobsFor(HELD, 'operation').length, 0, 'the operation Job never ran');
    assert.equal(recorder.jobsFor(HELD, 'before').length, 1, 'one gate Job');
  });

  it('a passing gate: its before-Job finished before the cordon, its after-Job started once the node was done', async () => {
    const kc = cp().adminKubeConfig();
    const op = `op-${PASSED.slice(-4)}`;
    await repo.push(
      {
        'ops/passed.yaml': onNode(PASSED),
        'ops/order.yaml': gateDoc('order', op, [gateJob('check', 0)], [gateJob('rebalance', 0)]),
      },
      'ops: a NodeOp whose gate passes',
    );
    const core = kc.makeApiClient(CoreV1Api);
    await eventually(
      `${PASSED} done and its lock released`,
      async () => {
        const a = (await core.readNode({ name: PASSED })).metadata?.annotations ?? {};
        return a[`nodeop.drydock.dev/${op}`] !== undefined && a['drydock.dev/operation'] === undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const [before] = recorder.jobsFor(PASSED, 'before');
    const [operation] = recorder.jobsFor(PASSED, 'operation');
    const [after] = recorder.jobsFor(PASSED, 'after');
    const { on, off } = recorder.cordons(PASSED);
    assert.equal(recorder.jobsFor(PASSED, 'before').length, 1, 'one before-Job');
    assert.equal(recorder.jobsFor(PASSED, 'after').length, 1, 'one after-Job');
    assert.equal(on.length, 1, 'cordoned once');
    assert.equal(off.length, 1, 'uncordoned once');
    assert.ok(
      before?.finished !== undefined && before.finished <= (on[0] ?? 0),
      'before-Job finished before the cordon',
    );
    assert.ok(
      operation !== undefined && (on[0] ?? Infinity) <= operation.created,
      'the operation ran after the cordon',
    );
    assert.ok(
      after !== undefined && operation?.finished !== undefined && operation.finished <= after.created,
      'after-Job created once the operation finished',
    );
    assert.ok((off[0] ?? Infinity) <= (after?.created ?? 0), 'after-Job created once the node was uncordoned');
    // Nothing reads the gate Jobs any more: they are deleted.
    await eventually(
      'gate Jobs cleaned up',
      async () =>
        recorder.jobs.filter(
          (s) => s.type === 'DELETED' && [before?.uid, after?.uid].includes(s.obj.metadata?.uid ?? ''),
        ).length === 2,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  });

  it('a replace rollout whose before-Job fails: its node stays Failed round after round, and no other node starts', async () => {
    const core = cp().adminKubeConfig().makeApiClient(CoreV1Api);
    await repo.push(
      {
        'ops/workers.yaml': doc('ScalingGroup', 'workers', {
          provider: 'sim',
          groupId: 'workers',
          nodeImage: 'workers',
          role: 'worker',
        }),
        'ops/image.yaml': doc('NodeImage', 'workers', {
          image: 'os-v2',
          strategy: 'replace',
          rollout: rolloutYaml({ stopOnFailure: true, joinTimeout: '60s' }),
        }),
        'ops/image-gate.yaml': doc('UpgradeGate', 'image-hold', {
          appliesTo: { targets: [{ kind: 'NodeImage', name: 'workers' }] },
          before: [gateJob('imagecheck', 1)],
          after: [],
        }),
      },
      'images: workers to os-v2, behind a gate that fails',
    );
    const held = async () =>
      (await core.listNode({ labelSelector: 'sim.drydock.dev/group=workers' })).items.filter((n) => {
        const a = n.metadata?.annotations ?? {};
        return (a['drydock.dev/operation'] ?? '').startsWith('NodeImage/') && a['drydock.dev/phase'] !== 'Done';
      });
    const status = async (): Promise<string> => (await repo.statusFile('status/NodeImage/workers.yaml')) ?? '';
    const failed = await eventually(
      'a worker Failed by the gate Job, the NodeImage Halted',
      async () => {
        const n = (await held()).find((x) => x.metadata?.annotations?.['drydock.dev/phase'] === 'Failed');
        return n !== undefined && /phase: Halted/.test(await status()) ? (n.metadata?.name ?? '') : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    // Rounds later (each one the service ran as the leader), the failure is still the record.
    assert.ok(drydock);
    await afterLeaderRounds(drydock, 5);
    const after = await held();
    assert.deepEqual(
      after.map((n) => n.metadata?.name),
      [failed],
      'the Failed node is the only NodeImage node not Done: not released, and no other started',
    );
    const a = after[0]?.metadata?.annotations ?? {};
    assert.equal(a['drydock.dev/phase'], 'Failed');
    assert.match(a['drydock.dev/reason'] ?? '', /UpgradeGate image-hold before-Job .* failed/);
    assert.match(await status(), /phase: Halted/);
  });
});
