/**
 * The images of what drydock runs on nodes, as a table: `--reboot-image` reaches the reboot pod
 * of a NodeOp and of an inPlace NodeImage, `--bottlerocket-image` the Bottlerocket update Job and
 * its API reboot pod; neither reaches the other's, and without them the action names none
 * (execute's default).
 */
import assert from 'node:assert/strict';
import { plan, type PlanOptions } from '../../../src/plan/index.js';
import type { Action, Plan } from '../../../src/plan/types.js';
import type { ObservedJob, ObservedNode } from '../../../src/observe/types.js';
import { ANNOTATIONS } from '../../../src/protocol/keys.js';
import type { DesiredState } from '../../../src/spec/model.js';
import { at, desired, iso, node, nodeImage, observed } from '../fixtures.js';
import { nodeOp } from './fixtures.js';

const NS = 'drydock-system';
const REBOOT = 'mirror.example/tools/busybox:1.37';
const BOTTLEROCKET = 'mirror.example/tools/curl:8.11.0';

type Subject = 'NodeOp' | 'inPlace' | 'bottlerocket';

const lock: Record<Subject, string> = {
  NodeOp: 'NodeOp/patch@r1',
  inPlace: 'NodeImage/edge@e1',
  bottlerocket: 'NodeImage/br@b1',
};

function specs(subject: Subject): DesiredState {
  switch (subject) {
    case 'NodeOp':
      return desired({ nodeOps: [nodeOp('patch', { rebootOnSuccess: true })] });
    case 'inPlace':
      return desired({ nodeImages: [{ ...nodeImage('edge', 'os:v2', {}, 'e1'), strategy: 'inPlace' }] });
    case 'bottlerocket':
      return desired({
        nodeImages: [
          { ...nodeImage('br', '1.20.3', {}, 'b1'), strategy: 'inPlace', inPlace: { updater: 'bottlerocket' } },
        ],
      });
  }
}

/** worker-0 held by the subject in `phase`, on boot b-1 (and recorded so when Rebooting). */
function held(subject: Subject, phase: 'Updating' | 'Rebooting'): ObservedNode {
  const annotations = {
    [ANNOTATIONS.operation]: lock[subject],
    [ANNOTATIONS.phase]: phase,
    [ANNOTATIONS.phaseSince]: iso(-10),
    ...(phase === 'Rebooting' ? { [ANNOTATIONS.bootID]: 'b-1' } : {}),
  };
  const base = node('worker-0', 'sim://g/worker-0', { annotations, readySince: -3600 });
  return { ...base, bootID: 'b-1', osImage: 'Bottlerocket OS 1.19.2 (aws-k8s-1.30)' };
}

function run(subject: Subject, phase: 'Updating' | 'Rebooting', options: PlanOptions, jobs: ObservedJob[] = []): Plan {
  return plan(specs(subject), observed({ nodes: [held(subject, phase)], jobs }), at(0), {
    jobNamespace: NS,
    ...options,
  });
}

const action = <K extends Action['kind']>(p: Plan, kind: K): Extract<Action, { kind: K }> => {
  const found = p.actions.find((a): a is Extract<Action, { kind: K }> => a.kind === kind);
  assert.ok(found, `a ${kind} in ${JSON.stringify(p.actions.map((a) => a.kind))}`);
  return found;
};

const both: PlanOptions = { rebootImage: REBOOT, bottlerocketImage: BOTTLEROCKET };

describe('plan: the images of the Jobs and reboot pods drydock runs on nodes', () => {
  const reboots: [Subject, PlanOptions, string | undefined][] = [
    ['NodeOp', both, REBOOT],
    ['NodeOp', { bottlerocketImage: BOTTLEROCKET }, undefined],
    ['NodeOp', {}, undefined],
    ['inPlace', both, REBOOT],
    ['inPlace', {}, undefined],
    ['bottlerocket', both, BOTTLEROCKET],
    ['bottlerocket', { rebootImage: REBOOT }, undefined],
    ['bottlerocket', {}, undefined],
  ];
  for (const [subject, options, image] of reboots) {
    it(`${subject} reboot pod with ${JSON.stringify(options)}: image ${image ?? '(none named)'}`, () => {
      const pod = action(run(subject, 'Rebooting', options), 'createRebootPod');
      assert.equal(pod.image, image);
      assert.equal(pod.method, subject === 'bottlerocket' ? 'bottlerocketApi' : undefined);
    });
  }

  const updates: [PlanOptions, string | undefined][] = [
    [both, BOTTLEROCKET],
    [{ rebootImage: REBOOT }, undefined],
    [{}, undefined],
  ];
  for (const [options, image] of updates) {
    it(`Bottlerocket update Job with ${JSON.stringify(options)}: image ${image ?? '(none named)'}`, () => {
      const job = action(run('bottlerocket', 'Updating', options), 'createBottlerocketUpdateJob');
      assert.equal(job.image, image);
      assert.equal(job.version, '1.20.3');
    });
  }

  it('an inPlace NodeImage Job runs the NodeImage, never the reboot image', () => {
    const job = action(run('inPlace', 'Updating', both), 'createNodeJob');
    assert.equal(job.job.image, 'os:v2');
  });
});
