/**
 * A replace NodeImage that leaves Git together with its ScalingGroup, mid-rollout: the nodes
 * it held are released (and uncordoned when drydock cordoned them) instead of staying locked,
 * cordoned and counted against the budget for good.
 */
import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/observe/types.js';
import { at, cloudGroup, desired, iso, nodeImage, observed, scalingGroup, workers } from './fixtures.js';
import { bare, LOCK, RELEASED, runCases, SPEC, V1, V2 } from './helpers.js';

/** Two workers of group `workers`; worker-0 held by NodeImage/workers at `phase`. */
function held(phase: string, o: { cordoned?: 'ours' | 'theirs'; surge?: boolean } = {}) {
  return workers(2, V1, (i) =>
    i === 0
      ? {
          unschedulable: o.cordoned !== undefined,
          annotations: {
            [ANNOTATIONS.operation]: LOCK,
            [ANNOTATIONS.phase]: phase,
            [ANNOTATIONS.phaseSince]: iso(0),
            ...(o.surge === true ? { [ANNOTATIONS.replacedBy]: 'i-9' } : {}),
            ...(o.cordoned === 'ours' ? { [ANNOTATIONS.cordoned]: 'true' } : {}),
          },
        }
      : {},
  );
}

function world(w: ReturnType<typeof held>, groupObserved = true) {
  return observed({ nodes: w.nodes, cloudGroups: groupObserved ? [cloudGroup('workers', V1, w.instances)] : [] });
}

describe('plan: nodes held by a replace NodeImage that left Git', () => {
  runCases([
    {
      name: 'a node drydock cordoned is uncordoned and released; the note names the replacement left in the group',
      desired: desired({}),
      observed: world(held('Draining', { cordoned: 'ours', surge: true })),
      now: at(60),
      check: (p) => {
        assert.deepEqual(bare(p), [
          { kind: 'uncordon', spec: SPEC, node: 'worker-0' },
          { kind: 'annotateNode', spec: SPEC, node: 'worker-0', annotations: RELEASED },
        ]);
        assert.deepEqual(
          p.notes.map((n) => n.text),
          [
            'released worker-0: NodeImage/workers is no longer in Git and no rollout covers its group (its replacement i-9 is left in the group)',
          ],
        );
      },
    },
    {
      name: 'a Pending node is released without an uncordon',
      desired: desired({}),
      observed: world(held('Pending')),
      now: at(60),
      check: (p) =>
        assert.deepEqual(bare(p), [{ kind: 'annotateNode', spec: SPEC, node: 'worker-0', annotations: RELEASED }]),
    },
    {
      name: 'a Failed node is released too: the person removed the spec that held it',
      desired: desired({}),
      observed: world(held('Failed', { cordoned: 'ours' })),
      now: at(60),
      check: (p) =>
        assert.deepEqual(
          bare(p).map((a) => a.kind),
          ['uncordon', 'annotateNode'],
        ),
    },
    {
      name: "someone else's cordon stays: only the lock is released",
      desired: desired({}),
      observed: world(held('Cordoned', { cordoned: 'theirs' })),
      now: at(60),
      check: (p) =>
        assert.deepEqual(
          bare(p).map((a) => a.kind),
          ['annotateNode'],
        ),
    },
    {
      name: 'nothing is released while a scaling group is unobserved (its nodes may be mid-rollout)',
      desired: desired({ scalingGroups: [scalingGroup('others', 'others')], nodeImages: [nodeImage('others', V2)] }),
      observed: world(held('Draining', { cordoned: 'ours' }), false),
      now: at(60),
      check: (p) => assert.deepEqual(bare(p), []),
    },
    {
      name: 'a NodeImage of the same name still in Git (now inPlace) settles its own lock: released once, not twice',
      desired: desired({
        scalingGroups: [scalingGroup('workers', 'workers')],
        nodeImages: [{ ...nodeImage('workers', V2), strategy: 'inPlace' }],
      }),
      observed: world(held('Pending')),
      now: at(60),
      check: (p) => {
        const releases = p.actions.filter((a) => a.kind === 'annotateNode' && a.node === 'worker-0');
        assert.equal(releases.length, 1, `worker-0 released ${releases.length} times`);
        assert.ok(!p.notes.some((n) => /is no longer in Git and no rollout covers/.test(n.text)));
      },
    },
  ]);
});
