import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/observe/types.js';
import { plan, PlanError } from '../../src/plan/index.js';
import {
  at,
  cloudGroup,
  deepFreeze,
  desired,
  instance,
  iso,
  node,
  nodeImage,
  observed,
  pod,
  scalingGroup,
  workers,
} from './fixtures.js';
import { LOCK, RELEASED as RELEASE, runCases, SPEC, V1, V2, bare } from './helpers.js';

const sg = scalingGroup('workers', 'workers');

describe('plan: locks of an older revision', () => {
  // The rollout to V2 started worker-0 (replacement i-9 on V2); then the image went back to V1.
  const backToV1 = desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V1, {}, 'workers-img:v1-again')] });
  const staleLock = (phase: string, joined: boolean, unschedulable = false) => {
    const w = workers(2, V1, (i) =>
      i === 0
        ? {
            unschedulable,
            annotations: {
              [ANNOTATIONS.operation]: LOCK,
              [ANNOTATIONS.phase]: phase,
              [ANNOTATIONS.phaseSince]: iso(0),
              [ANNOTATIONS.replacedBy]: 'i-9',
              ...(unschedulable ? { [ANNOTATIONS.cordoned]: 'true' } : {}),
            },
          }
        : {},
    );
    const surge = instance('workers', 'i-9', V2, 5);
    return observed({
      nodes: [...w.nodes, ...(joined ? [node('worker-9', surge.providerID)] : [])],
      cloudGroups: [cloudGroup('workers', V1, [...w.instances, surge])],
    });
  };
  runCases([
    {
      name: 'revert: a started, uncordoned node is released and its surge on the abandoned image removed',
      desired: backToV1,
      observed: staleLock('Pending', false),
      now: at(60),
      check: (p) => {
        assert.deepEqual(bare(p), [
          { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-9' },
          { kind: 'annotateNode', spec: SPEC, node: 'worker-0', annotations: RELEASE },
        ]);
        assert.deepEqual(
          p.notes.map((n) => n.text),
          ['released worker-0: it already runs img:v1'],
        );
      },
    },
    {
      name: 'revert: a node whose replacement already joined is finished under the new revision',
      desired: backToV1,
      observed: staleLock('Draining', true, true),
      now: at(60),
      check: (p) => {
        assert.deepEqual(bare(p), [
          {
            kind: 'annotateNode',
            spec: SPEC,
            node: 'worker-0',
            annotations: { [ANNOTATIONS.operation]: 'NodeImage/workers@workers-img:v1-again' },
          },
          { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-0', node: 'worker-0' },
          { kind: 'deleteNode', spec: SPEC, node: 'worker-0' },
        ]);
      },
    },
    {
      name: 'an edited policy (same image) adopts nodes in flight instead of starting over',
      desired: desired({
        scalingGroups: [sg],
        nodeImages: [nodeImage('workers', V2, { concurrency: 5 }, 'workers-img:v2-edited')],
      }),
      observed: {
        ...staleLock('Pending', false),
        cloudGroups: [
          cloudGroup('workers', V2, [
            instance('workers', 'i-0', V1),
            instance('workers', 'i-1', V1),
            instance('workers', 'i-9', V2, 5),
          ]),
        ],
      },
      now: at(60),
      check: (p) => {
        assert.deepEqual(bare(p)[0], {
          kind: 'annotateNode',
          spec: SPEC,
          node: 'worker-0',
          annotations: { [ANNOTATIONS.operation]: 'NodeImage/workers@workers-img:v2-edited' },
        });
        assert.equal(
          p.actions.some((a) => a.kind === 'removeInstance'),
          false,
        );
      },
    },
    {
      name: 'revert: a surge whose claim was lost (drydock stopped right after it) is removed with the release',
      desired: backToV1,
      observed: (() => {
        const o = staleLock('Pending', false);
        return {
          ...o,
          nodes: o.nodes.map((n) =>
            n.name === 'worker-0'
              ? {
                  ...n,
                  annotations: {
                    [ANNOTATIONS.operation]: LOCK,
                    [ANNOTATIONS.phase]: 'Pending',
                    [ANNOTATIONS.phaseSince]: iso(0),
                  },
                }
              : n,
          ),
        };
      })(),
      now: at(60),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'removeInstance', spec: SPEC, groupId: 'workers', instanceId: 'i-9' },
          { kind: 'annotateNode', spec: SPEC, node: 'worker-0', annotations: RELEASE },
        ]),
    },
    {
      name: 'revert: a joined surge whose claim was lost is claimed, and no second instance is surged',
      desired: backToV1,
      observed: (() => {
        const o = staleLock('Pending', true);
        return {
          ...o,
          nodes: o.nodes.map((n) =>
            n.name === 'worker-0'
              ? {
                  ...n,
                  annotations: {
                    [ANNOTATIONS.operation]: LOCK,
                    [ANNOTATIONS.phase]: 'Pending',
                    [ANNOTATIONS.phaseSince]: iso(0),
                  },
                }
              : n,
          ),
        };
      })(),
      now: at(60),
      check: (p) => {
        assert.deepEqual(bare(p)[0], {
          kind: 'annotateNode',
          spec: SPEC,
          node: 'worker-0',
          annotations: {
            [ANNOTATIONS.operation]: 'NodeImage/workers@workers-img:v1-again',
            [ANNOTATIONS.replacedBy]: 'i-9',
          },
        });
        assert.equal(
          p.actions.some((a) => a.kind === 'surge' || a.kind === 'removeInstance'),
          false,
        );
        assert.equal(
          p.actions.some(
            (a) => a.kind === 'annotateNode' && a.node === 'worker-9' && a.annotations[ANNOTATIONS.phase] === 'Pending',
          ),
          false,
        );
      },
    },
    {
      name: 'a Failed node of an older revision is uncordoned and released: a new revision retries it',
      desired: desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, {}, 'workers-img:v2-fixed')] }),
      observed: (() => {
        const w = workers(1, V1, () => ({
          unschedulable: true,
          annotations: {
            [ANNOTATIONS.operation]: LOCK,
            [ANNOTATIONS.phase]: 'Failed',
            [ANNOTATIONS.cordoned]: 'true',
            [ANNOTATIONS.reason]: 'halted: drain timed out',
          },
        }));
        return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
      })(),
      now: at(60),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'uncordon', spec: SPEC, node: 'worker-0' },
          { kind: 'annotateNode', spec: SPEC, node: 'worker-0', annotations: RELEASE },
        ]),
    },
    {
      name: 'a held node whose instance left the group after draining: its Node is deleted',
      desired: desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] }),
      observed: (() => {
        const w = workers(2, V2);
        const gone = node('worker-old', 'sim://workers/i-gone', {
          unschedulable: true,
          annotations: { [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Draining' },
        });
        return observed({ nodes: [...w.nodes, gone], cloudGroups: [cloudGroup('workers', V2, w.instances)] });
      })(),
      now: at(60),
      check: (p) => assert.deepEqual(bare(p), [{ kind: 'deleteNode', spec: SPEC, node: 'worker-old' }]),
    },
    {
      name: 'a lock left by the NodeImage the group pointed at before is taken over',
      desired: desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] }),
      observed: (() => {
        const w = workers(2, V1, (i) =>
          i === 0
            ? {
                annotations: {
                  [ANNOTATIONS.operation]: 'NodeImage/legacy@r7',
                  [ANNOTATIONS.phase]: 'Pending',
                  [ANNOTATIONS.phaseSince]: iso(0),
                },
              }
            : {},
        );
        return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
      })(),
      now: at(60),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'annotateNode', spec: SPEC, node: 'worker-0', annotations: { [ANNOTATIONS.operation]: LOCK } },
          { kind: 'surge', spec: SPEC, groupId: 'workers', count: 1, forNodes: ['worker-0'] },
        ]),
    },
    {
      name: 'an old-image instance without a node is reported, not removed',
      desired: desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2)] }),
      observed: (() => {
        const w = workers(1, V2);
        return observed({
          nodes: w.nodes,
          cloudGroups: [cloudGroup('workers', V2, [...w.instances, instance('workers', 'i-5', V1, -3600)])],
        });
      })(),
      now: at(0),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.deepEqual(p.waits, [
          {
            spec: SPEC,
            code: 'join',
            reason:
              'instance i-5 in ScalingGroup workers runs img:v1 but has no node; remove it from the group (or let it join) so the rollout can finish',
          },
        ]);
        assert.notEqual(p.specs[0]?.phase, 'Complete');
      },
    },
  ]);
});

describe('plan: purity and input errors', () => {
  const d = desired({
    scalingGroups: [sg],
    nodeImages: [nodeImage('workers', V2, { maxSurge: 2, canary: { nodes: 1, soakSeconds: 60 } })],
  });
  const o = (() => {
    const w = workers(4, V1, (i) =>
      i === 1
        ? {
            annotations: {
              [ANNOTATIONS.operation]: LOCK,
              [ANNOTATIONS.phase]: 'Pending',
              [ANNOTATIONS.phaseSince]: iso(0),
            },
          }
        : {},
    );
    return observed({
      nodes: w.nodes,
      pods: [pod('default', 'web-1', 'worker-1')],
      cloudGroups: [cloudGroup('workers', V2, w.instances)],
    });
  })();

  it('gives deep-equal plans for the same input, and never mutates it', () => {
    deepFreeze(d);
    deepFreeze(o);
    const first = plan(d, o, at(30));
    const second = plan(d, o, at(30));
    assert.deepEqual(second, first);
    assert.ok(first.actions.length > 0, 'the fixture should make the planner act');
  });

  it('does not depend on the order the API listed things in', () => {
    const shuffled = {
      ...o,
      cloudGroups: o.cloudGroups.map((g) => ({
        ...g,
        description: { ...g.description, instances: [...g.description.instances].reverse() },
      })),
    };
    assert.deepEqual(plan(d, shuffled, at(30)), plan(d, o, at(30)));
  });

  const bad: [string, () => unknown, string][] = [
    ['an invalid now', () => plan(d, o, new Date('not a date')), 'invalid-now'],
    ['a negative perNodeSeconds', () => plan(d, o, at(0), { perNodeSeconds: -1 }), 'invalid-option'],
    ['a zero maxAttempts', () => plan(d, o, at(0), { maxAttempts: 0 }), 'invalid-option'],
  ];
  for (const [name, call, code] of bad) {
    it(`refuses ${name} with PlanError ${code}`, () => {
      assert.throws(call, (err: unknown) => err instanceof PlanError && err.code === code);
    });
  }

  it('an unreadable phase-since does not crash the planner', () => {
    const w = workers(1, V1, () => ({
      annotations: {
        [ANNOTATIONS.operation]: LOCK,
        [ANNOTATIONS.phase]: 'Draining',
        [ANNOTATIONS.phaseSince]: 'yesterday',
      },
    }));
    const p = plan(d, observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] }), at(0));
    assert.deepEqual(
      bare(p).map((a) => a.kind),
      ['cordon', 'removeInstance', 'deleteNode'],
    );
  });
});
