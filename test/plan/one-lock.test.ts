/**
 * One lock per node across every kind, within a round too: the observed state shows a node
 * taken earlier in the same round as free, so a later kind must not take it (or mark it) as
 * well. Found by the mixed sequence test (sequence/mixed.test.ts), pinned here.
 */
import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { plan, type Plan } from '../../src/plan/index.js';
import {
  at,
  cloudGroup,
  config,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  nodeMaintenance,
  observed,
  providerID,
  scalingGroup,
  workers,
} from './fixtures.js';
import { replacementJoined, V1, V2 } from './helpers.js';
import { nodeOp } from './nodeop/fixtures.js';

const sg = scalingGroup('workers', 'workers');
const patch = nodeOp('patch', { concurrency: 3, cordon: true });

/** Per node, the specs whose actions wrote a lock on it in this plan. */
function lockers(p: Plan): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const a of p.actions) {
    if (a.kind !== 'annotateNode' || typeof a.annotations[ANNOTATIONS.operation] !== 'string') continue;
    out.set(a.node, [...(out.get(a.node) ?? []), `${a.spec.kind}/${a.spec.name}`]);
  }
  return out;
}

describe('plan: one lock per node across kinds, within a round', () => {
  it('a node the rollout starts this round is not started by a NodeOp in the same round', () => {
    const w = workers(3, V1);
    const p = plan(
      desired({ config: config(10), scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)], nodeOps: [patch] }),
      observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] }),
      at(0),
    );
    assert.deepEqual(Object.fromEntries(lockers(p)), {
      'worker-0': ['NodeImage/workers'],
      'worker-1': ['NodeOp/patch'],
      'worker-2': ['NodeOp/patch'],
    });
    const wait = p.waits.find((x) => x.spec.kind === 'NodeOp' && x.node === 'worker-0');
    assert.equal(wait?.code, 'lock');
  });

  it('a replacement a maintenance takes this round is not marked Done by the rollout over its lock', () => {
    const p = plan(
      desired({
        config: config(10),
        scalingGroups: [sg],
        nodeImages: [nodeImage('workers', V2)],
        nodeMaintenances: [nodeMaintenance('disk', 'worker-9')],
      }),
      replacementJoined({ readySince: 60 }),
      at(200),
    );
    assert.deepEqual(lockers(p).get('worker-9'), ['NodeMaintenance/disk']);
    const wait = p.waits.find((x) => x.spec.kind === 'NodeImage' && x.node === 'worker-0');
    assert.equal(wait?.code, 'lock');
  });

  it('an unclaimed new instance whose node a NodeOp holds (rebooting, NotReady) is not removed as a stray', () => {
    const w = workers(2, V2);
    const held = {
      [ANNOTATIONS.operation]: 'NodeOp/patch@r1',
      [ANNOTATIONS.phase]: 'Rebooting',
      [ANNOTATIONS.phaseSince]: iso(650),
    };
    const stray = (annotations: Record<string, string>) =>
      observed({
        nodes: [...w.nodes, node('worker-9', providerID('workers', 'i-9'), { ready: false, annotations })],
        cloudGroups: [cloudGroup('workers', V2, [...w.instances, instance('workers', 'i-9', V2, 0)])],
      });
    const want = desired({ config: config(10), scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] });
    const removes = (p: Plan) => p.actions.filter((a) => a.kind === 'removeInstance' && a.spec.kind === 'NodeImage');
    assert.deepEqual(removes(plan({ ...want, nodeOps: [patch] }, stray(held), at(700))), []);
    // The same stray held by nobody is removed: the rule above is about the hold alone.
    assert.equal(removes(plan(want, stray({}), at(700))).length, 1);
  });
});
