/**
 * A NodeOp removed from Git leaves nothing finished behind: its own Jobs and its UpgradeGate
 * before- and after-Jobs are deleted once finished, unless their node is still held by it (that
 * node's step finishes first); the Jobs of an operation still in Git are left to its own round.
 * A node it rebooted is released with its finished reboot pod deleted.
 */
import assert from 'node:assert/strict';
import { JOB_LABELS, MANAGED_BY } from '../../../src/execute/jobs/index.js';
import type { ObservedJob } from '../../../src/observe/types.js';
import { plan } from '../../../src/plan/index.js';
import { ANNOTATIONS } from '../../../src/protocol/keys.js';
import { at, config, desired, iso, node, observed, pod } from '../fixtures.js';
import { jobLabels, rebootPodName } from '../../../src/protocol/jobs.js';
import { nodeOp } from './fixtures.js';

const NS = 'drydock-system';

function job(
  name: string,
  o: { op?: string; node?: string; step?: string; state?: 'running' | 'succeeded' | 'failed' } = {},
): ObservedJob {
  const state = o.state ?? 'succeeded';
  return {
    namespace: NS,
    name,
    labels: {
      [JOB_LABELS.managedBy]: MANAGED_BY,
      [JOB_LABELS.operation]: o.op ?? 'NodeOp.patch',
      [JOB_LABELS.node]: o.node ?? 'worker-1',
      [JOB_LABELS.revision]: 'r1',
      [JOB_LABELS.step]: o.step ?? 'operation',
    },
    succeeded: state === 'succeeded',
    failed: state === 'failed',
    attempts: 1,
  };
}

/** worker-1 held by NodeOp patch@r1 (no longer in Git) in `phase`. */
const heldIn = (phase: string, extra: Record<string, string> = {}, o: { unschedulable?: boolean } = {}) =>
  node('worker-1', 'sim://g/worker-1', {
    ...o,
    annotations: {
      [ANNOTATIONS.operation]: 'NodeOp/patch@r1',
      [ANNOTATIONS.phase]: phase,
      [ANNOTATIONS.phaseSince]: iso(-10),
      ...extra,
    },
  });

const deleted = (jobs: ObservedJob[], nodes = [node('worker-1', 'sim://g/worker-1')], ops = [nodeOp('other')]) =>
  plan(desired({ config: config(10), nodeOps: ops }), observed({ nodes, jobs }), at(0), { jobNamespace: NS })
    .actions.filter((a) => a.kind === 'deleteJob')
    .map((a) => (a.kind === 'deleteJob' ? a.name : ''));

describe('plan: the finished Jobs and reboot pods of a NodeOp removed from Git', () => {
  const cases: Array<[string, ObservedJob[], string[]]> = [
    ['its own finished Job on a released node is deleted', [job('own')], ['own']],
    ['a failed one too', [job('own', { state: 'failed' })], ['own']],
    ['a running one is left to finish', [job('own', { state: 'running' })], []],
    [
      'its UpgradeGate before- and after-Jobs are deleted',
      [job('before', { step: 'before' }), job('after', { step: 'after' })],
      ['after', 'before'],
    ],
    ['a NodeOp still in Git keeps its Jobs to its own round', [job('other', { op: 'NodeOp.other' })], []],
    ['a Job drydock did not make is never touched', [{ ...job('foreign'), labels: {} }], []],
    ['a reboot pod step is not a Job of this sweep', [job('reboot', { step: 'reboot' })], []],
  ];
  for (const [name, jobs, want] of cases) it(name, () => assert.deepEqual(deleted(jobs).sort(), want));

  it('a node still held by the removed NodeOp: its step finishes and settle deletes its Job, once', () => {
    const heldNode = heldIn('Updating');
    // Named as the NodeOp names it, so settle() finds it as the node's Job.
    const own = job('nodeop-patch-worker-1-r1');
    assert.deepEqual(deleted([own], [heldNode]), ['nodeop-patch-worker-1-r1']);
    assert.deepEqual(deleted([{ ...own, succeeded: false }], [heldNode]), []);
  });

  it('a node still Draining whose Job runs (made beside a phase not written) is released only once the Job ends', () => {
    const draining = heldIn('Draining', { [ANNOTATIONS.cordoned]: 'true' }, { unschedulable: true });
    const own = job('nodeop-patch-worker-1-r1');
    const planned = (j: ObservedJob) =>
      plan(
        desired({ config: config(10), nodeOps: [nodeOp('other')] }),
        observed({ nodes: [draining], jobs: [j] }),
        at(0),
        {
          jobNamespace: NS,
        },
      ).actions.map((a) => `${a.kind} ${'node' in a ? a.node : ''}`);
    // Running: the node stays cordoned and held; nothing runs beside the Job.
    assert.deepEqual(planned({ ...own, succeeded: false }), []);
    // Ended: uncordoned, released, and its Job deleted.
    assert.deepEqual(planned(own), ['uncordon worker-1', 'annotateNode worker-1', 'deleteJob worker-1']);
  });

  it('a node still Updating whose reboot pod was made beside a Rebooting not written: released only once rebooted', () => {
    const updating = (bootID: string) => ({ ...heldIn('Updating'), bootID });
    const rebootPod = pod(NS, rebootPodName('worker-1', 'b-1'), 'worker-1', {
      ownerKind: 'None',
      labels: jobLabels({ kind: 'NodeOp', name: 'patch', revision: 'r1' }, 'worker-1', 'reboot'),
      rebootsFrom: 'b-1',
    });
    const planned = (bootID: string) =>
      plan(
        desired({ config: config(10), nodeOps: [nodeOp('other')] }),
        observed({ nodes: [updating(bootID)], pods: [rebootPod], jobs: [job('nodeop-patch-worker-1-r1')] }),
        at(0),
        { jobNamespace: NS },
      ).actions.map((a) => `${a.kind} ${a.kind === 'deleteRebootPod' ? a.name : 'node' in a ? a.node : ''}`);
    // Not rebooted yet: the pod could still reboot it, so the node is not released under it.
    assert.deepEqual(planned('b-1'), []);
    // Back with a new bootID: the pod goes, then the node is released and its Job deleted.
    assert.deepEqual(planned('b-2'), [
      `deleteRebootPod ${rebootPodName('worker-1', 'b-1')}`,
      'annotateNode worker-1',
      'deleteJob worker-1',
    ]);
  });

  it('a node the removed NodeOp rebooted is released with its reboot pod deleted; one still rebooting waits', () => {
    const rebooting = (bootID: string) => ({ ...heldIn('Rebooting', { [ANNOTATIONS.bootID]: 'b-1' }), bootID });
    const rebootPod = pod(NS, rebootPodName('worker-1', 'b-1'), 'worker-1');
    const planned = (bootID: string) =>
      plan(
        desired({ config: config(10), nodeOps: [nodeOp('other')] }),
        observed({ nodes: [rebooting(bootID)], pods: [rebootPod] }),
        at(0),
        { jobNamespace: NS },
      ).actions.map((a) => `${a.kind} ${a.kind === 'deleteRebootPod' ? a.name : 'node' in a ? a.node : ''}`);
    // Back with a new bootID: the release clears the recorded one that names the pod, so the pod goes with it.
    const released = planned('b-2');
    assert.ok(released.includes(`deleteRebootPod ${rebootPodName('worker-1', 'b-1')}`), released.join('; '));
    assert.ok(released.includes('annotateNode worker-1'), released.join('; '));
    // Not back yet: nothing is released and nothing deleted.
    assert.deepEqual(planned('b-1'), []);
  });

  it("a released node left with the removed NodeOp's reboot pod: deleted once its boot is over, never while it could reboot", () => {
    const released = (bootID: string) => ({ ...node('worker-1', 'sim://g/worker-1'), bootID });
    const made = (op: string, o: { terminating?: boolean } = {}) =>
      pod(NS, rebootPodName('worker-1', 'b-1'), 'worker-1', {
        ownerKind: 'None',
        labels: jobLabels({ kind: 'NodeOp', name: op, revision: 'r1' }, 'worker-1', 'reboot'),
        rebootsFrom: 'b-1',
        ...o,
      });
    const planned = (bootID: string, p = made('patch')) =>
      plan(
        desired({ config: config(10), nodeOps: [nodeOp('other')] }),
        observed({ nodes: [released(bootID)], pods: [p] }),
        at(0),
        {
          jobNamespace: NS,
        },
      ).actions.flatMap((a) =>
        a.kind === 'deleteRebootPod' ? [`${a.spec.kind}/${a.spec.name} ${a.namespace}/${a.name}`] : [],
      );
    assert.deepEqual(planned('b-2'), [`NodeOp/patch ${NS}/${rebootPodName('worker-1', 'b-1')}`]);
    // Its boot not over: the pod would reboot the node, as its operation asked; it is left to do so.
    assert.deepEqual(planned('b-1'), []);
    assert.deepEqual(planned('b-2', made('patch', { terminating: true })), [], 'already going');
    // A NodeOp still in Git cleans up its own (step.ts cleanUpRebootPod).
    assert.deepEqual(planned('b-2', made('other')), []);
  });
});
