/**
 * UpgradeGates on a replace rollout as tables: the before-Jobs run once the replacement is
 * healthy and must succeed before the old node is cordoned and drained; the after-Jobs run
 * once it is drained, before its instance is removed; both name the old node and its
 * replacement. A failed gate Job fails the node with the Job's name, and stopOnFailure halts.
 */
import { strict as assert } from 'node:assert';
import { gateJobName } from '../../src/execute/jobs/index.js';
import type { ObservedJob } from '../../src/observe/types.js';
import { plan, type Action, type Plan } from '../../src/plan/index.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import type { RolloutPolicy } from '../../src/spec/model.js';
import {
  at,
  cloudGroup,
  desired,
  instance,
  iso,
  jobTemplate,
  node,
  nodeImage,
  observed,
  providerID,
  scalingGroup,
  upgradeGate,
  workers,
} from './fixtures.js';
import { LOCK, nodeSteps, V1, V2 } from './helpers.js';

const NS = 'kube-system';
const OPERATION = { kind: 'NodeImage', name: 'workers', revision: `workers-${V2}` } as const;

const template = jobTemplate();
const gate = upgradeGate([{ kind: 'NodeImage', name: 'workers' }]);
const jobName = (step: 'before' | 'after'): string =>
  gateJobName({ operation: OPERATION, gate: 'storage', step, index: 0, template, node: 'worker-0' });

const job = (step: 'before' | 'after', state: 'running' | 'succeeded' | 'failed'): ObservedJob => ({
  namespace: NS,
  name: jobName(step),
  labels: {},
  succeeded: state === 'succeeded',
  failed: state === 'failed',
  attempts: 1,
  ...(state === 'failed' ? { failureReason: 'BackoffLimitExceeded', message: 'vol-7 degraded' } : {}),
});

/** worker-0 started, its replacement worker-9 (i-9) joined, healthy and marked Done. */
function world(phase: string, jobs: ObservedJob[], o: { cordoned?: boolean; extra?: Record<string, string> } = {}) {
  const w = workers(3, V1, (i) =>
    i === 0
      ? {
          annotations: {
            [ANNOTATIONS.operation]: LOCK,
            [ANNOTATIONS.phase]: phase,
            [ANNOTATIONS.phaseSince]: iso(100),
            [ANNOTATIONS.replacedBy]: 'i-9',
            ...(o.cordoned ? { [ANNOTATIONS.cordoned]: 'true' } : {}),
            ...o.extra,
          },
          unschedulable: o.cordoned ?? false,
        }
      : {},
  );
  const rn = node('worker-9', providerID('workers', 'i-9'), {
    readySince: 0,
    annotations: { [ANNOTATIONS.replaces]: 'i-0', [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Done' },
  });
  return observed({
    nodes: [...w.nodes, rn],
    jobs,
    cloudGroups: [cloudGroup('workers', V2, [...w.instances, instance('workers', 'i-9', V2, 5)], 4)],
  });
}

function run(
  phase: string,
  jobs: ObservedJob[],
  o: { cordoned?: boolean; extra?: Record<string, string>; rollout?: Partial<RolloutPolicy> } = {},
): Plan {
  const d = desired({
    scalingGroups: [scalingGroup('workers', 'workers')],
    nodeImages: [nodeImage('workers', V2, o.rollout ?? {})],
    upgradeGates: [gate],
  });
  return plan(d, world(phase, jobs, o), at(300), { jobNamespace: NS });
}

const kinds = (p: Plan): string[] =>
  nodeSteps(p).actions.map((a) => `${a.kind} ${'node' in a ? (a.node ?? '') : ''}`.trim());
const created = (p: Plan) =>
  p.actions.filter((a): a is Extract<Action, { kind: 'createGateJob' }> => a.kind === 'createGateJob');
const annotated = (p: Plan, key: string) =>
  p.actions.flatMap((a) => (a.kind === 'annotateNode' && a.node === 'worker-0' ? [a.annotations[key]] : []));

describe('plan: UpgradeGates on a replace rollout', () => {
  it('before: the gate Job runs once the replacement is healthy, with both names; no cordon until it succeeded', () => {
    const first = run('Pending', []);
    assert.deepEqual(kinds(first), ['createGateJob worker-0']);
    const a = created(first)[0];
    assert.deepEqual([a?.step, a?.replacement, a?.defaultNamespace], ['before', 'worker-9', NS]);
    assert.deepEqual(a?.operation, OPERATION);
    assert.deepEqual(kinds(run('Pending', [job('before', 'running')])), []);
    const passed = run('Pending', [job('before', 'succeeded')]);
    assert.deepEqual(kinds(passed), ['annotateNode worker-0', 'cordon worker-0']);
    assert.deepEqual(annotated(passed, ANNOTATIONS.phase), ['Cordoned']);
  });

  it('a failed before-Job fails the node with the Job named; it is never cordoned and stopOnFailure halts', () => {
    const p = run('Pending', [job('before', 'failed')], { rollout: { stopOnFailure: true } });
    assert.deepEqual(kinds(p), ['annotateNode worker-0']);
    assert.deepEqual(annotated(p, ANNOTATIONS.phase), ['Failed']);
    assert.deepEqual(annotated(p, ANNOTATIONS.job), [`${NS}/${jobName('before')}`]);
    assert.match(
      String(annotated(p, ANNOTATIONS.reason)[0]),
      /before-Job .* failed after 1 attempt\(s\) \(BackoffLimitExceeded\): vol-7 degraded/,
    );
    const status = p.specs.find((s) => s.spec.kind === 'NodeImage');
    assert.equal(status?.phase, 'Halted');
    assert.match(status?.lastError ?? '', new RegExp(jobName('before')));
  });

  it('the node a failed gate Job failed stays Failed the rounds after, its lock and mark kept', () => {
    const failedRound = run('Pending', [job('before', 'failed')], { rollout: { stopOnFailure: true } });
    const marks = failedRound.actions.find((a) => a.kind === 'annotateNode' && a.node === 'worker-0');
    assert.ok(marks?.kind === 'annotateNode');
    // The node as that round left it: the Job named in drydock.dev/job, as an in-place lock's is.
    const written = Object.fromEntries(
      Object.entries(marks.annotations).filter((e): e is [string, string] => e[1] !== null),
    );
    for (const rollout of [{ stopOnFailure: true }, { stopOnFailure: false }])
      for (const jobs of [[job('before', 'failed')], []]) {
        const next = run('Failed', jobs, { extra: written, rollout });
        assert.deepEqual(
          next.actions.filter((a) => 'node' in a && a.node === 'worker-0').map((a) => a.kind),
          [],
          `stopOnFailure ${String(rollout.stopOnFailure)}, ${jobs.length} Job(s): ${kinds(next).join(', ')}`,
        );
        const row = next.specs.find((s) => s.spec.kind === 'NodeImage')?.nodes.find((r) => r.node === 'worker-0');
        assert.equal(row?.phase, 'Failed');
      }
  });

  it('after: once drained the after-Job runs, and only its success removes the old instance', () => {
    const drained = run('Draining', [], { cordoned: true });
    assert.deepEqual(kinds(drained), ['createGateJob worker-0']);
    assert.deepEqual([created(drained)[0]?.step, created(drained)[0]?.replacement], ['after', 'worker-9']);
    assert.deepEqual(kinds(run('Draining', [job('after', 'running')], { cordoned: true })), []);
    // The removal frees worker-0's slot: worker-1 starts on it, after the removal.
    assert.deepEqual(kinds(run('Draining', [job('after', 'succeeded')], { cordoned: true })), [
      'removeInstance worker-0',
      'deleteNode worker-0',
      'annotateNode worker-1',
      'surge',
    ]);
  });

  it('a failed after-Job fails the node: uncordoned, or kept cordoned with onFailure keepCordoned', () => {
    const p = run('Draining', [job('after', 'failed')], { cordoned: true });
    assert.deepEqual(kinds(p), ['uncordon worker-0', 'annotateNode worker-0']);
    assert.deepEqual(annotated(p, ANNOTATIONS.phase), ['Failed']);
    const keep = run('Draining', [job('after', 'failed')], { cordoned: true, rollout: { onFailure: 'keepCordoned' } });
    assert.deepEqual(kinds(keep), ['annotateNode worker-0']);
    assert.deepEqual(annotated(keep, ANNOTATIONS.job), [`${NS}/${jobName('after')}`]);
  });
});
