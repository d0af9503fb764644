import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/observe/types.js';
import { DRAIN_PENDING_TAINT } from '../../src/protocol/keys.js';
import { plan, type Action } from '../../src/plan/index.js';
import { MARKS_PER_ROUND } from '../../src/plan/drain-pending.js';
import { laneOf } from '../../src/execute/lanes.js';
import {
  at,
  cloudGroup,
  desired,
  instance,
  node,
  nodeImage,
  observed,
  providerID,
  scalingGroup,
  workers,
  type NodeOptions,
} from './fixtures.js';
import { LOCK, V1, V2 } from './helpers.js';
import type { RolloutPolicy } from '../../src/spec/model.js';
import { nodeOpRecordKey } from '../../src/protocol/keys.js';
import { nodeOp } from './nodeop/fixtures.js';

const sg = scalingGroup('workers', 'workers');
const want = (rollout: Partial<RolloutPolicy> = {}) =>
  desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, rollout)] });
const TAINT = { ...DRAIN_PENDING_TAINT };
const BY_WORKERS = { [ANNOTATIONS.drainPending]: 'NodeImage/workers' };

type Mark = Extract<Action, { kind: 'markDrainPending' }>;
const marks = (actions: readonly Action[]): string[] =>
  actions
    .filter((a): a is Mark => a.kind === 'markDrainPending')
    .map((a) => `${a.pending ? '+' : '-'}${a.node} ${a.spec.kind}/${a.spec.name}`);

/** worker-0..2 on V1, the group already on V2; `o` per node. */
function world(o: (i: number) => NodeOptions = () => ({}), extra: ReturnType<typeof node>[] = []) {
  const w = workers(3, V1, o);
  return observed({ nodes: [...w.nodes, ...extra], cloudGroups: [cloudGroup('workers', V2, w.instances, 3)] });
}

describe('plan: nodes drained later carry a PreferNoSchedule taint', () => {
  it('a rollout free to start marks every node it will drain but the one it takes this round', () => {
    const p = plan(want({ concurrency: 1 }), world(), at(0));
    assert.deepEqual(marks(p.actions), ['+worker-1 NodeImage/workers', '+worker-2 NodeImage/workers']);
    assert.ok(
      p.actions.some((a) => a.kind === 'annotateNode' && a.node === 'worker-0'),
      'worker-0 is locked',
    );
    for (const a of p.actions.filter((x) => x.kind === 'markDrainPending'))
      assert.equal(laneOf(a), 'node' in a ? a.node : '');
    // Next round: worker-0 is the rollout's own, started: a node taken is not marked after (its
    // uncordon or its deletion would take the mark off), and a mark made before is kept.
    const locked = world((i) =>
      i === 0
        ? { annotations: { [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Pending' } }
        : { annotations: BY_WORKERS, taints: [TAINT] },
    );
    assert.deepEqual(marks(plan(want({ concurrency: 1 }), locked, at(1)).actions), []);
    // Cordoned for its drain, it takes no pods: a node not yet marked is not marked then.
    const cordoned = world((i) =>
      i === 0
        ? { annotations: { [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Draining' }, unschedulable: true }
        : { annotations: BY_WORKERS, taints: [TAINT] },
    );
    assert.deepEqual(marks(plan(want({ concurrency: 1 }), cordoned, at(1)).actions), []);
  });

  it('marks at most MARKS_PER_ROUND nodes a round, the ones the rollout reaches first first, and takes off as many', () => {
    const n = MARKS_PER_ROUND + 8;
    const w = workers(n, V1);
    const wide = (marked: (i: number) => boolean) =>
      observed({
        nodes: w.nodes.map((x, i) => (marked(i) ? { ...x, annotations: BY_WORKERS, taints: [TAINT] } : x)),
        cloudGroups: [cloudGroup('workers', V2, w.instances, n)],
      });
    const p = plan(
      want({ concurrency: 1 }),
      wide(() => false),
      at(0),
    );
    const first = marks(p.actions);
    assert.equal(first.length, MARKS_PER_ROUND);
    // The order the rollout takes them in (its forecast's), but the node it locks this round.
    const locked = new Set(p.actions.filter((a) => a.kind === 'annotateNode').map((a) => ('node' in a ? a.node : '')));
    const forecast = p.forecast.waves.flatMap((x) => x.nodes).filter((name) => !locked.has(name));
    assert.deepEqual(
      first,
      forecast.slice(0, MARKS_PER_ROUND).map((name) => `+${name} NodeImage/workers`),
    );
    const done = new Set(first.map((m) => m.slice(1).split(' ')[0]));
    const second = marks(
      plan(
        want({ concurrency: 1 }),
        wide((i) => done.has(`worker-${i}`)),
        at(1),
      ).actions,
    );
    // The rest the round after, but the node each round locks (the observed state here never shows its lock).
    assert.equal(second.length, n - 1 - MARKS_PER_ROUND, 'the rest the round after');
    // The spec removed: every mark comes off, as many a round.
    const off = marks(
      plan(
        desired({ scalingGroups: [sg] }),
        wide(() => true),
        at(2),
      ).actions,
    );
    assert.equal(off.length, MARKS_PER_ROUND);
    assert.ok(off.every((m) => m.startsWith('-')));
  });

  it('marks nothing twice, and never a replacement or a node already on the image', () => {
    const replacement = node('worker-9', providerID('workers', 'i-9'));
    const obs = world(
      (i) =>
        i === 0
          ? {
              annotations: { [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Pending', ...BY_WORKERS },
              taints: [TAINT],
            }
          : { annotations: BY_WORKERS, taints: [TAINT] },
      [replacement],
    );
    const withReplacement = observed({
      ...obs,
      cloudGroups: [cloudGroup('workers', V2, [...workers(3, V1).instances, instance('workers', 'i-9', V2, 5)], 4)],
    });
    assert.deepEqual(marks(plan(want({ concurrency: 1 }), withReplacement, at(10)).actions), []);
  });

  it('a rollout waiting for its approval marks nothing before it starts, and keeps its marks once started', () => {
    const approval = { approval: { required: 'start' as const } };
    assert.deepEqual(marks(plan(want(approval), world(), at(0)).actions), [], 'not started: nothing marked');
    // Started (worker-0 in flight), then held for a person: the marks stay, not taken off and put back.
    const started = world((i) =>
      i === 0
        ? {
            annotations: { [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Pending', ...BY_WORKERS },
            taints: [TAINT],
          }
        : { annotations: BY_WORKERS, taints: [TAINT] },
    );
    assert.deepEqual(marks(plan(want({ ...approval, concurrency: 1 }), started, at(10)).actions), []);
  });

  it("takes drydock's mark off once no running rollout drains the node, and leaves a taint that is not drydock's", () => {
    // The rollout's spec is gone: its marks come off, attributed to the spec that put them on.
    const obs = world((i) =>
      i === 2
        ? { taints: [TAINT, { key: 'other', effect: 'NoSchedule' }] }
        : { annotations: BY_WORKERS, taints: [TAINT] },
    );
    const p = plan(desired({ scalingGroups: [sg] }), obs, at(0));
    assert.deepEqual(marks(p.actions), ['-worker-0 NodeImage/workers', '-worker-1 NodeImage/workers']);
  });

  it('a NodeOp marks the nodes it drains later, not those it updates without a drain, and frees a node done', () => {
    const nodes = ['worker-0', 'worker-1', 'worker-2'].map((name, i) =>
      node(
        name,
        `sim://g/${name}`,
        i === 0
          ? {
              annotations: {
                [ANNOTATIONS.operation]: 'NodeOp/patch@r1',
                [ANNOTATIONS.phase]: 'Done',
                [nodeOpRecordKey('patch')]: 'r1',
                [ANNOTATIONS.drainPending]: 'NodeOp/patch',
              },
              taints: [TAINT],
            }
          : {},
      ),
    );
    const drain = {
      enabled: true,
      force: false,
      ignoreDaemonSets: true,
      deleteEmptyDirData: true,
      onTimeout: 'halt' as const,
    };
    const drained = plan(desired({ nodeOps: [nodeOp('patch', { drain, cordon: true })] }), observed({ nodes }), at(0));
    // worker-1 is locked this round (concurrency 1), and marked the round after if it is still schedulable then.
    assert.deepEqual(marks(drained.actions), ['+worker-2 NodeOp/patch', '-worker-0 NodeOp/patch']);
    const undrained = plan(desired({ nodeOps: [nodeOp('patch')] }), observed({ nodes }), at(0));
    assert.deepEqual(
      marks(undrained.actions),
      ['-worker-0 NodeOp/patch'],
      'no drain: nothing marked, the old mark off',
    );
  });
});
