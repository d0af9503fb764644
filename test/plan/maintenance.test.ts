/**
 * NodeMaintenance in the planner: take the node (lock, cordon, evict what may go), report
 * medik8s' counters, wait for an operation in flight, end when the file leaves Git.
 */
import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { notActedOn, plan, type Plan, type SpecStatus } from '../../src/plan/index.js';
import { bare, LOCK, runCases, V1, V2, waitCodes } from './helpers.js';
import { applyNodeWrite, type NodeWrite, type PatchableNode } from './node-patch.js';
import {
  at,
  cloudGroup,
  config,
  desired,
  iso,
  nodeImage,
  nodeMaintenance,
  observed,
  pdb,
  pod,
  scalingGroup,
  workers,
} from './fixtures.js';

const M = { kind: 'NodeMaintenance', name: 'disk' } as const;
const M_LOCK = 'NodeMaintenance/disk@m-disk';

/**
 * The NodeImage whose lock (`NodeImage/workers@r7`) holds a node in the tests of a busy node,
 * in Git with its group, as a lock's holder is: a lock whose NodeImage is gone is released.
 */
const holding = {
  scalingGroups: [scalingGroup('workers', 'workers')],
  nodeImages: [nodeImage('workers', V2, {}, 'r7')],
};

/** What the maintenance itself does or waits for, beside the holder's own steps. */
function ofMaintenance<T extends { readonly spec: { readonly kind: string } }>(items: readonly T[]): T[] {
  return items.filter((x) => x.spec.kind === 'NodeMaintenance');
}

function statusOf(p: Plan): SpecStatus {
  const s = p.specs.find((x) => x.spec.kind === 'NodeMaintenance');
  assert.ok(s, 'a NodeMaintenance status row');
  return s;
}

function record(p: Plan, node: string): Record<string, unknown> {
  const a = p.actions.find(
    (x) => x.kind === 'annotateNode' && x.node === node && typeof x.annotations[ANNOTATIONS.maintenance] === 'string',
  );
  assert.ok(a?.kind === 'annotateNode', `a maintenance record written on ${node}`);
  return JSON.parse(a.annotations[ANNOTATIONS.maintenance] as string) as Record<string, unknown>;
}

/** worker-0 carries web-0 (PDB web allows 0), api-0, a DaemonSet pod and nothing else. */
function busyNode(annotations: Record<string, string> = {}, unschedulable = false) {
  const w = workers(2, V1, (i) => (i === 0 ? { annotations, unschedulable } : {}));
  return observed({
    nodes: w.nodes,
    cloudGroups: [cloudGroup('workers', V1, w.instances)],
    pods: [
      pod('default', 'web-0', 'worker-0', { pdbs: ['default/web'] }),
      pod('default', 'api-0', 'worker-0', { pdbs: ['default/api'] }),
      pod('kube-system', 'logs-0', 'worker-0', { ownerKind: 'DaemonSet', ownerName: 'logs' }),
      pod('default', 'web-1', 'worker-1', { pdbs: ['default/web'] }),
    ],
    pdbs: [pdb('default', 'web', 0), pdb('default', 'api', 1)],
  });
}

const inMaintenance = (extra: Record<string, string> = {}) => ({
  [ANNOTATIONS.operation]: M_LOCK,
  [ANNOTATIONS.phase]: 'Draining',
  [ANNOTATIONS.phaseSince]: iso(0),
  [ANNOTATIONS.cordoned]: 'true',
  [ANNOTATIONS.reason]: 'disk swap',
  ...extra,
});

/** medik8s' counters right after the take: web-0 held by its PDB, api-0 being evicted. */
const TAKEN = {
  reason: 'disk swap',
  totalPods: 3,
  evictionPods: 2,
  pendingPods: [{ pod: 'default/api-0' }, { pod: 'default/web-0', pdb: 'default/web' }],
  drainProgress: 0,
  lastUpdate: iso(0),
};
const runningRecord = JSON.stringify({ name: 'disk', revision: 'm-disk', phase: 'Running', ...TAKEN });

describe('plan: NodeMaintenance', () => {
  runCases([
    {
      name: 'merged: the lock and the record first, then the cordon, then evictions; a PDB-held pod waits, named with its PDB',
      desired: desired({ nodeMaintenances: [nodeMaintenance('disk', 'worker-0')] }),
      observed: busyNode(),
      now: at(0),
      check: (p) => {
        assert.deepEqual(
          p.actions.map((a) => `${a.kind} ${'node' in a ? a.node : ''}${a.kind === 'evict' ? ` ${a.pod}` : ''}`),
          ['annotateNode worker-0', 'cordon worker-0', 'evict worker-0 api-0'],
        );
        const a = p.actions[0];
        assert.ok(a?.kind === 'annotateNode');
        assert.equal(a.annotations[ANNOTATIONS.operation], M_LOCK);
        assert.equal(a.annotations[ANNOTATIONS.phase], 'Draining');
        assert.equal(a.annotations[ANNOTATIONS.reason], 'disk swap');
        assert.deepEqual(record(p, 'worker-0'), JSON.parse(runningRecord));
        const s = statusOf(p);
        assert.equal(s.phase, 'Running');
        assert.deepEqual(s.maintenance, { nodeName: 'worker-0', ...TAKEN });
        assert.deepEqual(waitCodes(p), ['pdb']);
        assert.match(s.waitingFor ?? '', /PDB default\/web allows no disruption of default\/web-0/);
      },
    },
    {
      name: 'drained: Succeeded, the counters kept from the take, progress 100',
      desired: desired({ nodeMaintenances: [nodeMaintenance('disk', 'worker-0')] }),
      observed: (() => {
        const o = busyNode(inMaintenance({ [ANNOTATIONS.maintenance]: runningRecord }), true);
        return { ...o, pods: o.pods.filter((x) => x.nodeName !== 'worker-0' || x.ownerKind === 'DaemonSet') };
      })(),
      now: at(60),
      check: (p) => {
        assert.deepEqual(
          bare(p).map((a) => a.kind),
          ['annotateNode'],
        );
        assert.equal(p.actions[0]?.kind === 'annotateNode' && p.actions[0].annotations[ANNOTATIONS.phase], 'Cordoned');
        const s = statusOf(p);
        assert.equal(s.phase, 'Succeeded');
        assert.deepEqual(s.progress, { done: 2, total: 2 });
        assert.equal(s.maintenance?.totalPods, 3);
        assert.equal(s.maintenance?.drainProgress, 100);
        assert.equal(s.maintenance?.lastUpdate, iso(60));
        assert.equal(s.waitingFor, undefined);
      },
    },
    {
      name: 'nothing changed: no API call, and lastUpdate stays the time of the last change',
      desired: desired({ nodeMaintenances: [nodeMaintenance('disk', 'worker-0')] }),
      observed: busyNode(inMaintenance({ [ANNOTATIONS.maintenance]: runningRecord }), true),
      now: at(300),
      check: (p) => {
        // api-0 is still there: its eviction is asked again; nothing else is written.
        assert.deepEqual(
          bare(p).map((a) => a.kind),
          ['evict'],
        );
        assert.equal(statusOf(p).maintenance?.lastUpdate, iso(0));
      },
    },
    {
      name: 'an operation in flight on the node finishes it first; the maintenance says it waits, and touches nothing',
      desired: desired({ ...holding, nodeMaintenances: [nodeMaintenance('disk', 'worker-0')] }),
      observed: busyNode({ [ANNOTATIONS.operation]: 'NodeImage/workers@r7', [ANNOTATIONS.phase]: 'Pending' }),
      now: at(0),
      check: (p) => {
        assert.deepEqual(ofMaintenance(p.actions), []);
        const s = statusOf(p);
        assert.equal(s.phase, 'Running');
        assert.match(s.waitingFor ?? '', /waits for NodeImage\/workers@r7 \(phase Pending\) to finish worker-0/);
        assert.deepEqual(
          ofMaintenance(p.waits).map((w) => w.code),
          ['lock'],
        );
      },
    },
    {
      name: 'a node that does not exist: Failed, naming it, and nothing done',
      desired: desired({ nodeMaintenances: [nodeMaintenance('disk', 'worker-9')] }),
      observed: busyNode(),
      now: at(0),
      check: (p) => {
        assert.deepEqual(p.actions, []);
        const s = statusOf(p);
        assert.equal(s.phase, 'Failed');
        assert.match(
          s.lastError ?? '',
          /^node worker-9 does not exist; the maintenance starts when a node of that name appears \(check spec.nodeName at specs\/test.yaml:1\)/,
        );
        assert.deepEqual(waitCodes(p), ['node']);
      },
    },
    {
      name: 'the cluster budget is full: it waits for room, and no rollout node takes it meanwhile',
      desired: desired({ config: config(1), ...holding, nodeMaintenances: [nodeMaintenance('disk', 'worker-0')] }),
      observed: (() => {
        const down = {
          [ANNOTATIONS.operation]: 'NodeImage/workers@r7',
          [ANNOTATIONS.phase]: 'Draining',
          [ANNOTATIONS.cordoned]: 'true',
        };
        const w = workers(2, V1, (i) => (i === 1 ? { annotations: down, unschedulable: true } : {}));
        return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V1, w.instances)] });
      })(),
      now: at(0),
      check: (p) => {
        // worker-1 is down for a NodeImage already (which goes on draining it), so nothing else may go.
        assert.deepEqual(ofMaintenance(p.actions), []);
        assert.deepEqual(
          p.actions.filter((a) => 'node' in a && a.node === 'worker-0'),
          [],
        );
        assert.match(
          statusOf(p).waitingFor ?? '',
          /worker-0 not cordoned yet: cluster budget allows 1 node unavailable/,
        );
      },
    },
    {
      name: 'deleted from Git: uncordoned (drydock cordoned it), lock released, the record kept as Ended with the time',
      desired: desired(),
      observed: busyNode(
        inMaintenance({ [ANNOTATIONS.phase]: 'Cordoned', [ANNOTATIONS.maintenance]: runningRecord }),
        true,
      ),
      now: at(900),
      check: (p) => {
        assert.deepEqual(
          bare(p).map((a) => `${a.kind} ${'node' in a ? a.node : ''}`),
          ['uncordon worker-0', 'annotateNode worker-0'],
        );
        const a = p.actions[1];
        assert.ok(a?.kind === 'annotateNode');
        for (const key of [ANNOTATIONS.operation, ANNOTATIONS.phase, ANNOTATIONS.cordoned, ANNOTATIONS.reason])
          assert.equal(a.annotations[key], null, key);
        assert.equal(record(p, 'worker-0')['endedAt'], iso(900));
        const s = statusOf(p);
        assert.deepEqual(
          [s.spec, s.phase, s.maintenance?.endedAt, s.maintenance?.evictionPods],
          [M, 'Ended', iso(900), 2],
        );
        assert.match(s.conditions[0]?.message ?? '', new RegExp(`ended at ${iso(900)}`));
      },
    },
    {
      name: 'deleted, on a node someone else had cordoned: left cordoned, lock released',
      desired: desired(),
      observed: busyNode(
        { [ANNOTATIONS.operation]: M_LOCK, [ANNOTATIONS.phase]: 'Cordoned', [ANNOTATIONS.maintenance]: runningRecord },
        true,
      ),
      now: at(900),
      check: (p) =>
        assert.deepEqual(
          bare(p).map((a) => a.kind),
          ['annotateNode'],
        ),
    },
    {
      name: 'ended earlier: the record on the node still gives the status row, with no action',
      desired: desired(),
      observed: busyNode({
        [ANNOTATIONS.maintenance]: JSON.stringify({
          ...JSON.parse(runningRecord),
          phase: 'Ended',
          pendingPods: [],
          endedAt: iso(900),
        }),
      }),
      now: at(2000),
      check: (p) => {
        assert.deepEqual(p.actions, []);
        assert.deepEqual([statusOf(p).phase, statusOf(p).maintenance?.endedAt], ['Ended', iso(900)]);
      },
    },
    {
      name: 'a drain past its timeout fails (onTimeout halt): the node stays cordoned and status says why',
      desired: desired({
        nodeMaintenances: [nodeMaintenance('disk', 'worker-0', 'disk swap', { timeoutSeconds: 120 })],
      }),
      observed: busyNode(inMaintenance({ [ANNOTATIONS.maintenance]: runningRecord }), true),
      now: at(120),
      check: (p) => {
        assert.deepEqual(
          bare(p).map((a) => a.kind),
          ['annotateNode'],
        );
        assert.equal(p.actions[0]?.kind === 'annotateNode' && p.actions[0].annotations[ANNOTATIONS.phase], 'Failed');
        const s = statusOf(p);
        assert.equal(s.phase, 'Failed');
        assert.match(
          s.lastError ?? '',
          /drain timed out after 120s with 2 pod\(s\) left \(default\/api-0, default\/web-0\)/,
        );
        assert.deepEqual(waitCodes(p), ['halted']);
      },
    },
  ]);

  it('no rollout starts on a node under maintenance; the next node starts instead', () => {
    const w = workers(3, V1);
    const d = desired({
      scalingGroups: [scalingGroup('workers', 'workers')],
      nodeImages: [nodeImage('workers', V2)],
      nodeMaintenances: [nodeMaintenance('disk', 'worker-0')],
    });
    const p = plan(d, observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] }), at(0));
    const locks = p.actions.flatMap((a) =>
      a.kind === 'annotateNode' && typeof a.annotations[ANNOTATIONS.operation] === 'string'
        ? [`${a.node} ${a.annotations[ANNOTATIONS.operation]}`]
        : [],
    );
    assert.deepEqual(locks, [`worker-0 ${M_LOCK}`, `worker-1 ${LOCK}`]);
    const wait = p.waits.find((x) => x.spec.kind === 'NodeImage' && x.node === 'worker-0');
    assert.match(wait?.reason ?? '', /worker-0 is in NodeMaintenance disk; it is replaced once the maintenance ends/);
  });

  it('is acted on: no longer reported as NotSupported', () => {
    assert.deepEqual(notActedOn(desired({ nodeMaintenances: [nodeMaintenance('disk', 'worker-0')] })), []);
  });
});

/** worker-0's Ended record of disk, ended at iso(900). */
const endedRecord = JSON.stringify({
  ...JSON.parse(runningRecord),
  phase: 'Ended',
  pendingPods: [],
  endedAt: iso(900),
});

/** The status branch's row of disk as the plan of the ending wrote it (read off the planner, not written by hand). */
function publishedEnding(): SpecStatus {
  return statusOf(plan(desired(), busyNode({ [ANNOTATIONS.maintenance]: endedRecord }), at(900)));
}

function noMaintenanceRow(p: Plan): void {
  assert.equal(
    p.specs.some((s) => s.spec.kind === 'NodeMaintenance'),
    false,
  );
}

describe('plan: an ended NodeMaintenance leaves the node clean, the status branch its record', () => {
  const ended = publishedEnding();
  runCases([
    {
      name: 'the status branch holds the ending: the record leaves the node, nothing else is written',
      desired: desired(),
      observed: busyNode({ [ANNOTATIONS.maintenance]: endedRecord }),
      now: at(1000),
      options: { published: [ended] },
      check: (p) => {
        assert.deepEqual(bare(p), [
          { kind: 'annotateNode', spec: M, node: 'worker-0', annotations: { [ANNOTATIONS.maintenance]: null } },
        ]);
        assert.deepEqual([statusOf(p).phase, statusOf(p).maintenance?.endedAt], ['Ended', iso(900)]);
      },
    },
    {
      name: 'the status branch does not hold it yet (a crash before the status was written): the record stays',
      desired: desired(),
      observed: busyNode({ [ANNOTATIONS.maintenance]: endedRecord }),
      now: at(1000),
      options: { published: [] },
      check: (p) => {
        assert.deepEqual(p.actions, []);
        assert.deepEqual([statusOf(p).phase, statusOf(p).maintenance?.endedAt], ['Ended', iso(900)]);
      },
    },
    {
      name: 'the status branch holds an earlier ending of the same name: the newer record stays',
      desired: desired(),
      observed: busyNode({ [ANNOTATIONS.maintenance]: endedRecord }),
      now: at(1000),
      options: { published: [{ ...ended, maintenance: { ...ended.maintenance!, endedAt: iso(100) } }] },
      check: (p) => {
        assert.deepEqual(p.actions, []);
        assert.equal(statusOf(p).maintenance?.endedAt, iso(900));
      },
    },
    {
      name: 'no status branch (a directory source): the record stays, the only durable one',
      desired: desired(),
      observed: busyNode({ [ANNOTATIONS.maintenance]: endedRecord }),
      now: at(1000),
      check: (p) => assert.deepEqual(p.actions, []),
    },
    {
      name: 'the record is gone: the Ended row is carried from the status branch, with no action',
      desired: desired(),
      observed: busyNode(),
      now: at(2000),
      options: { published: [ended] },
      check: (p) => {
        assert.deepEqual(p.actions, []);
        assert.deepEqual(statusOf(p), ended);
      },
    },
    {
      name: 'the node is gone: its ended maintenance is no longer reported (as when the record was on it)',
      desired: desired(),
      observed: observed({ nodes: workers(2, V1).nodes.filter((n) => n.name !== 'worker-0') }),
      now: at(2000),
      options: { published: [ended] },
      check: noMaintenanceRow,
    },
    {
      name: 'the same name back in Git starts afresh: its own row, not the ended one',
      desired: desired({ nodeMaintenances: [nodeMaintenance('disk', 'worker-0')] }),
      observed: busyNode(),
      now: at(2000),
      options: { published: [ended] },
      check: (p) => assert.notEqual(statusOf(p).phase, 'Ended'),
    },
  ]);

  /**
   * The file leaves Git with worker-0 cordoned and held; drydock is killed after `cut` actions
   * of round `crash` (a status write of that round is lost with it); the status branch is
   * written after every other round. Every round has disk's Ended row once the ending began,
   * and the node ends uncordoned with no drydock.dev key.
   */
  function endRun(crash: number, cut: number): { node: PatchableNode; last: Plan } {
    const base = busyNode();
    const node: PatchableNode = {
      labels: {},
      annotations: inMaintenance({ [ANNOTATIONS.phase]: 'Cordoned', [ANNOTATIONS.maintenance]: runningRecord }),
      unschedulable: true,
    };
    let published: readonly SpecStatus[] = [];
    let last: Plan | undefined;
    for (let round = 0; round < 6; round++) {
      const nodes = base.nodes.map((n) =>
        n.name === 'worker-0' ? { ...n, annotations: { ...node.annotations }, unschedulable: node.unschedulable } : n,
      );
      const p = plan(desired(), { ...base, nodes }, at(900 + round * 10), { published });
      assert.equal(statusOf(p).phase, 'Ended', `round ${round}: the Ended row`);
      const writes = p.actions.filter(
        (a): a is NodeWrite => a.kind === 'annotateNode' || a.kind === 'cordon' || a.kind === 'uncordon',
      );
      assert.equal(writes.length, p.actions.length, 'an ending writes the node only');
      for (const a of round === crash ? writes.slice(0, cut) : writes) applyNodeWrite(node, a);
      if (round !== crash) published = p.specs;
      last = p;
    }
    return { node, last: last! };
  }

  for (const crash of [0, 1, 2, 3])
    for (const cut of [0, 1, 2])
      it(`killed after action ${cut} of round ${crash}: the node ends clean and the status Ended`, () => {
        const { node, last } = endRun(crash, cut);
        assert.equal(node.unschedulable, false);
        assert.deepEqual(
          Object.keys(node.annotations).filter((k) => k.startsWith('drydock.dev/')),
          [],
        );
        assert.deepEqual(last.actions, []);
        assert.equal(statusOf(last).phase, 'Ended');
      });
});
