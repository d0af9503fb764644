/** controlPlaneFirst across NodeImages: no worker of any spec starts before every control plane is done. */
import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { plan, type Plan } from '../../src/plan/index.js';
import { at, cloudGroup, desired, instance, node, nodeImage, observed, scalingGroup, workers } from './fixtures.js';
import { V1, V2 } from './helpers.js';

describe('plan: controlPlaneFirst across specs', () => {
  /** NodeImage cp rolls ScalingGroup cp (control plane), NodeImage workers rolls workers; both to V2. */
  function twoSpecs(cpImage: string, order: 'controlPlaneFirst' | 'byName' = 'controlPlaneFirst') {
    const cps = [instance('cp', 'c-0', cpImage)];
    const w = workers(2, V1);
    return {
      desired: desired({
        scalingGroups: [scalingGroup('cp', 'cp', 'control-plane'), scalingGroup('workers', 'workers')],
        nodeImages: [nodeImage('cp', V2), nodeImage('workers', V2, { order })],
      }),
      observed: observed({
        nodes: [...w.nodes, node('cp-0', cps[0]?.providerID ?? '')],
        cloudGroups: [cloudGroup('cp', V2, cps), cloudGroup('workers', V2, w.instances)],
      }),
    };
  }
  const lockedNodes = (p: Plan): string[] =>
    p.actions.flatMap((a) =>
      a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending' ? [a.node] : [],
    );

  it("no worker of one NodeImage starts while another's control-plane node is outdated", () => {
    const { desired: d, observed: o } = twoSpecs(V1);
    const p = plan(d, o, at(0));
    assert.deepEqual(lockedNodes(p), ['cp-0']);
    const wait = p.waits.find((w) => w.spec.name === 'workers');
    assert.equal(wait?.code, 'order');
    assert.match(
      wait?.reason ?? '',
      /workers wait for the control plane first: cp-0 of NodeImage cp is not on img:v2 yet/,
    );
  });

  it('workers start once every control plane is on its image', () => {
    const { desired: d, observed: o } = twoSpecs(V2);
    assert.deepEqual(lockedNodes(plan(d, o, at(0))), ['worker-0']);
  });

  it('a NodeImage ordered byName does not wait for another spec', () => {
    const { desired: d, observed: o } = twoSpecs(V1, 'byName');
    assert.deepEqual(lockedNodes(plan(d, o, at(0))).sort(), ['cp-0', 'worker-0']);
  });
});
