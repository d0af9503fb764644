import { strict as assert } from 'node:assert';
import type { Instance } from '../../src/cloud/provider.js';
import {
  describeWaiting,
  finalProblems,
  RolloutTracker,
  summaryLines,
  type FinalObservation,
  type GroupExpectation,
} from '../../src/sandbox/scenario.js';
import type { NodeView, SandboxSnapshot } from '../../src/sandbox/view.js';

const COMMIT = '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b';
const groups: GroupExpectation[] = [{ groupId: 'workers', nodeImage: 'worker', size: 2 }];
const images = new Map([['worker', 'os:2']]);

function instance(id: string, image = 'os:2', state: Instance['state'] = 'running'): Instance {
  return { id, providerID: `sim://workers/${id}`, image, state, createdAt: '2024-01-01T00:00:00Z' };
}
function node(name: string, extra: Partial<NodeView> = {}): NodeView {
  return { name, group: 'workers', image: 'os:2', ready: true, unschedulable: false, ...extra };
}
const good: FinalObservation = {
  instances: new Map([['workers', [instance('i-3'), instance('i-4')]]]),
  nodes: [node('workers-i-3', { phase: 'Done' }), node('workers-i-4')],
  specs: [{ kind: 'NodeImage', name: 'worker', phase: 'Complete', done: 2, total: 2 }],
  statusSource: '1a2b3c4',
};

describe('sandbox upgrade scenario checks', () => {
  const cases: [string, FinalObservation, string[]][] = [
    ['all on the new image', good, []],
    [
      'status for an older commit',
      { ...good, statusSource: '0000000' },
      ['the status branch reports on 0000000, not on the upgrade commit 1a2b3c4'],
    ],
    [
      'no status commit',
      { instances: good.instances, nodes: good.nodes, specs: good.specs },
      ['the status branch reports on no commit, not on the upgrade commit 1a2b3c4'],
    ],
    [
      'an old instance left',
      { ...good, instances: new Map([['workers', [instance('i-1', 'os:1'), instance('i-3'), instance('i-4')]]]) },
      ['cloud group workers has 3 instances, expected 2', 'cloud instance workers/i-1 runs os:1, expected os:2'],
    ],
    [
      'an instance still terminating',
      { ...good, instances: new Map([['workers', [instance('i-3'), instance('i-4', 'os:2', 'terminating')]]]) },
      ['cloud instance workers/i-4 is terminating'],
    ],
    [
      'a node cordoned and failed on the old image',
      {
        ...good,
        nodes: [
          node('workers-i-3'),
          node('workers-i-1', { image: 'os:1', unschedulable: true, phase: 'Failed', reason: 'drain timed out' }),
        ],
      },
      [
        'node workers-i-1 runs os:1, expected os:2',
        'node workers-i-1 is still cordoned',
        'node workers-i-1 is in phase Failed: drain timed out',
      ],
    ],
    [
      'a node missing and one not ready',
      { ...good, nodes: [node('workers-i-3', { ready: false })] },
      ['group workers has 1 nodes, expected 2', 'node workers-i-3 is not Ready'],
    ],
    [
      'spec not complete',
      { ...good, specs: [{ kind: 'NodeImage', name: 'worker', phase: 'Progressing', done: 1, total: 2 }] },
      ['NodeImage/worker is Progressing 1/2 on the status branch'],
    ],
    ['spec missing', { ...good, specs: [] }, ['the status branch has no status for NodeImage/worker']],
  ];
  for (const [name, observed, problems] of cases) {
    it(name, () => assert.deepEqual(finalProblems(groups, images, COMMIT, observed), problems));
  }

  it('counts replaced nodes and waves of nodes taken out together', () => {
    const t = new RolloutTracker([node('a'), node('b'), node('c')]);
    t.observe([node('a', { phase: 'Cordoned', unschedulable: true }), node('b'), node('c')]);
    t.observe([node('a', { phase: 'Draining', unschedulable: true }), node('b'), node('c'), node('d')]);
    t.observe([
      node('b', { phase: 'Cordoned', unschedulable: true }),
      node('c', { phase: 'Cordoned', unschedulable: true }),
      node('d'),
    ]);
    t.observe([node('d'), node('e'), node('f')]);
    assert.equal(t.waves, 2);
    assert.equal(t.replaced([node('d'), node('e'), node('f')]), 3);
  });

  it('counts a wave per group when groups roll side by side', () => {
    const t = new RolloutTracker([node('w1'), node('w2'), node('cp1', { group: 'control-plane' })]);
    t.observe([
      node('w1', { phase: 'Pending' }),
      node('w2'),
      node('cp1', { group: 'control-plane', phase: 'Pending' }),
    ]);
    t.observe([
      node('w2', { phase: 'Cordoned', unschedulable: true }),
      node('cp1', { group: 'control-plane', phase: 'Draining' }),
    ]);
    assert.equal(t.waves, 3);
  });

  it('says what the rollout waits for', () => {
    const snapshot: SandboxSnapshot = {
      now: '2024-01-01T00:00:10Z',
      startedAt: '2024-01-01T00:00:00Z',
      headline: 'x',
      steps: [],
      specs: [
        {
          kind: 'NodeImage',
          name: 'worker',
          phase: 'Progressing',
          done: 1,
          total: 6,
          waitingFor: 'PDB demo/web allows 0 disruptions',
        },
        { kind: 'NodeImage', name: 'control-plane', phase: 'Complete', done: 3, total: 3 },
      ],
      nodes: [node('workers-i-2', { phase: 'Draining' })],
      git: {
        branch: 'main',
        head: '1a2b3c4',
        statusBranch: 'drydock/status',
        statusHead: 'ffff000',
        statusSource: '1a2b3c4',
      },
    };
    assert.equal(
      describeWaiting(snapshot, COMMIT, new Set(['worker', 'control-plane'])),
      'NodeImage/worker Progressing 1/6 (waiting: PDB demo/web allows 0 disruptions); nodes in flight: workers-i-2 Draining',
    );
    assert.equal(
      describeWaiting(
        { ...snapshot, git: { ...snapshot.git!, statusSource: '0000000' }, specs: [], nodes: [] },
        COMMIT,
        new Set(['worker']),
      ),
      'syncing: main is at 1a2b3c4, drydock/status still reports on 0000000',
    );
  });

  it('summarises duration, replaced nodes and waves', () => {
    assert.deepEqual(
      summaryLines({
        commit: COMMIT,
        changes: [{ nodeImage: 'worker', from: 'os:1', to: 'os:2' }],
        durationMs: 192_000,
        nodesReplaced: 9,
        waves: 9,
      }),
      ['upgrade complete in 3m12s: 9 nodes replaced in 9 waves (commit 1a2b3c4)', '  NodeImage/worker: os:1 → os:2'],
    );
  });
});
