/**
 * UpgradeGates on the NodeOp machinery (NodeOp, NodeOpUpgrade, inPlace) as tables: before-Jobs
 * one after another before the cordon, after-Jobs in Verifying once the node is done, a failed
 * gate Job failing the node with its name, and gate Jobs deleted only once nothing reads them.
 */
import assert from 'node:assert/strict';
import { plan } from '../../../src/plan/index.js';
import type { Action, Plan } from '../../../src/plan/types.js';
import type { ObservedJob, ObservedNode } from '../../../src/observe/types.js';
import { ANNOTATIONS, nodeOpRecordKey } from '../../../src/protocol/keys.js';
import type { NodeImage, NodeOp, UpgradeGate } from '../../../src/spec/model.js';
import { at, config, desired, iso, jobTemplate, node, nodeImage, observed, upgradeGate } from '../fixtures.js';
import { nodeOp } from './fixtures.js';
import { nodeSteps } from '../helpers.js';

const NS = 'drydock-system';
const LOCK = 'NodeOp/patch@r1';
const OP_JOB = 'nodeop-patch-worker-0-r1';
// gate, step + position, node, revision, operation: the deterministic gate Job names.
const CHECK = 'storage-before0-worker-0-r1-nodeop-patch';
const SNAPSHOT = 'storage-before1-worker-0-r1-nodeop-patch';
const REBALANCE = 'storage-after0-worker-0-r1-nodeop-patch';

const template = jobTemplate;
const gate = (o: Partial<UpgradeGate> = {}): UpgradeGate =>
  upgradeGate([{ kind: 'NodeOp', name: 'patch' }], {
    before: [template('check'), template('snapshot')],
    after: [template('rebalance')],
    ...o,
  });

const held = (phase: string, extra: Record<string, string> = {}): Record<string, string> => ({
  [ANNOTATIONS.operation]: LOCK,
  [ANNOTATIONS.phase]: phase,
  [ANNOTATIONS.phaseSince]: iso(-10),
  ...extra,
});

function n(
  name: string,
  annotations: Record<string, string> = {},
  o: { labels?: Record<string, string>; unschedulable?: boolean } = {},
): ObservedNode {
  return {
    ...node(name, `sim://g/${name}`, { annotations, unschedulable: o.unschedulable ?? false, labels: o.labels ?? {} }),
    bootID: `boot-${name}`,
  };
}

const job = (name: string, state: 'running' | 'succeeded' | 'failed', message?: string): ObservedJob => ({
  namespace: NS,
  name,
  labels: {},
  succeeded: state === 'succeeded',
  failed: state === 'failed',
  attempts: state === 'running' ? 0 : 1,
  ...(state === 'failed' ? { failureReason: 'BackoffLimitExceeded' } : {}),
  ...(message !== undefined ? { message } : {}),
});

/** A finished gate Job as the observer sees it: drydock's labels name operation, node, revision and step. */
const labelled = (name: string, step: 'before' | 'after', revision = 'r1', node = 'worker-0'): ObservedJob => ({
  ...job(name, 'succeeded'),
  labels: {
    'app.kubernetes.io/managed-by': 'drydock',
    'drydock.dev/operation': 'NodeOp.patch',
    'drydock.dev/revision': revision,
    'drydock.dev/node': node,
    'drydock.dev/step': step,
  },
});

function run(
  op: NodeOp | undefined,
  nodes: ObservedNode[],
  o: { jobs?: ObservedJob[]; gates?: UpgradeGate[]; images?: NodeImage[] } = {},
): Plan {
  const d = desired({
    config: config(10),
    nodeOps: op === undefined ? [] : [op],
    upgradeGates: o.gates ?? [gate()],
    nodeImages: o.images ?? [],
  });
  return plan(d, observed({ nodes, jobs: o.jobs ?? [] }), at(0), { jobNamespace: NS, rebootTimeoutSeconds: 600 });
}

const kinds = (p: Plan): string[] =>
  nodeSteps(p).actions.map((a) =>
    `${a.kind} ${'node' in a ? a.node : ''}${a.kind === 'deleteJob' ? ` ${a.name}` : ''}`.trim(),
  );
const gateJobs = (p: Plan) =>
  p.actions.filter((a): a is Extract<Action, { kind: 'createGateJob' }> => a.kind === 'createGateJob');
const annotation = (p: Plan, key: string): (string | null | undefined)[] =>
  p.actions.flatMap((a) => (a.kind === 'annotateNode' ? [a.annotations[key]] : []));

describe('NodeOp planner: UpgradeGates', () => {
  const op = nodeOp('patch', { cordon: true });

  it('Pending: the before-Jobs run one after another, and only then is the node cordoned', () => {
    const pending = [n('worker-0', held('Pending'))];
    const first = run(op, pending);
    assert.deepEqual(kinds(first), ['createGateJob worker-0']);
    const a = gateJobs(first)[0];
    assert.deepEqual(
      [a?.gate, a?.step, a?.index, a?.defaultNamespace, a?.template],
      ['storage', 'before', 0, NS, template('check')],
    );
    assert.deepEqual(a?.operation, { kind: 'NodeOp', name: 'patch', revision: 'r1' });
    assert.ok(first.waits.some((w) => w.code === 'gate' && w.reason.includes(`${NS}/${CHECK}`)));

    assert.deepEqual(kinds(run(op, pending, { jobs: [job(CHECK, 'running')] })), [], 'waits while the first runs');
    const second = run(op, pending, { jobs: [job(CHECK, 'succeeded')] });
    assert.deepEqual(kinds(second), ['createGateJob worker-0']);
    assert.equal(gateJobs(second)[0]?.index, 1);
    assert.deepEqual(kinds(run(op, pending, { jobs: [job(CHECK, 'succeeded'), job(SNAPSHOT, 'running')] })), []);

    const passed = run(op, pending, { jobs: [job(CHECK, 'succeeded'), job(SNAPSHOT, 'succeeded')] });
    assert.deepEqual(kinds(passed), ['cordon worker-0', 'annotateNode worker-0', 'createNodeJob worker-0']);
    assert.deepEqual(annotation(passed, ANNOTATIONS.phase), ['Updating']);
  });

  it('a free node with before-Jobs gets only its lock in its first round; the Jobs run from the next', () => {
    assert.deepEqual(kinds(run(op, [n('worker-0')])), ['annotateNode worker-0']);
    assert.deepEqual(annotation(run(op, [n('worker-0')]), ANNOTATIONS.phase), ['Pending']);
    // Without a gate for it, the same round goes on to the cordon and the Job.
    const other = gate({ appliesTo: { targets: [{ kind: 'NodeOp', name: 'other' }] } });
    assert.deepEqual(kinds(run(op, [n('worker-0')], { gates: [other] })), [
      'annotateNode worker-0',
      'cordon worker-0',
      'annotateNode worker-0',
      'createNodeJob worker-0',
    ]);
  });

  it('applies only to the specs and nodes it names', () => {
    const pending = [n('worker-0', held('Pending'))];
    const other = gate({ appliesTo: { targets: [{ kind: 'NodeOp', name: 'other' }] } });
    const started = ['cordon worker-0', 'annotateNode worker-0', 'createNodeJob worker-0'];
    assert.deepEqual(kinds(run(op, pending, { gates: [other] })), started);
    const everyNodeOp = gate({ appliesTo: { targets: [{ kind: 'NodeOp' }] } });
    assert.deepEqual(kinds(run(op, pending, { gates: [everyNodeOp] })), ['createGateJob worker-0']);
    const ssd = gate({ appliesTo: { targets: [{ kind: 'NodeOp' }], nodeSelector: { matchLabels: { disk: 'ssd' } } } });
    assert.deepEqual(kinds(run(op, pending, { gates: [ssd] })), started);
    const onSsd = [n('worker-0', held('Pending'), { labels: { disk: 'ssd' } })];
    assert.deepEqual(kinds(run(op, onSsd, { gates: [ssd] })), ['createGateJob worker-0']);
  });

  it('a failed before-Job fails the node, named with the Job and its message, never cordoned; stopOnFailure halts', () => {
    const stop = nodeOp('patch', { cordon: true, stopOnFailure: true });
    const nodes = [n('worker-0', held('Pending')), n('worker-1')];
    const p = run(stop, nodes, { jobs: [job(CHECK, 'failed', 'volume vol-7 is degraded')] });
    assert.deepEqual(kinds(p), ['annotateNode worker-0'], 'no cordon, no Job, nothing else started');
    assert.deepEqual(annotation(p, ANNOTATIONS.phase), ['Failed']);
    assert.deepEqual(annotation(p, ANNOTATIONS.job), [`${NS}/${CHECK}`]);
    const reason = annotation(p, ANNOTATIONS.reason)[0] ?? '';
    assert.match(reason, new RegExp(`UpgradeGate storage before-Job ${NS}/${CHECK} failed after 1 attempt`));
    assert.match(reason, /volume vol-7 is degraded/);

    const failed = n('worker-0', held('Failed', { [ANNOTATIONS.reason]: reason, [ANNOTATIONS.job]: `${NS}/${CHECK}` }));
    const next = run(stop, [failed, n('worker-1')], { jobs: [labelled(CHECK, 'before')] });
    assert.deepEqual(kinds(next), [`deleteJob worker-0 ${CHECK}`], 'the recorded gate Job goes; no node starts');
    assert.equal(next.specs[0]?.phase, 'Halted');
    const row = next.specs[0]?.nodes.find((r) => r.node === 'worker-0');
    assert.equal(row?.phase, 'Failed');
    assert.equal(row?.job, `${NS}/${CHECK}`);
    assert.match(row?.lastError ?? '', /volume vol-7 is degraded/);
  });

  it('Job done: uncordoned, then the after-Jobs run in Verifying; the node is finished once they succeeded', () => {
    const updating = [n('worker-0', held('Updating', { [ANNOTATIONS.cordoned]: 'true' }), { unschedulable: true })];
    const done = run(op, updating, { jobs: [job(OP_JOB, 'succeeded', 'patched 3 packages')] });
    assert.deepEqual(kinds(done), ['uncordon worker-0', 'annotateNode worker-0']);
    assert.deepEqual(annotation(done, ANNOTATIONS.phase), ['Verifying']);
    assert.deepEqual(annotation(done, ANNOTATIONS.jobMessage), ['patched 3 packages']);
    assert.deepEqual(annotation(done, nodeOpRecordKey('patch')), [undefined], 'not recorded before the after-Jobs');

    const verifying = [n('worker-0', held('Verifying'))];
    const after = run(op, verifying, { jobs: [job(OP_JOB, 'succeeded')] });
    // The finished Job waits for the node's end: a deletion in its lane would hold the health gate's next round.
    assert.deepEqual(kinds(after), ['createGateJob worker-0']);
    assert.deepEqual([gateJobs(after)[0]?.step, gateJobs(after)[0]?.index], ['after', 0]);
    assert.deepEqual(kinds(run(op, verifying, { jobs: [job(REBALANCE, 'running')] })), []);

    const finished = run(op, verifying, { jobs: [labelled(REBALANCE, 'after')] });
    assert.deepEqual(kinds(finished), ['annotateNode worker-0'], 'the after-Job is kept while Verifying reads it');
    assert.deepEqual(annotation(finished, nodeOpRecordKey('patch')), ['r1']);
    assert.deepEqual(annotation(finished, ANNOTATIONS.operation), [null], 'lock released');

    const doneNode = n('worker-0', { [nodeOpRecordKey('patch')]: 'r1' });
    const cleanup = run(op, [doneNode], {
      jobs: [job(OP_JOB, 'succeeded'), labelled(CHECK, 'before'), labelled(REBALANCE, 'after')],
    });
    // In the observer's order (namespace/name), the node's own Job first.
    assert.deepEqual(kinds(cleanup), [
      `deleteJob worker-0 ${OP_JOB}`,
      `deleteJob worker-0 ${REBALANCE}`,
      `deleteJob worker-0 ${CHECK}`,
    ]);
  });

  it('a failed after-Job fails the node with its name', () => {
    const p = run(op, [n('worker-0', held('Verifying'))], { jobs: [job(REBALANCE, 'failed')] });
    assert.deepEqual(annotation(p, ANNOTATIONS.phase), ['Failed']);
    assert.deepEqual(annotation(p, ANNOTATIONS.job), [`${NS}/${REBALANCE}`]);
  });

  it('without after-Jobs the node finishes once its health gate passed, with no gate Job', () => {
    const noAfter = gate({ after: [] });
    const p = run(op, [n('worker-0', held('Updating'))], { gates: [noAfter], jobs: [job(OP_JOB, 'succeeded')] });
    assert.deepEqual(annotation(p, ANNOTATIONS.phase), ['Verifying']);
    const verified = run(op, [n('worker-0', held('Verifying'))], { gates: [noAfter], jobs: [] });
    assert.deepEqual(kinds(verified), ['annotateNode worker-0']);
    assert.deepEqual(annotation(verified, nodeOpRecordKey('patch')), ['r1']);
  });

  it('keeps the before-Jobs while Pending reads them, deletes them once the node moved on', () => {
    const jobs = [labelled(CHECK, 'before'), labelled(SNAPSHOT, 'before')];
    const pending = run(op, [n('worker-0', held('Pending'))], { jobs });
    assert.ok(!kinds(pending).some((k) => k.startsWith('deleteJob')));
    const updating = run(op, [n('worker-0', held('Updating'))], { jobs: [...jobs, job(OP_JOB, 'running')] });
    assert.deepEqual(kinds(updating), [`deleteJob worker-0 ${CHECK}`, `deleteJob worker-0 ${SNAPSHOT}`]);
    // A running gate Job is never deleted, whatever the node's phase.
    const running = { ...labelled(CHECK, 'before'), succeeded: false };
    assert.deepEqual(
      kinds(run(op, [n('worker-0', held('Updating'))], { jobs: [running, job(OP_JOB, 'running')] })),
      [],
    );
  });

  it('onFailure keepCordoned: a failed node stays cordoned', () => {
    const keep = nodeOp('patch', { cordon: true, rollout: { ...op.rollout, onFailure: 'keepCordoned' } });
    const cordoned = [n('worker-0', held('Updating', { [ANNOTATIONS.cordoned]: 'true' }), { unschedulable: true })];
    const p = run(keep, cordoned, { gates: [], jobs: [job(OP_JOB, 'failed', 'disk full')] });
    assert.deepEqual(kinds(p), ['annotateNode worker-0']);
    assert.match(
      annotation(p, ANNOTATIONS.reason)[0] ?? '',
      /failed after 1 attempt\(s\) \(BackoffLimitExceeded\): disk full$/,
    );
    const uncordons = run(op, cordoned, { gates: [], jobs: [job(OP_JOB, 'failed')] });
    assert.deepEqual(kinds(uncordons), ['uncordon worker-0', 'annotateNode worker-0']);
  });

  it('gates a NodeOpUpgrade by its own name, and an inPlace NodeImage with Jobs named for the NodeImage', () => {
    const generated = nodeOp('edge', { generatedBy: 'NodeOpUpgrade/edge' });
    const forUpgrade = gate({ appliesTo: { targets: [{ kind: 'NodeOpUpgrade', name: 'edge' }] } });
    const lock = { [ANNOTATIONS.operation]: 'NodeOp/edge@r1', [ANNOTATIONS.phase]: 'Pending' };
    const p = run(generated, [n('worker-0', lock)], { gates: [forUpgrade] });
    assert.deepEqual(kinds(p), ['createGateJob worker-0']);
    assert.deepEqual(gateJobs(p)[0]?.spec, { kind: 'NodeOpUpgrade', name: 'edge' });

    const image = { ...nodeImage('edge', 'os-v2', { concurrency: 1 }), strategy: 'inPlace' as const };
    const forImage = gate({ appliesTo: { targets: [{ kind: 'NodeImage', name: 'edge' }] } });
    const imageLock = { [ANNOTATIONS.operation]: `NodeImage/edge@${image.revision}`, [ANNOTATIONS.phase]: 'Pending' };
    const q = run(undefined, [n('worker-0', imageLock)], { gates: [forImage], images: [image] });
    assert.deepEqual(kinds(q), ['createGateJob worker-0']);
    assert.deepEqual(gateJobs(q)[0]?.operation, { kind: 'NodeImage', name: 'edge', revision: image.revision });
  });
});
