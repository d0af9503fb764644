/**
 * A rollout's canary is its own record on the replacement node, not the lock: another kind
 * (the sandbox's NodeOpUpgrade over the workers) may take a canary replacement once it is
 * Done, and the rollout must still see its canary, so no second node starts before the
 * afterCanary approval.
 */
import { strict as assert } from 'node:assert';
import { plan, type Plan } from '../../src/plan/index.js';
import { ANNOTATIONS, nodeImageRecordKey, nodeOpRecordKey } from '../../src/protocol/keys.js';
import type { NodeOp } from '../../src/spec/model.js';
import {
  approval,
  at,
  cloudGroup,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  observed,
  providerID,
  scalingGroup,
  workers,
} from './fixtures.js';
import { LOCK, V1, V2 } from './helpers.js';
import { nodeOp } from './nodeop/fixtures.js';

const PATCH: NodeOp = nodeOp('patch', { nodeSelector: { matchLabels: { canary: 'yes' } } });

/** worker-0 was the canary: replaced by worker-9 (i-9), Done at 100 s; worker-1 and -2 wait on V1. */
function afterCanary(canaryNode: Record<string, string>) {
  const w = workers(3, V1);
  const rn = node('worker-9', providerID('workers', 'i-9'), {
    readySince: 40,
    labels: { canary: 'yes' },
    annotations: { [ANNOTATIONS.replaces]: 'i-0', ...canaryNode },
  });
  return observed({
    nodes: [...w.nodes.slice(1), rn],
    cloudGroups: [cloudGroup('workers', V2, [...w.instances.slice(1), instance('workers', 'i-9', V2, 5)])],
  });
}

const record = { [nodeImageRecordKey('workers')]: `workers-img:v2 ${iso(100)}` };
const marked = {
  ...record,
  [ANNOTATIONS.operation]: LOCK,
  [ANNOTATIONS.phase]: 'Done',
  [ANNOTATIONS.phaseSince]: iso(100),
};

function run(canaryNode: Record<string, string>, approved: boolean, nodeOps: NodeOp[] = []): Plan {
  const image = nodeImage('workers', V2, {
    canary: { nodes: 1, soakSeconds: 60 },
    approval: { required: 'afterCanary' },
  });
  const d = desired({
    scalingGroups: [scalingGroup('workers', 'workers')],
    nodeImages: [image],
    nodeOps,
    approvals: approved ? [approval('ok', 'workers', V2, 'afterCanary')] : [],
  });
  return plan(d, afterCanary(canaryNode), at(400), { jobNamespace: 'drydock-system' });
}

/** The old workers the NodeImage locks this round. */
function startedByImage(p: Plan): string[] {
  return p.actions.flatMap((a) =>
    a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.operation] === LOCK ? [a.node] : [],
  );
}

const imageWaits = (p: Plan): string[] => p.waits.filter((w) => w.spec.kind === 'NodeImage').map((w) => w.code);

describe('plan: the canary is the rollout’s record, whoever holds the node later', () => {
  const cases: { name: string; canaryNode: Record<string, string>; nodeOps?: NodeOp[] }[] = [
    { name: 'marked Done under this revision (the lock is still its own)', canaryNode: marked },
    {
      name: 'taken by a NodeOp that is still running on it',
      canaryNode: {
        ...record,
        [ANNOTATIONS.operation]: 'NodeOp/patch@r1',
        [ANNOTATIONS.phase]: 'Updating',
        [ANNOTATIONS.phaseSince]: iso(300),
      },
      nodeOps: [PATCH],
    },
    {
      name: 'released by a NodeOp that finished there (lock, phase and phase-since cleared)',
      canaryNode: { ...record, [nodeOpRecordKey('patch')]: 'r1', [ANNOTATIONS.doneAt]: iso(350) },
      nodeOps: [PATCH],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: no second node starts before the afterCanary approval`, () => {
      const p = run(c.canaryNode, false, c.nodeOps);
      assert.deepEqual(startedByImage(p), []);
      assert.deepEqual(imageWaits(p), ['approval']);
    });
    it(`${c.name}: with the approval merged, the next node starts`, () => {
      const p = run(c.canaryNode, true, c.nodeOps);
      assert.deepEqual(startedByImage(p), ['worker-1']);
    });
  }

  it('a record of another revision is no canary of this one: the canary wave starts', () => {
    const p = run({ [nodeImageRecordKey('workers')]: `older ${iso(100)}` }, false);
    assert.deepEqual(startedByImage(p), ['worker-1']);
  });

  it('the soak counts from the record, not from when the NodeOp released the node', () => {
    const image = nodeImage('workers', V2, { canary: { nodes: 1, soakSeconds: 60 } });
    const d = desired({ scalingGroups: [scalingGroup('workers', 'workers')], nodeImages: [image] });
    const p = plan(d, afterCanary({ ...record }), at(130));
    assert.deepEqual(startedByImage(p), []);
    assert.equal(p.waits.find((w) => w.code === 'soak')?.until, iso(160));
  });
});
