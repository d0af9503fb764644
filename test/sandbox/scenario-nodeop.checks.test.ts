import { strict as assert } from 'node:assert';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  jobObject,
  NodeOpLedger,
  nodeOpProblems,
  nodeOpSpecYaml,
  nodeOpSummaryLines,
  podObject,
  settled,
  type NodeOpObservation,
  type OperationObject,
} from '../../src/sandbox/scenario-nodeop.js';
import { loadFromSource } from '../../src/spec/index.js';
import { memorySource } from '../spec/support.js';
import type { NodeView, SandboxSnapshot } from '../../src/sandbox/view.js';

const COMMIT = '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b';
const WORKERS = ['workers-i-1', 'workers-i-2'];

function node(name: string, extra: Partial<NodeView> = {}): NodeView {
  return { name, group: 'workers', ready: true, unschedulable: false, ...extra };
}
function job(name: string, node: string, extra: Partial<OperationObject> = {}): OperationObject {
  return { uid: `uid-${name}`, kind: 'Job', name, node, step: 'operation', succeeded: true, failed: false, ...extra };
}
function reboot(name: string, node: string): OperationObject {
  return { uid: `uid-${name}`, kind: 'Pod', name, node, step: 'reboot', succeeded: true, failed: false };
}
const good: NodeOpObservation = {
  // One keeps its Done phase, one had it cleared: both are finished.
  nodes: [node('workers-i-1', { phase: 'Done' }), node('workers-i-2')],
  specs: [{ kind: 'NodeOp', name: 'sandbox-reboot', phase: 'Complete', done: 2, total: 2 }],
  statusSource: '1a2b3c4',
  objects: [
    job('j1', 'workers-i-1'),
    reboot('r1', 'workers-i-1'),
    job('j2', 'workers-i-2'),
    reboot('r2', 'workers-i-2'),
  ],
  boots: new Map([
    ['workers-i-1', ['a', 'b']],
    ['workers-i-2', ['c', 'd']],
  ]),
};

describe('sandbox nodeop scenario checks', () => {
  const cases: [string, NodeOpObservation, string[]][] = [
    ['every worker ran once and rebooted once', good, []],
    [
      'status for an older commit',
      { ...good, statusSource: '0000000' },
      ['the status branch reports on 0000000, not on the NodeOp commit 1a2b3c4'],
    ],
    [
      'the NodeOp short of its workers',
      { ...good, specs: [{ kind: 'NodeOp', name: 'sandbox-reboot', phase: 'Complete', done: 1, total: 1 }] },
      ['NodeOp/sandbox-reboot is Complete 1/1 on the status branch, expected Complete 2/2'],
    ],
    ['no status for the NodeOp', { ...good, specs: [] }, ['the status branch has no status for NodeOp/sandbox-reboot']],
    [
      'a Job created twice for a node',
      { ...good, objects: [...good.objects, job('j1b', 'workers-i-1')] },
      ['node workers-i-1 had 2 operation Jobs, expected 1'],
    ],
    [
      'a Job that failed',
      { ...good, objects: good.objects.map((o) => (o.name === 'j2' ? { ...o, succeeded: false, failed: true } : o)) },
      ['node workers-i-2: Job j2 did not succeed'],
    ],
    [
      'a worker never rebooted',
      {
        ...good,
        objects: good.objects.filter((o) => o.name !== 'r2'),
        boots: new Map([...good.boots, ['workers-i-2', ['c']]]),
      },
      ['node workers-i-2 had 0 reboot pods, expected 1', 'node workers-i-2 rebooted 0 times, expected once'],
    ],
    [
      'a worker rebooted twice',
      { ...good, boots: new Map([...good.boots, ['workers-i-1', ['a', 'b', 'e']]]) },
      ['node workers-i-1 rebooted 2 times, expected once'],
    ],
    [
      'a worker left cordoned, locked, NotReady',
      {
        ...good,
        nodes: [
          node('workers-i-1', {
            unschedulable: true,
            ready: false,
            phase: 'Rebooting',
            operation: 'NodeOp/sandbox-reboot',
          }),
          node('workers-i-2'),
        ],
      },
      [
        'node workers-i-1 is still cordoned',
        'node workers-i-1 is not Ready',
        'node workers-i-1 is in phase Rebooting',
        'node workers-i-1 is still locked by NodeOp/sandbox-reboot',
      ],
    ],
    ['a worker gone', { ...good, nodes: [node('workers-i-1')] }, ['node workers-i-2 is gone']],
    [
      'a Job on a node that is no worker',
      { ...good, objects: [...good.objects, job('jc', 'control-plane-i-1')] },
      ['Job jc ran on control-plane-i-1, which is not a worker'],
    ],
  ];
  for (const [title, observed, expected] of cases) {
    it(title, () => assert.deepEqual(nodeOpProblems(WORKERS, COMMIT, observed), expected));
  }
});

describe('sandbox nodeop scenario ledger', () => {
  it('counts each distinct bootID once, in order, and only for workers', () => {
    const ledger = new NodeOpLedger([node('workers-i-1', { bootID: 'a' })]);
    for (const b of ['a', 'a', 'b', 'b', 'b'])
      ledger.observeNodes([node('workers-i-1', { bootID: b }), node('cp', { bootID: b })]);
    assert.deepEqual([...ledger.boots], [['workers-i-1', ['a', 'b']]]);
  });

  it('remembers a success after the Job is deleted, and keeps two Jobs of one node apart by uid', () => {
    const ledger = new NodeOpLedger([]);
    ledger.observeObject(job('j1', 'n', { succeeded: true }));
    ledger.observeObject(job('j1', 'n', { succeeded: false })); // the delete event's last state
    ledger.observeObject(job('j1b', 'n', { succeeded: false }));
    assert.deepEqual(
      ledger.seen.map((o) => [o.name, o.succeeded]),
      [
        ['j1', true],
        ['j1b', false],
      ],
    );
  });

  it('records the most nodes the NodeOp held at once', () => {
    const ledger = new NodeOpLedger([]);
    const held = { operation: 'NodeOp/sandbox-reboot', phase: 'Updating' };
    ledger.observeNodes([node('a', held), node('b', held), node('c')]);
    ledger.observeNodes([node('a', held)]);
    assert.equal(ledger.maxInFlight, 2);
  });

  it('reads a Job and a reboot pod the way drydock labels them', () => {
    const j: V1Job = {
      metadata: { uid: 'u1', name: 'j', labels: { 'drydock.dev/step': 'operation' } },
      spec: { template: { spec: { nodeName: 'n1', containers: [] } } },
      status: { succeeded: 1 },
    };
    assert.deepEqual(jobObject(j), {
      uid: 'u1',
      kind: 'Job',
      name: 'j',
      node: 'n1',
      step: 'operation',
      succeeded: true,
      failed: false,
    });
    const p: V1Pod = {
      metadata: { uid: 'u2', name: 'p', labels: { 'drydock.dev/step': 'reboot' } },
      spec: { nodeName: 'n1', containers: [] },
      status: { phase: 'Failed' },
    };
    assert.deepEqual(podObject(p), {
      uid: 'u2',
      kind: 'Pod',
      name: 'p',
      node: 'n1',
      step: 'reboot',
      succeeded: false,
      failed: true,
    });
  });
});

describe('sandbox nodeop scenario start and summary', () => {
  const base: SandboxSnapshot = {
    now: '',
    startedAt: '',
    headline: '',
    steps: [],
    specs: [{ kind: 'NodeOpUpgrade', name: 'edge-os', phase: 'Complete', done: 6, total: 6 }],
    nodes: [node('workers-i-1')],
    nodesRead: true,
    git: { branch: 'main', head: COMMIT, statusBranch: 'drydock/status', statusSource: '1a2b3c4' },
  };
  it('waits while an operation of the examples still runs or drydock has not reported on the head', () => {
    assert.equal(settled(base), true);
    assert.equal(settled({ ...base, git: { ...base.git!, statusSource: '0000000' } }), false);
    assert.equal(settled({ ...base, specs: [{ ...base.specs[0]!, phase: 'Progressing' }] }), false);
    assert.equal(settled({ ...base, nodes: [node('workers-i-1', { operation: 'NodeOpUpgrade/edge-os' })] }), false);
  });

  it('pushes a NodeOp that drydock accepts, with a reboot and concurrency 2', async () => {
    const r = await loadFromSource(memorySource({ 'operations/sandbox-reboot.yaml': nodeOpSpecYaml() }));
    assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
    const op = r.desired.nodeOps.find((o) => o.name === 'sandbox-reboot');
    assert.ok(op);
    assert.equal(op.rebootOnSuccess, true);
    assert.equal(op.concurrency, 2);
  });

  it('says what ran, how long, and how many at a time', () => {
    assert.deepEqual(nodeOpSummaryLines({ commit: COMMIT, durationMs: 125_000, workers: 6, maxInFlight: 2 }), [
      'nodeop complete in 2m5s: NodeOp/sandbox-reboot ran its Job once and rebooted once on each of 6 workers, at most 2 at a time (commit 1a2b3c4)',
    ]);
  });
});
