/** controlPlaneFirst across specs of every kind: no worker of any spec starts before every control plane is done. */
import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { plan, type Plan } from '../../src/plan/index.js';
import { at, cloudGroup, desired, instance, node, nodeImage, observed, scalingGroup, workers } from './fixtures.js';
import { V1, V2 } from './helpers.js';
import { nodeOp } from './nodeop/fixtures.js';
import type { RolloutOrder } from '../../src/spec/model.js';
import type { ObservedNode } from '../../src/observe/types.js';
import { nodeOpRecordKey } from '../../src/protocol/keys.js';

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

  describe('across kinds: a NodeOp and a NodeImage', () => {
    const CP_LABEL = { 'node-role.kubernetes.io/control-plane': '' };
    const onWorkers = { nodeSelector: { matchLabels: { role: 'worker' } } };
    const onControlPlane = { nodeSelector: { matchLabels: CP_LABEL } };
    /**
     * ScalingGroup cp (control plane, NodeImage cp) with cp-0 on `cpImage`, ScalingGroup workers
     * (NodeImage workers) with worker-0..1 on `workerImage`; both NodeImages want V2; `ops` besides.
     */
    function world(
      cpImage: string,
      ops: ReturnType<typeof nodeOp>[],
      cpNode: Partial<ObservedNode> = {},
      workerImage = V2,
    ) {
      const cps = [instance('cp', 'c-0', cpImage)];
      const w = workers(2, workerImage, () => ({ labels: { role: 'worker' } }));
      const cp0 = { ...node('cp-0', cps[0]?.providerID ?? '', { labels: CP_LABEL }), ...cpNode };
      return {
        d: desired({
          scalingGroups: [scalingGroup('cp', 'cp', 'control-plane'), scalingGroup('workers', 'workers')],
          nodeImages: [nodeImage('cp', V2), nodeImage('workers', V2)],
          nodeOps: ops,
        }),
        o: observed({
          nodes: [...w.nodes, cp0],
          cloudGroups: [cloudGroup('cp', V2, cps), cloudGroup('workers', V2, w.instances)],
        }),
      };
    }
    const patch = (order: RolloutOrder = 'controlPlaneFirst') =>
      nodeOp('patch', { ...onWorkers, rollout: { ...nodeOp('patch').rollout, order } });

    it("a NodeOp's workers wait while a NodeImage's control-plane node is outdated, and say for which", () => {
      const { d, o } = world(V1, [patch()]);
      const p = plan(d, o, at(0));
      assert.deepEqual(lockedNodes(p), ['cp-0']);
      const wait = p.waits.find((w) => w.spec.kind === 'NodeOp');
      assert.equal(wait?.code, 'order');
      assert.equal(
        wait?.reason,
        'workers wait for the control plane first: cp-0 of NodeImage cp is not on img:v2 yet (order controlPlaneFirst)',
      );
    });

    it("the NodeOp's workers start once the control plane is on its image", () => {
      const { d, o } = world(V2, [patch()]);
      assert.deepEqual(lockedNodes(plan(d, o, at(0))), ['worker-0']);
    });

    it('a NodeOp ordered byName does not wait for another spec', () => {
      const { d, o } = world(V1, [patch('byName')]);
      assert.deepEqual(lockedNodes(plan(d, o, at(0))), ['cp-0', 'worker-0']);
    });

    it("a NodeImage's workers wait while a NodeOp's control-plane node is not done", () => {
      const { d, o } = world(V2, [nodeOp('harden', onControlPlane)], {}, V1);
      const p = plan(d, o, at(0));
      assert.deepEqual(lockedNodes(p), ['cp-0'], 'only the NodeOp starts, on the control plane');
      const wait = p.waits.find((w) => w.spec.kind === 'NodeImage' && w.spec.name === 'workers');
      assert.equal(wait?.code, 'order');
      assert.equal(
        wait?.reason,
        'workers wait for the control plane first: cp-0 of NodeOp harden is not done yet (order controlPlaneFirst)',
      );
    });

    it("a NodeOp's workers wait for another NodeOp's control plane; a done or failed control-plane node holds nothing up", () => {
      const ops = [nodeOp('harden', onControlPlane), patch()];
      const pending = world(V2, ops);
      const p = plan(pending.d, pending.o, at(0));
      assert.deepEqual(lockedNodes(p), ['cp-0']);
      assert.match(p.waits.find((w) => w.spec.name === 'patch')?.reason ?? '', /cp-0 of NodeOp harden is not done yet/);

      const done = world(V2, ops, { annotations: { [nodeOpRecordKey('harden')]: 'r1' } });
      assert.deepEqual(lockedNodes(plan(done.d, done.o, at(0))), ['worker-0']);

      const failed = world(V2, ops, {
        annotations: { [ANNOTATIONS.operation]: 'NodeOp/harden@r1', [ANNOTATIONS.phase]: 'Failed' },
      });
      assert.deepEqual(lockedNodes(plan(failed.d, failed.o, at(0))), ['worker-0']);
    });
  });
});
