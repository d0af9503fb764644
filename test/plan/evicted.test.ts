/**
 * The evicted-workloads check of a replace rollout: the old node records, at its cordon, the
 * workloads with pods on it; once drained it stays (Verifying, in flight) until they are back
 * at their desired ready replicas, and only then is it removed and the next node started;
 * healthGate.timeout bounds that wait.
 */
import { strict as assert } from 'node:assert';
import type { ObservedWorkload } from '../../src/observe/workloads.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { plan } from '../../src/plan/index.js';
import type { RolloutPolicy } from '../../src/spec/model.js';
import {
  at,
  cloudGroup,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  observed,
  pod,
  providerID,
  scalingGroup,
  workers,
} from './fixtures.js';
import { bare, LOCK, SPEC, V1, V2 } from './helpers.js';

const WEB = 'Deployment/apps/web';
const web = (ready: number): ObservedWorkload[] => [
  { kind: 'Deployment', namespace: 'apps', name: 'web', desired: 3, ready },
];

/** worker-0 in `phase` (replaced by worker-9, marked Done); worker-1 and worker-2 still outdated. */
function world(phase: string, o: { workloads: ObservedWorkload[]; onOld?: boolean; since?: number }) {
  const w = workers(3, V1, (i) =>
    i === 0
      ? {
          unschedulable: phase !== 'Pending',
          annotations: {
            [ANNOTATIONS.operation]: LOCK,
            [ANNOTATIONS.phase]: phase,
            [ANNOTATIONS.phaseSince]: iso(o.since ?? 0),
            [ANNOTATIONS.replacedBy]: 'i-9',
            ...(phase !== 'Pending' ? { [ANNOTATIONS.cordoned]: 'true', [ANNOTATIONS.evicted]: WEB } : {}),
          },
        }
      : {},
  );
  const replacement = node('worker-9', providerID('workers', 'i-9'), {
    annotations: {
      [ANNOTATIONS.operation]: LOCK,
      [ANNOTATIONS.phase]: 'Done',
      [ANNOTATIONS.replaces]: 'i-0',
      [ANNOTATIONS.phaseSince]: iso(-60),
    },
  });
  const onOld = o.onOld === true ? [pod('apps', 'web-0', 'worker-0', { workload: WEB })] : [];
  return observed({
    nodes: [...w.nodes, replacement],
    pods: [...onOld, pod('apps', 'web-1', 'worker-9', { workload: WEB })],
    workloads: o.workloads,
    cloudGroups: [cloudGroup('workers', V2, [...w.instances, instance('workers', 'i-9', V2, -120)], 4)],
  });
}

const want = (rollout: Partial<RolloutPolicy> = {}) =>
  desired({
    scalingGroups: [scalingGroup('workers', 'workers')],
    nodeImages: [nodeImage('workers', V2, { healthGate: { minReadySeconds: 0, timeoutSeconds: 60 }, ...rollout })],
  });

const phaseOf = (p: ReturnType<typeof plan>, name: string) =>
  p.actions.flatMap((a) => (a.kind === 'annotateNode' && a.node === name ? [a.annotations[ANNOTATIONS.phase]] : []));

describe('plan: a replace rollout waits for the workloads evicted from the old node', () => {
  it('the cordon records the workloads with pods on the old node', () => {
    const p = plan(want(), world('Pending', { workloads: web(3), onOld: true }), at(10));
    const cordoned = p.actions.find((a) => a.kind === 'annotateNode' && a.node === 'worker-0');
    assert.ok(cordoned?.kind === 'annotateNode');
    // Pods to move: the drain starts with the cordon.
    assert.equal(cordoned.annotations[ANNOTATIONS.phase], 'Draining');
    assert.equal(cordoned.annotations[ANNOTATIONS.evicted], WEB);
  });

  it('drained with a workload still short: the old node stays, Verifying, and the next node does not start', () => {
    const p = plan(want(), world('Draining', { workloads: web(2) }), at(10));
    assert.deepEqual(bare(p), [
      {
        kind: 'annotateNode',
        spec: SPEC,
        node: 'worker-0',
        annotations: { [ANNOTATIONS.phase]: 'Verifying', [ANNOTATIONS.phaseSince]: iso(10) },
      },
    ]);
    const health = p.waits.find((w) => w.code === 'health');
    assert.equal(health?.reason, 'worker-0 is drained; health gate: Deployment apps/web has 2/3 ready replicas');
    assert.equal(health?.until, iso(70));
  });

  it('Verifying within the timeout: nothing moves', () => {
    const p = plan(want(), world('Verifying', { workloads: web(2), since: 10 }), at(69));
    assert.deepEqual(bare(p), []);
    assert.equal(p.waits.find((w) => w.code === 'health')?.until, iso(70));
    assert.deepEqual(phaseOf(p, 'worker-1'), []);
  });

  it('the workloads back: the old node is removed', () => {
    const p = plan(want(), world('Verifying', { workloads: web(3), since: 10 }), at(20));
    // What follows in worker-0's lane is the next node, started on the slot its removal frees.
    assert.deepEqual(
      bare(p).filter((a) => 'node' in a && a.node === 'worker-0'),
      [
        { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-0', node: 'worker-0' },
        { kind: 'deleteNode', spec: SPEC, node: 'worker-0' },
      ],
    );
  });

  it('drained with every workload already back: removed at once, without a Verifying step', () => {
    const p = plan(want(), world('Draining', { workloads: web(3) }), at(10));
    assert.deepEqual(phaseOf(p, 'worker-0'), []);
    assert.ok(p.actions.some((a) => a.kind === 'removeInstance' && a.instanceId === 'i-0'));
  });

  it('past healthGate.timeout the old node fails, is uncordoned, and stopOnFailure halts', () => {
    const p = plan(want({ stopOnFailure: true }), world('Verifying', { workloads: web(2), since: 10 }), at(70));
    assert.ok(p.actions.some((a) => a.kind === 'uncordon' && a.node === 'worker-0'));
    const failed = p.actions.find((a) => a.kind === 'annotateNode' && a.node === 'worker-0');
    assert.ok(failed?.kind === 'annotateNode');
    assert.equal(failed.annotations[ANNOTATIONS.phase], 'Failed');
    assert.equal(
      failed.annotations[ANNOTATIONS.reason],
      "the workloads evicted from worker-0 were not back within the health gate's 60s (Deployment apps/web has 2/3 ready replicas)",
    );
    assert.ok(!p.actions.some((a) => a.kind === 'removeInstance'));
    assert.equal(p.specs.find((s) => s.spec.kind === 'NodeImage')?.phase, 'Halted');
  });
});
