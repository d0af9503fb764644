/** The NodeOp round as tables: one observed state in, the actions and waits it must give. */
import assert from 'node:assert/strict';
import { plan } from '../../../src/plan/index.js';
import type { Action, Plan } from '../../../src/plan/types.js';
import { laneOf } from '../../../src/execute/lanes.js';
import type { ObservedJob, ObservedNode } from '../../../src/observe/types.js';
import { ANNOTATIONS, nodeOpRecordKey } from '../../../src/protocol/keys.js';
import type { NodeImage, NodeMaintenance, NodeOp } from '../../../src/spec/model.js';
import { at, config, desired, iso, node, nodeImage, nodeMaintenance, observed, pdb, pod } from '../fixtures.js';
import { nodeOp } from './fixtures.js';
import { nodeSteps } from '../helpers.js';
import { jobLabels } from '../../../src/protocol/jobs.js';

const NS = 'drydock-system';
const LOCK = 'NodeOp/patch@r1';
const JOB = 'nodeop-patch-worker-0-r1';

function n(
  name: string,
  o: {
    cp?: boolean;
    annotations?: Record<string, string>;
    unschedulable?: boolean;
    bootID?: string;
    ready?: boolean;
    readySince?: number;
  } = {},
): ObservedNode {
  const base = node(name, `sim://g/${name}`, {
    annotations: o.annotations ?? {},
    unschedulable: o.unschedulable ?? false,
    ready: o.ready ?? true,
    readySince: o.readySince ?? -3600,
    ...(o.cp ? { labels: { 'node-role.kubernetes.io/control-plane': '' } } : {}),
  });
  return { ...base, bootID: o.bootID ?? `boot-${name}` };
}

const held = (phase: string, extra: Record<string, string> = {}): Record<string, string> => ({
  [ANNOTATIONS.operation]: LOCK,
  [ANNOTATIONS.phase]: phase,
  [ANNOTATIONS.phaseSince]: iso(-10),
  ...extra,
});
const job = (name: string, state: 'running' | 'succeeded' | 'failed', attempts = 1): ObservedJob => ({
  namespace: NS,
  name,
  labels: {},
  succeeded: state === 'succeeded',
  failed: state === 'failed',
  attempts,
  ...(state === 'failed' ? { failureReason: 'BackoffLimitExceeded' } : {}),
});

function run(
  op: NodeOp | undefined,
  nodes: ObservedNode[],
  o: {
    jobs?: ObservedJob[];
    budget?: number;
    pods?: ReturnType<typeof pod>[];
    nodeMaintenances?: NodeMaintenance[];
    pdbs?: ReturnType<typeof pdb>[];
    perNodeSeconds?: number;
  } = {},
): Plan {
  const d = desired({
    config: config(o.budget ?? 10),
    nodeOps: op === undefined ? [] : [op],
    nodeMaintenances: o.nodeMaintenances ?? [],
  });
  return nodeSteps(
    plan(d, observed({ nodes, jobs: o.jobs ?? [], pods: o.pods ?? [], pdbs: o.pdbs ?? [] }), at(0), {
      jobNamespace: NS,
      rebootTimeoutSeconds: 600,
      ...(o.perNodeSeconds !== undefined ? { perNodeSeconds: o.perNodeSeconds } : {}),
    }),
  );
}

const kinds = (p: Plan): string[] => p.actions.map((a) => `${a.kind} ${'node' in a ? a.node : ''}`.trim());
const started = (p: Plan): string[] =>
  p.actions
    .filter(
      (a): a is Extract<Action, { kind: 'annotateNode' }> =>
        a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending',
    )
    .map((a) => a.node);

describe('NodeOp planner', () => {
  it('starts control-plane nodes first; workers wait until every one is done', () => {
    const p = run(nodeOp('patch', { concurrency: 2 }), [n('cp-0', { cp: true }), n('worker-0'), n('worker-1')]);
    assert.deepEqual(started(p), ['cp-0']);
    assert.ok(p.waits.some((w) => w.code === 'concurrency' && /control-plane/.test(w.reason)));
  });

  it('concurrency 0 starts every selected node at once, within the cluster budget', () => {
    assert.deepEqual(started(run(nodeOp('patch', { concurrency: 0 }), [n('worker-0'), n('worker-1'), n('worker-2')])), [
      'worker-0',
      'worker-1',
      'worker-2',
    ]);
    const p = run(nodeOp('patch', { concurrency: 0 }), [n('worker-0'), n('worker-1'), n('worker-2')], { budget: 2 });
    assert.deepEqual(started(p), ['worker-0', 'worker-1']);
    assert.ok(p.waits.some((w) => w.code === 'budget'));
  });

  it('says that concurrency 0 (all at once) is limited to the cluster budget, in the plan and the status', () => {
    const nodes = [n('worker-0'), n('worker-1'), n('worker-2')];
    const p = run(nodeOp('patch', { concurrency: 0 }), nodes, { budget: 1 });
    const said = /concurrency 0 \(all at once\) is limited to the cluster budget of 1/;
    assert.match(p.specs.find((s) => s.spec.kind === 'NodeOp')?.waitingFor ?? '', said);
    assert.ok(p.notes.some((x) => said.test(x.text) && /at most 1 of its 3 nodes at once/.test(x.text)));
    // A concurrency of its own is not "all at once", and a budget that covers every node is no limit.
    assert.ok(!run(nodeOp('patch', { concurrency: 2 }), nodes, { budget: 1 }).waits.some((w) => said.test(w.reason)));
    assert.ok(!run(nodeOp('patch', { concurrency: 0 }), nodes, { budget: 3 }).notes.some((x) => said.test(x.text)));
  });

  it('counts nodes in flight against concurrency, Failed ones not', () => {
    const nodes = [
      n('worker-0', { annotations: held('Updating') }),
      n('worker-1', { annotations: held('Failed') }),
      n('worker-2'),
      n('worker-3'),
    ];
    assert.deepEqual(started(run(nodeOp('patch', { concurrency: 2 }), nodes, { jobs: [job(JOB, 'running')] })), [
      'worker-2',
    ]);
  });

  it('never starts a node whose Job succeeded for this revision; a new revision runs there again', () => {
    const done = n('worker-0', { annotations: { [nodeOpRecordKey('patch')]: 'r1' } });
    assert.deepEqual(started(run(nodeOp('patch'), [done])), []);
    assert.equal(run(nodeOp('patch'), [done]).specs[0]?.phase, 'Complete');
    assert.deepEqual(started(run(nodeOp('patch', { revision: 'r2' }), [done])), ['worker-0']);
  });

  it('starts nothing before its start approval (exact revision) is merged', () => {
    const op = nodeOp('patch', { rollout: { ...nodeOp('patch').rollout, approval: { required: 'start' } } });
    const waiting = run(op, [n('worker-0')]);
    assert.deepEqual(waiting.actions, []);
    assert.match(
      waiting.waits[0]?.reason ?? '',
      /merge approvals\/patch-start\.yaml \(kind Approval, target NodeOp\/patch, revision r1, stage start\)/,
    );
    const approval = {
      kind: 'Approval' as const,
      name: 'go',
      apiVersion: 'drydock.dev/v1alpha1',
      source: op.source,
      revision: 'a',
      target: { kind: 'NodeOp' as const, name: 'patch' },
      stage: 'start' as const,
    };
    const other = plan(
      desired({ nodeOps: [op], approvals: [{ ...approval, targetRevision: 'r0' }] }),
      observed({ nodes: [n('worker-0')] }),
      at(0),
    );
    assert.deepEqual(other.actions, [], 'an approval of another revision does not count');
    const go = plan(
      desired({ nodeOps: [op], approvals: [{ ...approval, targetRevision: 'r1' }] }),
      observed({ nodes: [n('worker-0')] }),
      at(0),
    );
    assert.deepEqual(started(go), ['worker-0']);
  });

  it('starts nothing outside its maintenance window, and says when it opens', () => {
    const op = nodeOp('patch', { rollout: { ...nodeOp('patch').rollout, window: 'nights' } });
    const w = {
      kind: 'MaintenanceWindow' as const,
      name: 'nights',
      apiVersion: 'drydock.dev/v1alpha1',
      source: op.source,
      revision: 'w',
      timeZone: 'UTC',
      schedules: [{ cron: '0 22 * * *', durationSeconds: 3600 }],
      exclusions: [],
    };
    const p = plan(desired({ nodeOps: [op], maintenanceWindows: [w] }), observed({ nodes: [n('worker-0')] }), at(0));
    assert.deepEqual(p.actions, []);
    assert.equal(p.waits[0]?.code, 'window');
    assert.equal(p.waits[0]?.until, '2026-03-02T22:00:00.000Z');
  });

  it('leaves a node another operation holds, and says so', () => {
    // The holder is a NodeMaintenance in Git: its own steps on the node are its business.
    const p = run(
      nodeOp('patch'),
      [
        n('worker-0', {
          annotations: { [ANNOTATIONS.operation]: 'NodeMaintenance/disk@m-disk', [ANNOTATIONS.phase]: 'Cordoned' },
        }),
      ],
      { nodeMaintenances: [nodeMaintenance('disk', 'worker-0')] },
    );
    assert.deepEqual(
      p.actions.filter((a) => a.spec.kind === 'NodeOp'),
      [],
    );
    assert.ok(p.waits.some((w) => w.code === 'lock' && w.node === 'worker-0'));
  });

  it('Pending without a drain: cordons when asked, names the Job, moves to Updating, and makes the Job after that patch', () => {
    const p = run(nodeOp('patch', { cordon: true }), [n('worker-0', { annotations: held('Pending') })]);
    assert.deepEqual(kinds(p), ['cordon worker-0', 'annotateNode worker-0', 'createNodeJob worker-0']);
    const a = p.actions[1] as Extract<Action, { kind: 'annotateNode' }>;
    assert.equal(a.annotations[ANNOTATIONS.phase], 'Updating');
    assert.equal(a.annotations[ANNOTATIONS.job], `${NS}/${JOB}`);
  });

  it('Pending without a drain, its Job already there (made before a restart): only the phase; the Job is read next round', () => {
    const p = run(nodeOp('patch', { cordon: true }), [n('worker-0', { annotations: held('Pending') })], {
      jobs: [job(JOB, 'succeeded')],
    });
    assert.deepEqual(kinds(p), ['cordon worker-0', 'annotateNode worker-0']);
  });

  it('Updating: creates the Job while none is observed, waits while it runs', () => {
    const op = nodeOp('patch', { backoffLimit: 2 });
    const p = run(op, [n('worker-0', { annotations: held('Updating') })]);
    assert.deepEqual(kinds(p), ['createNodeJob worker-0']);
    const a = p.actions[0] as Extract<Action, { kind: 'createNodeJob' }>;
    assert.deepEqual(a.operation, { kind: 'NodeOp', name: 'patch', revision: 'r1' });
    assert.equal(a.namespace, NS);
    assert.equal(a.job.backoffLimit, 2);
    assert.deepEqual(
      kinds(run(op, [n('worker-0', { annotations: held('Updating') })], { jobs: [job(JOB, 'running')] })),
      [],
    );
  });

  const drain = { enabled: true, force: false, ignoreDaemonSets: true, deleteEmptyDirData: true, onTimeout: 'halt' };

  describe("a free node's lock and its first step come in one round", () => {
    const draining = nodeOp('patch', { cordon: true, drain: drain as NodeOp['drain'] });
    const phases = (p: Plan): (string | null | undefined)[] =>
      p.actions.flatMap((a) => (a.kind === 'annotateNode' ? [a.annotations[ANNOTATIONS.phase]] : []));

    it("with a drain: the lock, the cordon with Draining, then the evictions, all in the node's lane", () => {
      const p = run(draining, [n('worker-0')], {
        pods: [pod('default', 'web-0', 'worker-0'), pod('default', 'web-1', 'worker-0')],
      });
      assert.deepEqual(kinds(p), [
        'annotateNode worker-0',
        'cordon worker-0',
        'annotateNode worker-0',
        'evict worker-0',
        'evict worker-0',
      ]);
      assert.deepEqual(phases(p), ['Pending', 'Draining']);
      assert.deepEqual(new Set(p.actions.map((a) => laneOf(a))), new Set(['worker-0']));
      // What the drain moves is recorded with Draining, as when the node was found Pending.
      const written = p.actions[2] as Extract<Action, { kind: 'annotateNode' }>;
      assert.equal(written.annotations[ANNOTATIONS.job], `${NS}/${JOB}`);
      assert.ok(p.waits.some((w) => w.code === 'drain' && w.node === 'worker-0'));
    });

    it('without a drain: the lock, the cordon with Updating, then the Job', () => {
      const p = run(nodeOp('patch', { cordon: true }), [n('worker-0')]);
      assert.deepEqual(kinds(p), [
        'annotateNode worker-0',
        'cordon worker-0',
        'annotateNode worker-0',
        'createNodeJob worker-0',
      ]);
      assert.deepEqual(phases(p), ['Pending', 'Updating']);
    });

    it('a node its drain cannot start on (a PDB allows no disruption) gets only its lock, and waits naming the PDB', () => {
      const p = run(draining, [n('worker-0')], {
        pods: [pod('default', 'web-0', 'worker-0', { pdbs: ['default/web'] })],
        pdbs: [pdb('default', 'web', 0)],
      });
      assert.deepEqual(kinds(p), ['annotateNode worker-0']);
      assert.equal(p.waits.find((w) => w.node === 'worker-0')?.code, 'pdb');
    });

    it("under a budget of one, of two free nodes one starts and is cordoned in its lock's round, the other waits", () => {
      const p = run(nodeOp('patch', { cordon: true, concurrency: 2 }), [n('worker-0'), n('worker-1')], { budget: 1 });
      assert.deepEqual(started(p), ['worker-0']);
      assert.deepEqual(
        kinds(p).filter((k) => k.startsWith('cordon')),
        ['cordon worker-0'],
      );
      assert.ok(p.waits.some((w) => w.code === 'budget'));
    });
  });

  describe("a node that passes its health gate hands its slot to the next node in its release's round", () => {
    const verifying = (): ObservedNode => n('worker-0', { annotations: held('Verifying') });
    const lanes = (p: Plan): (string | undefined)[] => p.actions.map((a) => laneOf(a));

    it("concurrency 1: the release, then the next node's lock, cordon and Job, all in the finished node's lane", () => {
      // The finished node's Job is deleted a round later: here it would come before the start.
      const p = run(nodeOp('patch', { cordon: true, concurrency: 1 }), [verifying(), n('worker-1')], {
        jobs: [job(JOB, 'succeeded')],
      });
      assert.deepEqual(kinds(p), [
        'annotateNode worker-0',
        'annotateNode worker-1',
        'cordon worker-1',
        'annotateNode worker-1',
        'createNodeJob worker-1',
      ]);
      const release = p.actions[0] as Extract<Action, { kind: 'annotateNode' }>;
      assert.equal(release.annotations[ANNOTATIONS.operation], null);
      assert.deepEqual(started(p), ['worker-1']);
      // After the release in one lane: a release that is not written holds the start (the executor).
      assert.deepEqual(lanes(p), ['worker-0', 'worker-0', 'worker-0', 'worker-0', 'worker-0']);
    });

    it('under a budget of one the finished node hands over its share of the budget too', () => {
      const p = run(nodeOp('patch', { cordon: true, concurrency: 2 }), [verifying(), n('worker-1'), n('worker-2')], {
        budget: 1,
      });
      assert.deepEqual(started(p), ['worker-1']);
      assert.deepEqual(
        kinds(p).filter((k) => k.startsWith('cordon')),
        ['cordon worker-1'],
      );
      assert.ok(p.waits.some((w) => w.code === 'budget'));
    });

    it('a node with a free slot of its own starts in its own lane; only the one past the limit waits for the release', () => {
      const p = run(nodeOp('patch', { concurrency: 2 }), [verifying(), n('worker-1'), n('worker-2')]);
      assert.deepEqual(started(p), ['worker-1', 'worker-2']);
      const lockOf = (node: string) =>
        p.actions.find(
          (a) => a.kind === 'annotateNode' && a.node === node && a.annotations[ANNOTATIONS.phase] === 'Pending',
        );
      assert.equal(laneOf(lockOf('worker-1') as Action), 'worker-1');
      assert.equal(laneOf(lockOf('worker-2') as Action), 'worker-0');
    });

    it("the finished node's Job is deleted the round after, once the Job controller has recorded its outcome", () => {
      const done = n('worker-0', { annotations: { [nodeOpRecordKey('patch')]: 'r1' } });
      const deletes = (j: ObservedJob): string[] =>
        kinds(run(nodeOp('patch', { concurrency: 1 }), [done], { jobs: [j] })).filter((k) => k.startsWith('deleteJob'));
      assert.deepEqual(deletes(job(JOB, 'succeeded')), ['deleteJob worker-0']);
      // Read as succeeded from its pod alone: the Job shows its outcome before it goes.
      assert.deepEqual(deletes({ ...job(JOB, 'succeeded'), unrecorded: true }), []);
    });

    it('a node still in its health gate hands nothing over', () => {
      const op = nodeOp('patch', { concurrency: 1 });
      const gated = { ...op, rollout: { ...op.rollout, healthGate: { minReadySeconds: 30 } } };
      const fresh = n('worker-0', { annotations: held('Verifying'), readySince: -5 });
      const p = run(gated, [fresh, n('worker-1')]);
      assert.deepEqual(started(p), []);
      assert.ok(p.waits.some((w) => w.code === 'concurrency'));
    });
  });

  describe('a drained node and its first evictions come a round sooner', () => {
    const op = nodeOp('patch', { cordon: true, drain: drain as NodeOp['drain'] });
    const cordoned = (phase: string): ObservedNode =>
      n('worker-0', {
        unschedulable: true,
        annotations: held(phase, { [ANNOTATIONS.job]: `${NS}/${JOB}`, [ANNOTATIONS.cordoned]: 'true' }),
      });

    it('Pending with drain: the cordon, its phase Draining, then the evictions, in one round', () => {
      const p = run(op, [n('worker-0', { annotations: held('Pending') })], {
        pods: [pod('default', 'web-0', 'worker-0'), pod('default', 'web-1', 'worker-0')],
      });
      assert.deepEqual(kinds(p), ['cordon worker-0', 'annotateNode worker-0', 'evict worker-0', 'evict worker-0']);
      assert.equal(
        (p.actions[1] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.phase],
        'Draining',
      );
      assert.ok(p.waits.some((w) => w.code === 'drain' && w.node === 'worker-0'));
    });

    it('Pending with drain and nothing to move: cordoned and Draining; the drained step is the next round', () => {
      const p = run(op, [n('worker-0', { annotations: held('Pending') })]);
      assert.deepEqual(kinds(p), ['cordon worker-0', 'annotateNode worker-0']);
    });

    it('Draining, drained: the phase Updating, and the Job beside it, in one round', () => {
      const p = run(op, [cordoned('Draining')]);
      assert.deepEqual(kinds(p), ['annotateNode worker-0', 'createNodeJob worker-0']);
      assert.equal(
        (p.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.phase],
        'Updating',
      );
      // The Job is its own record: it starts with the phase's write, not after it.
      assert.deepEqual(
        p.actions.map((a) => a.beside === true),
        [false, true],
      );
    });

    it('Draining, its Job running beside a phase that was not written: only the phase; its pod is not drained', () => {
      const own = pod(NS, `${JOB}-x7k2p`, 'worker-0', { ownerKind: 'Job', ownerName: JOB });
      const p = run(op, [cordoned('Draining')], { jobs: [job(JOB, 'running')], pods: [own] });
      assert.deepEqual(kinds(p), ['annotateNode worker-0']);
      assert.equal(
        (p.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.phase],
        'Updating',
      );
      // Another Job's pod of that name elsewhere is still the drain's.
      const foreign = pod('default', `${JOB}-x7k2p`, 'worker-0', { ownerKind: 'Job', ownerName: JOB });
      const drained = run(op, [cordoned('Draining')], { jobs: [job(JOB, 'running')], pods: [foreign] });
      assert.deepEqual(kinds(drained), ['evict worker-0']);
    });

    it('Draining, drained, its Job already there (made before a restart): only the phase; the Job is read next round', () => {
      const p = run(op, [cordoned('Draining')], { jobs: [job(JOB, 'succeeded')] });
      assert.deepEqual(kinds(p), ['annotateNode worker-0']);
      assert.equal(
        (p.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.phase],
        'Updating',
      );
    });

    it('Draining with pods left: evictions only, no Job', () => {
      const p = run(op, [cordoned('Draining')], { pods: [pod('default', 'web-0', 'worker-0')] });
      assert.deepEqual(kinds(p), ['evict worker-0']);
    });
  });

  it('Job succeeded with reboot: the bootID recorded, then the reboot pod for that boot, in one round', () => {
    const p = run(
      nodeOp('patch', { rebootOnSuccess: true }),
      [n('worker-0', { annotations: held('Updating'), bootID: 'b-1' })],
      { jobs: [job(JOB, 'succeeded')] },
    );
    // The pod beside the phase, in the node's lane: it carries the bootID itself, so it waits for no write.
    assert.deepEqual(kinds(p), ['annotateNode worker-0', 'createRebootPod worker-0']);
    assert.deepEqual(
      p.actions.map((x) => `${laneOf(x)}${x.beside === true ? ' beside' : ''}`),
      ['worker-0', 'worker-0 beside'],
    );
    const a = p.actions[0] as Extract<Action, { kind: 'annotateNode' }>;
    assert.equal(a.annotations[ANNOTATIONS.phase], 'Rebooting');
    assert.equal(a.annotations[ANNOTATIONS.bootID], 'b-1');
    const reboot = p.actions[1] as Extract<Action, { kind: 'createRebootPod' }>;
    assert.equal(reboot.bootID, 'b-1');
    assert.equal(reboot.method, undefined, 'not Bottlerocket: the nsenter reboot');
    // The reboot's deadline runs from the phase written in this round.
    const w = p.waits.find((x) => x.code === 'reboot' && x.node === 'worker-0');
    assert.equal(w?.until, iso(600));
  });

  it('Job succeeded with reboot, a reboot pod for that boot already there: the phase only, no second pod', () => {
    const p = run(
      nodeOp('patch', { rebootOnSuccess: true }),
      [n('worker-0', { annotations: held('Updating'), bootID: 'b-1' })],
      { jobs: [job(JOB, 'succeeded')], pods: [pod(NS, 'reboot-worker-0-b-1', 'worker-0')] },
    );
    assert.deepEqual(kinds(p), ['annotateNode worker-0']);
    assert.equal(
      (p.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.phase],
      'Rebooting',
    );
  });

  describe('a reboot pod made beside a Rebooting that was not written (a failed write, a restart)', () => {
    const op = nodeOp('patch', { rebootOnSuccess: true });
    const rebootPod = (revision: string, from: string) =>
      pod(NS, `reboot-worker-0-${from}`, 'worker-0', {
        ownerKind: 'None',
        labels: jobLabels({ kind: 'NodeOp', name: 'patch', revision }, 'worker-0', 'reboot'),
        rebootsFrom: from,
      });
    const recorded = (p: Plan) =>
      (p.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.bootID];

    it('the node since rebooted: the boot the pod names is recorded, not the new one, and no second pod', () => {
      const p = run(op, [n('worker-0', { annotations: held('Updating'), bootID: 'b-2' })], {
        jobs: [job(JOB, 'succeeded')],
        pods: [rebootPod('r1', 'b-1')],
      });
      assert.deepEqual(kinds(p), ['annotateNode worker-0']);
      assert.equal(recorded(p), 'b-1');
      // The round after: the boot changed from the recorded one, so the reboot is done.
      const next = run(
        op,
        [n('worker-0', { annotations: held('Rebooting', { [ANNOTATIONS.bootID]: 'b-1' }), bootID: 'b-2' })],
        { jobs: [job(JOB, 'succeeded')], pods: [rebootPod('r1', 'b-1')] },
      );
      assert.deepEqual(kinds(next), ['annotateNode worker-0', 'deleteJob worker-0']);
      assert.equal(
        (next.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.phase],
        'Verifying',
      );
    });

    it('a reboot pod of another revision is not this one: the boot now is recorded, with its own pod', () => {
      const p = run(op, [n('worker-0', { annotations: held('Updating'), bootID: 'b-2' })], {
        jobs: [job(JOB, 'succeeded')],
        pods: [rebootPod('r0', 'b-1')],
      });
      assert.deepEqual(kinds(p), ['annotateNode worker-0', 'createRebootPod worker-0']);
      assert.equal(recorded(p), 'b-2');
    });
  });

  it('Rebooting without its pod (its create failed, or a restart after the phase): the pod for the recorded boot, once', () => {
    const rebooting = n('worker-0', { annotations: held('Rebooting', { [ANNOTATIONS.bootID]: 'b-1' }), bootID: 'b-1' });
    const op = nodeOp('patch', { rebootOnSuccess: true });
    const p = run(op, [rebooting], { jobs: [job(JOB, 'succeeded')] });
    assert.deepEqual(kinds(p), ['createRebootPod worker-0', 'deleteJob worker-0']);
    assert.equal((p.actions[0] as Extract<Action, { kind: 'createRebootPod' }>).bootID, 'b-1');
    const withPod = run(op, [rebooting], { pods: [pod(NS, 'reboot-worker-0-b-1', 'worker-0')] });
    assert.deepEqual(kinds(withPod), []);
    assert.ok(withPod.waits.some((w) => w.code === 'reboot'));
  });

  it('Rebooting: a new bootID and Ready moves the node to its health gate (uncordoned, the pod left to the clean-up); passing it finishes the node', () => {
    const node0 = n('worker-0', {
      annotations: held('Rebooting', { [ANNOTATIONS.bootID]: 'b-1', [ANNOTATIONS.cordoned]: 'true' }),
      unschedulable: true,
      bootID: 'b-2',
    });
    const p = run(nodeOp('patch', { rebootOnSuccess: true }), [node0], {
      pods: [pod(NS, 'reboot-worker-0-b-1', 'worker-0')],
    });
    assert.deepEqual(kinds(p), ['uncordon worker-0', 'annotateNode worker-0']);
    const verifying = p.actions[1] as Extract<Action, { kind: 'annotateNode' }>;
    assert.equal(verifying.annotations[ANNOTATIONS.phase], 'Verifying');
    const healthy = n('worker-0', { annotations: held('Verifying'), bootID: 'b-2' });
    const done = run(nodeOp('patch', { rebootOnSuccess: true }), [healthy]);
    assert.deepEqual(kinds(done), ['annotateNode worker-0']);
    const a = done.actions[0] as Extract<Action, { kind: 'annotateNode' }>;
    assert.equal(a.annotations[nodeOpRecordKey('patch')], 'r1');
    assert.equal(a.annotations[ANNOTATIONS.operation], null);
    assert.equal(a.annotations[ANNOTATIONS.doneAt], iso(0));
  });

  it('a reboot pod past its reboot goes with the clean-up once the node is done, not in its health gate', () => {
    const op = nodeOp('patch', { rebootOnSuccess: true });
    const gated: NodeOp = { ...op, rollout: { ...op.rollout, healthGate: { minReadySeconds: 30 } } };
    const made = pod(NS, 'reboot-worker-0-b-1', 'worker-0', {
      ownerKind: 'None',
      labels: jobLabels({ kind: 'NodeOp', name: 'patch', revision: 'r1' }, 'worker-0', 'reboot'),
      rebootsFrom: 'b-1',
    });
    const deleted = (p: Plan) =>
      p.actions.flatMap((a) => (a.kind === 'deleteRebootPod' ? [`${a.namespace}/${a.name}`] : []));
    const at = (annotations: Record<string, string>, pods = [made]) =>
      run(gated, [n('worker-0', { annotations, bootID: 'b-2', readySince: -5 })], { pods });
    // In the health gate a deletion in the node's lane would hold the round that sees it pass.
    assert.deepEqual(deleted(at(held('Verifying'))), [], 'in the health gate');
    assert.deepEqual(deleted(at(held('Failed'))), [`${NS}/reboot-worker-0-b-1`], 'failed');
    // Done, but held by another operation since: no spec acts on a node another holds.
    const other = {
      [nodeOpRecordKey('patch')]: 'r1',
      [ANNOTATIONS.operation]: 'NodeOp/other@r1',
      [ANNOTATIONS.phase]: 'Failed',
      [ANNOTATIONS.phaseSince]: iso(-10),
    };
    assert.deepEqual(deleted(at(other)), [], 'held by another');
    assert.deepEqual(deleted(at({ [nodeOpRecordKey('patch')]: 'r1' })), [`${NS}/reboot-worker-0-b-1`], 'done');
    assert.deepEqual(deleted(at(held('Failed'), [{ ...made, terminating: true }])), [], 'already going');
    // Not in the round that reads the reboot's end (the node still Rebooting): the uncordon goes alone.
    const rebooted = at(held('Rebooting', { [ANNOTATIONS.bootID]: 'b-1' }));
    assert.deepEqual(kinds(rebooted), ['annotateNode worker-0']);
    assert.equal(
      (rebooted.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.phase],
      'Verifying',
    );
    // Another revision's pod is not this operation's to clean up here.
    const r0 = {
      ...made,
      labels: jobLabels({ kind: 'NodeOp', name: 'patch', revision: 'r0' }, 'worker-0', 'reboot'),
    };
    assert.deepEqual(deleted(at(held('Failed'), [r0])), []);
  });

  it('Verifying: a node back Ready for less than minReadySeconds waits on its health gate; once it stayed, it is done', () => {
    const gated = (): NodeOp => {
      const op = nodeOp('patch', { rebootOnSuccess: true });
      return { ...op, rollout: { ...op.rollout, healthGate: { minReadySeconds: 30 } } };
    };
    const fresh = n('worker-0', { annotations: held('Verifying'), bootID: 'b-2', readySince: -5 });
    const waiting = run(gated(), [fresh]);
    assert.deepEqual(kinds(waiting), [], 'not finished before it stayed Ready 30 s');
    const w = waiting.waits.find((x) => x.code === 'health');
    assert.match(w?.reason ?? '', /worker-0: health gate: it has not stayed Ready for 30s/);
    assert.equal(w?.until, iso(25));
    const stayed = n('worker-0', { annotations: held('Verifying'), bootID: 'b-2', readySince: -31 });
    const done = run(gated(), [stayed]);
    assert.deepEqual(kinds(done), ['annotateNode worker-0']);
    assert.equal(
      (done.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[nodeOpRecordKey('patch')],
      'r1',
    );
  });

  it('Rebooting past the deadline fails the node, its reboot pod deleted first; not Ready yet within it waits', () => {
    const op = nodeOp('patch', { rebootOnSuccess: true });
    const late = n('worker-0', {
      annotations: {
        ...held('Rebooting', { [ANNOTATIONS.bootID]: 'b-1', [ANNOTATIONS.cordoned]: 'true' }),
        [ANNOTATIONS.phaseSince]: iso(-601),
      },
      unschedulable: true,
      bootID: 'b-1',
      ready: false,
    });
    const p = run(op, [late], { pods: [pod(NS, 'reboot-worker-0-b-1', 'worker-0')] });
    // The pod that never rebooted the node would reboot it later, back in service: it goes before the uncordon.
    assert.deepEqual(kinds(p), ['deleteRebootPod worker-0', 'uncordon worker-0', 'annotateNode worker-0']);
    assert.equal((p.actions[0] as Extract<Action, { kind: 'deleteRebootPod' }>).name, 'reboot-worker-0-b-1');
    assert.equal(
      (p.actions.at(-1) as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.phase],
      'Failed',
    );
    // Without a pod (never created), there is nothing to delete.
    assert.deepEqual(kinds(run(op, [late])), ['uncordon worker-0', 'annotateNode worker-0']);
    const early = n('worker-0', {
      annotations: held('Rebooting', { [ANNOTATIONS.bootID]: 'b-1' }),
      bootID: 'b-2',
      ready: false,
    });
    assert.deepEqual(kinds(run(op, [early])), []);
  });

  it('a failed Job fails the node (uncordoned, reason with the Job); stopOnFailure starts no new node', () => {
    const node0 = n('worker-0', {
      annotations: held('Updating', { [ANNOTATIONS.cordoned]: 'true' }),
      unschedulable: true,
    });
    const p = run(nodeOp('patch', { stopOnFailure: true }), [node0, n('worker-1')], { jobs: [job(JOB, 'failed', 4)] });
    assert.deepEqual(kinds(p), ['uncordon worker-0', 'annotateNode worker-0']);
    const a = p.actions[1] as Extract<Action, { kind: 'annotateNode' }>;
    assert.equal(a.annotations[ANNOTATIONS.phase], 'Failed');
    assert.equal(
      a.annotations[ANNOTATIONS.reason],
      `Job ${NS}/${JOB} failed after 4 attempt(s) (BackoffLimitExceeded)`,
    );
    // The next round sees the Failed node: halted, the Job cleaned up, no start.
    const failed = n('worker-0', {
      annotations: held('Failed', { [ANNOTATIONS.reason]: 'x', [ANNOTATIONS.job]: `${NS}/${JOB}` }),
    });
    const next = run(nodeOp('patch', { stopOnFailure: true }), [failed, n('worker-1')], {
      jobs: [job(JOB, 'failed', 4)],
    });
    assert.deepEqual(kinds(next), ['deleteJob worker-0']);
    assert.equal(next.specs[0]?.phase, 'Halted');
    assert.deepEqual(
      next.specs[0]?.nodes.find((r) => r.node === 'worker-0'),
      { node: 'worker-0', phase: 'Failed', since: iso(-10), job: `${NS}/${JOB}`, attempts: 4, lastError: 'x' },
    );
  });

  it('a NodeOp removed from Git starts nothing; its node in flight finishes the Job, then is uncordoned and released', () => {
    const node0 = n('worker-0', {
      annotations: held('Updating', { [ANNOTATIONS.cordoned]: 'true' }),
      unschedulable: true,
    });
    const running = run(undefined, [node0, n('worker-1')], { jobs: [job(JOB, 'running')] });
    assert.deepEqual(kinds(running), []);
    assert.ok(running.waits.some((w) => w.code === 'job'));
    const finished = run(undefined, [node0, n('worker-1')], { jobs: [job(JOB, 'succeeded')] });
    assert.deepEqual(kinds(finished), ['uncordon worker-0', 'annotateNode worker-0', 'deleteJob worker-0']);
    assert.equal(
      (finished.actions[1] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.operation],
      null,
    );
  });
});

describe('NodeImage inPlace and NodeOpUpgrade on the NodeOp machinery', () => {
  const inPlace = (): NodeImage => ({ ...nodeImage('edge', 'os:v2', { concurrency: 1 }, 'e1'), strategy: 'inPlace' });

  it('inPlace: locks as NodeImage, runs the image in a Job marked with it, and is done when the node carries the image', () => {
    const d = desired({ nodeImages: [inPlace()] });
    const start = plan(d, observed({ nodes: [n('worker-0'), n('worker-1')] }), at(0), { jobNamespace: NS });
    assert.deepEqual(started(start), ['worker-0']);
    assert.equal(
      (start.actions[0] as Extract<Action, { kind: 'annotateNode' }>).annotations[ANNOTATIONS.operation],
      'NodeImage/edge@e1',
    );
    const updating = n('worker-0', {
      annotations: { [ANNOTATIONS.operation]: 'NodeImage/edge@e1', [ANNOTATIONS.phase]: 'Updating' },
    });
    const job = plan(d, observed({ nodes: [updating, n('worker-1')] }), at(0), { jobNamespace: NS })
      .actions[0] as Extract<Action, { kind: 'createNodeJob' }>;
    assert.equal(job.kind, 'createNodeJob');
    assert.equal(job.appliesImage, 'os:v2');
    assert.equal(job.job.image, 'os:v2');
    assert.deepEqual(job.operation, { kind: 'NodeImage', name: 'edge', revision: 'e1' });
    const rebooted = n('worker-0', {
      annotations: {
        [ANNOTATIONS.operation]: 'NodeImage/edge@e1',
        [ANNOTATIONS.phase]: 'Rebooting',
        [ANNOTATIONS.bootID]: 'b-1',
      },
      bootID: 'b-2',
    });
    const verifying = plan(d, observed({ nodes: [rebooted, n('worker-1')] }), at(0), { jobNamespace: NS });
    assert.ok(
      verifying.actions.some(
        (a) => a.kind === 'annotateNode' && a.node === 'worker-0' && a.annotations[ANNOTATIONS.phase] === 'Verifying',
      ),
    );
    const healthy = n('worker-0', {
      annotations: { [ANNOTATIONS.operation]: 'NodeImage/edge@e1', [ANNOTATIONS.phase]: 'Verifying' },
    });
    const done = plan(d, observed({ nodes: [healthy, n('worker-1')] }), at(0), { jobNamespace: NS });
    const release = done.actions.find(
      (a): a is Extract<Action, { kind: 'annotateNode' }> => a.kind === 'annotateNode' && a.node === 'worker-0',
    );
    assert.equal(release?.annotations[ANNOTATIONS.image], 'os:v2');
    const row = plan(
      d,
      observed({ nodes: [n('worker-0', { annotations: { [ANNOTATIONS.image]: 'os:v2' } }), n('worker-1')] }),
      at(0),
    ).specs.find((s) => s.spec.kind === 'NodeImage');
    assert.deepEqual(row?.progress, { done: 1, total: 2 });
  });

  it('a NodeOpUpgrade reports under its own name, and its generated NodeOp runs control-plane first, one at a time', () => {
    const op = nodeOp('edge-os', {
      generatedBy: 'NodeOpUpgrade/edge-os',
      concurrency: 1,
      rebootOnSuccess: true,
      cordon: true,
    });
    const p = run(op, [n('cp-0', { cp: true }), n('cp-1', { cp: true }), n('worker-0')]);
    assert.deepEqual(started(p), ['cp-0']);
    assert.deepEqual(
      p.specs.map((s) => `${s.spec.kind}/${s.spec.name}`),
      ['NodeOpUpgrade/edge-os'],
    );
  });

  describe('ETA (perNodeSeconds 120)', () => {
    const five = (): ObservedNode[] => ['worker-0', 'worker-1', 'worker-2', 'worker-3', 'worker-4'].map((x) => n(x));

    it('concurrency 2 over 5 nodes: waves of 2, 2 and 1, each node done at the end of its wave', () => {
      const p = run(nodeOp('patch', { concurrency: 2 }), five(), { perNodeSeconds: 120 });
      const status = p.specs.find((x) => x.spec.name === 'patch');
      assert.equal(status?.eta, iso(360));
      assert.deepEqual(
        status?.nodes.map((r) => [r.node, r.eta]),
        [
          ['worker-0', iso(120)],
          ['worker-1', iso(120)],
          ['worker-2', iso(240)],
          ['worker-3', iso(240)],
          ['worker-4', iso(360)],
        ],
      );
      assert.equal(p.forecast.eta, iso(360), "the plan's ETA counts node operations too");
    });

    it('concurrency 0 (all at once) is held to the cluster budget; a node in flight goes first', () => {
      const nodes = five();
      nodes[3] = n('worker-3', { annotations: held('Updating'), unschedulable: true });
      const p = run(nodeOp('patch', { concurrency: 0 }), nodes, { budget: 3, perNodeSeconds: 120 });
      const status = p.specs.find((x) => x.spec.name === 'patch');
      assert.equal(status?.eta, iso(240));
      assert.deepEqual(
        p.forecast.waves.map((w) => w.nodes),
        [
          ['worker-3', 'worker-0', 'worker-1'],
          ['worker-2', 'worker-4'],
        ],
      );
    });

    it('no ETA while its start approval is missing', () => {
      const op = nodeOp('patch', { rollout: { ...nodeOp('patch').rollout, approval: { required: 'start' } } });
      const status = run(op, five()).specs.find((x) => x.spec.name === 'patch');
      assert.equal(status?.eta, undefined);
      assert.ok(status?.nodes.every((r) => r.eta === undefined));
    });
  });

  describe('what a NodeOp must never do to a node', () => {
    const draining = nodeOp('patch', {
      cordon: true,
      drain: {
        enabled: true,
        force: false,
        ignoreDaemonSets: true,
        deleteEmptyDirData: true,
        onTimeout: 'halt',
      },
    });

    it('cordons no node whose pod a PDB allows no disruption for: it waits, naming the PDB', () => {
      const p = run(draining, [n('worker-0', { annotations: held('Pending') })], {
        pods: [pod('default', 'web-0', 'worker-0', { pdbs: ['default/web'] })],
        pdbs: [pdb('default', 'web', 0)],
      });
      assert.deepEqual(
        kinds(p).filter((k) => k.startsWith('cordon') || k.startsWith('evict')),
        [],
      );
      const wait = p.waits.find((w) => w.node === 'worker-0');
      assert.equal(wait?.code, 'pdb');
      assert.match(wait?.reason ?? '', /default\/web/);
      // The same node with a PDB that allows one disruption is cordoned.
      const allowed = run(draining, [n('worker-0', { annotations: held('Pending') })], {
        pods: [pod('default', 'web-0', 'worker-0', { pdbs: ['default/web'] })],
        pdbs: [pdb('default', 'web', 1)],
      });
      assert.ok(kinds(allowed).includes('cordon worker-0'), kinds(allowed).join(', '));
    });

    // Catches a Pending node cordoned without asking the budget (leavePending's canTakeDown).
    it('takes no node down past the cluster budget: a Pending node waits while another is down', () => {
      const nodes = (): ObservedNode[] => [
        n('worker-0', { annotations: held('Pending') }),
        n('worker-1', {
          unschedulable: true,
          annotations: held('Updating', {
            [ANNOTATIONS.job]: `${NS}/nodeop-patch-worker-1-r1`,
            [ANNOTATIONS.cordoned]: 'true',
          }),
        }),
      ];
      const jobs = [job('nodeop-patch-worker-1-r1', 'running')];
      const full = run(draining, nodes(), { jobs, budget: 1 });
      assert.deepEqual(
        full.actions.filter((a) => 'node' in a && a.node === 'worker-0'),
        [],
      );
      assert.equal(full.waits.find((w) => w.node === 'worker-0')?.code, 'budget');
      // With room for a second node down, the same node is cordoned.
      const room = run(draining, nodes(), { jobs, budget: 2 });
      assert.ok(kinds(room).includes('cordon worker-0'), kinds(room).join(', '));
    });

    it('never uncordons a node a person cordoned, at Verifying or when it fails', () => {
      // Unschedulable without drydock.dev/cordoned: a person's cordon, not drydock's.
      const verifying = run(
        nodeOp('patch', { cordon: true }),
        [n('worker-0', { unschedulable: true, annotations: held('Updating', { [ANNOTATIONS.job]: `${NS}/${JOB}` }) })],
        { jobs: [job(JOB, 'succeeded')] },
      );
      assert.ok(
        verifying.actions.some((a) => a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Verifying'),
        kinds(verifying).join(', '),
      );
      assert.deepEqual(
        verifying.actions.filter((a) => a.kind === 'uncordon'),
        [],
      );
      const failing = run(
        nodeOp('patch', { cordon: true }),
        [n('worker-0', { unschedulable: true, annotations: held('Updating', { [ANNOTATIONS.job]: `${NS}/${JOB}` }) })],
        { jobs: [job(JOB, 'failed', 4)] },
      );
      assert.ok(
        failing.actions.some((a) => a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Failed'),
      );
      assert.deepEqual(
        failing.actions.filter((a) => a.kind === 'uncordon'),
        [],
      );
      // drydock's own cordon is lifted at Verifying.
      const ours = run(
        nodeOp('patch', { cordon: true }),
        [
          n('worker-0', {
            unschedulable: true,
            annotations: held('Updating', { [ANNOTATIONS.job]: `${NS}/${JOB}`, [ANNOTATIONS.cordoned]: 'true' }),
          }),
        ],
        { jobs: [job(JOB, 'succeeded')] },
      );
      assert.ok(kinds(ours).includes('uncordon worker-0'), kinds(ours).join(', '));
    });
  });

  it("a done node's status row names its Job with its namespace, and what the Job said", () => {
    const done = {
      [nodeOpRecordKey('patch')]: 'r1',
      [ANNOTATIONS.job]: `${NS}/${JOB}`,
      [ANNOTATIONS.jobMessage]: 'patched 3 files',
    };
    const p = run(nodeOp('patch'), [n('worker-0', { annotations: done })]);
    assert.deepEqual(
      p.specs.find((s) => s.spec.kind === 'NodeOp')?.nodes.map((r) => [r.node, r.phase, r.job, r.jobMessage]),
      [['worker-0', 'Done', `${NS}/${JOB}`, 'patched 3 files']],
    );
    // Another operation's Job ran there since: the message is that one's, and is not shown.
    const since = { ...done, [ANNOTATIONS.job]: `${NS}/nodeop-other-worker-0-r9` };
    const row = run(nodeOp('patch'), [n('worker-0', { annotations: since })]).specs[0]?.nodes[0];
    assert.deepEqual([row?.job, row?.jobMessage], [`${NS}/${JOB}`, undefined]);
  });

  it('finishing a node keeps its Job name beside the message; the next start clears both', () => {
    const verifying = held('Verifying', { [ANNOTATIONS.job]: `${NS}/${JOB}`, [ANNOTATIONS.jobMessage]: 'ok' });
    const finish = run(nodeOp('patch'), [n('worker-0', { annotations: verifying })]).actions.find(
      (a): a is Extract<Action, { kind: 'annotateNode' }> =>
        a.kind === 'annotateNode' && a.annotations[nodeOpRecordKey('patch')] === 'r1',
    );
    assert.ok(finish, 'the node is finished');
    assert.equal(ANNOTATIONS.job in finish.annotations, false);
    assert.equal(finish.annotations[ANNOTATIONS.operation], null);
    const start = run(nodeOp('patch', { revision: 'r2' }), [
      n('worker-0', { annotations: { [nodeOpRecordKey('patch')]: 'r1', [ANNOTATIONS.job]: `${NS}/${JOB}` } }),
    ]).actions.find(
      (a): a is Extract<Action, { kind: 'annotateNode' }> =>
        a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending',
    );
    assert.deepEqual([start?.annotations[ANNOTATIONS.job], start?.annotations[ANNOTATIONS.jobMessage]], [null, null]);
  });

  it('a selector that matches no node is never Complete: it waits, saying it has run nowhere', () => {
    const kairos = nodeOp('hello', { nodeSelector: { matchLabels: { 'kairos.io/managed': 'true' } } });
    const p = run(kairos, [n('worker-0'), n('worker-1')]);
    const status = p.specs.find((s) => s.spec.kind === 'NodeOp');
    assert.equal(status?.phase, 'Waiting');
    assert.deepEqual(status?.progress, { done: 0, total: 0 });
    assert.match(status?.waitingFor ?? '', /matches no node, so it has run nowhere/);
    assert.match(status?.waitingFor ?? '', /kubectl label node <name> kairos\.io\/managed=true/);
    // Once a node carries the label, it runs there.
    const labelled = { ...n('worker-0'), labels: { 'kairos.io/managed': 'true' } };
    assert.deepEqual(started(run(kairos, [labelled, n('worker-1')])), ['worker-0']);
  });
});
