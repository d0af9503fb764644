import { strict as assert } from 'node:assert';
import { ANNOTATIONS } from '../../src/observe/types.js';
import { plan, type Plan } from '../../src/plan/index.js';
import { approvalFile } from '../../src/report/approval-file.js';
import { renderPlan } from '../../src/report/plan-render.js';
import type { RolloutPolicy } from '../../src/spec/model.js';
import {
  approval,
  at,
  autoscaling,
  cloudGroup,
  config,
  deployment,
  desired,
  instance,
  iso,
  maintenanceWindow,
  nodeMaintenance,
  node,
  nodeImage,
  observed,
  scalingGroup,
  workers,
} from './fixtures.js';
import { LOCK, runCases, SPEC, V1, V2, waitCodes, bare } from './helpers.js';

const sg = scalingGroup('workers', 'workers');
const want = (rollout: Partial<RolloutPolicy> = {}, parts: Parameters<typeof desired>[0] = {}) =>
  desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, rollout)], ...parts });
/** n outdated workers, group image already set. */
const outdated = (n: number, opts: Parameters<typeof workers>[2] = () => ({})) => {
  const w = workers(n, V1, opts);
  return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
};
const started = (p: Plan): string[] =>
  p.actions.flatMap((a) =>
    a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending' ? [a.node] : [],
  );
const lockAt = (s: number) => ({
  [ANNOTATIONS.operation]: LOCK,
  [ANNOTATIONS.phase]: 'Pending',
  [ANNOTATIONS.phaseSince]: iso(s),
});

describe('plan: limits', () => {
  const limitCases: [string, Partial<RolloutPolicy>, number, string[]][] = [
    ['maxSurge 1 → one node', { maxSurge: 1, maxUnavailable: 0 }, 10, ['worker-0']],
    [
      'maxSurge 25% of 10 rounds up to 3',
      { maxSurge: '25%', maxUnavailable: 0 },
      10,
      ['worker-0', 'worker-1', 'worker-2'],
    ],
    [
      'maxUnavailable 25% of 10 rounds down to 2 and caps maxSurge 3',
      { maxSurge: 3, maxUnavailable: '25%' },
      10,
      ['worker-0', 'worker-1'],
    ],
    ['both 0 → one at a time', { maxSurge: 0, maxUnavailable: 0 }, 10, ['worker-0']],
    ['concurrency 2 caps maxSurge 5', { maxSurge: 5, concurrency: 2 }, 10, ['worker-0', 'worker-1']],
    [
      'concurrency 0 means no limit of its own',
      { maxSurge: 4, concurrency: 0 },
      10,
      ['worker-0', 'worker-1', 'worker-2', 'worker-3'],
    ],
  ];
  it('a concurrency of 1 is said in words that agree in number', () => {
    const p = runOne(want({ maxSurge: 5, concurrency: 1 }), outdated(3));
    const reason = p.waits.find((w) => w.code === 'concurrency')?.reason;
    assert.equal(reason, '2 node(s) queued: concurrency limit reached: 1 node in flight at once');
  });
  for (const [name, rollout, n, expected] of limitCases) {
    it(name, () => {
      const p = runOne(want(rollout), outdated(n));
      assert.deepEqual(started(p), expected);
    });
  }

  runCases([
    {
      name: 'cluster budget: nodes down for another operation count against it',
      desired: want(
        { maxSurge: 3 },
        { config: config(2), nodeMaintenances: [nodeMaintenance('disk', 'worker-3', 'disk swap', {}, 'r1')] },
      ),
      observed: (() => {
        const w = workers(4, V1, (i) =>
          i === 3
            ? {
                unschedulable: true,
                annotations: {
                  [ANNOTATIONS.operation]: 'NodeMaintenance/disk@r1',
                  [ANNOTATIONS.phase]: 'Cordoned',
                  [ANNOTATIONS.cordoned]: 'true',
                },
              }
            : {},
        );
        return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
      })(),
      now: at(0),
      check: (p) => {
        assert.deepEqual(started(p), ['worker-0']);
        assert.deepEqual(waitCodes(p), ['lock', 'budget']);
        assert.match(p.waits[1]?.reason ?? '', /2 node\(s\) queued: cluster budget allows 2 nodes unavailable at once/);
      },
    },
    {
      name: 'budget percentage of a small cluster still allows one node',
      desired: want({ maxSurge: 3 }, { config: config('10%') }),
      observed: outdated(3),
      now: at(0),
      check: (p) => assert.deepEqual(started(p), ['worker-0']),
    },
    {
      name: 'a node held by another operation is skipped with a lock wait; the next one starts',
      desired: want(),
      observed: outdated(2, (i) =>
        i === 0
          ? { annotations: { [ANNOTATIONS.operation]: 'NodeOp/kernel@abc', [ANNOTATIONS.phase]: 'Updating' } }
          : {},
      ),
      now: at(0),
      check: (p) => {
        assert.deepEqual(started(p), ['worker-1']);
        assert.deepEqual(p.waits[0], {
          spec: SPEC,
          code: 'lock',
          node: 'worker-0',
          reason: 'worker-0 is held by NodeOp/kernel@abc (phase Updating); it is replaced once that operation is done',
        });
      },
    },
    {
      name: 'two NodeImages share the cluster budget; the first by name takes it first',
      desired: desired({
        config: config(1),
        scalingGroups: [scalingGroup('blue', 'blue'), scalingGroup('green', 'green')],
        nodeImages: [nodeImage('green', V2), nodeImage('blue', V2)],
      }),
      observed: (() => {
        const b = instance('blue', 'b-0', V1);
        const g = instance('green', 'g-0', V1);
        return observed({
          nodes: [node('blue-0', b.providerID), node('green-0', g.providerID)],
          cloudGroups: [cloudGroup('blue', V2, [b]), cloudGroup('green', V2, [g])],
        });
      })(),
      now: at(0),
      check: (p) => {
        assert.deepEqual(started(p), ['blue-0']);
        assert.deepEqual(
          p.waits.map((w) => [w.spec.name, w.code]),
          [['green', 'budget']],
        );
      },
    },
    {
      name: 'controlPlaneFirst: workers wait while a control-plane node is outdated',
      desired: desired({
        scalingGroups: [scalingGroup('cp', 'workers', 'control-plane'), sg],
        nodeImages: [nodeImage('workers', V2)],
      }),
      observed: (() => {
        const w = workers(2, V1);
        const cpInst = instance('cp', 'c-0', V1);
        return observed({
          nodes: [...w.nodes, node('cp-0', cpInst.providerID)],
          cloudGroups: [cloudGroup('workers', V2, w.instances), cloudGroup('cp', V2, [cpInst])],
        });
      })(),
      now: at(0),
      check: (p) => assert.deepEqual(started(p), ['cp-0']),
    },
  ]);
});

function runOne(d: ReturnType<typeof want>, o: ReturnType<typeof outdated>, now = at(0)): Plan {
  return plan(d, o, now);
}

describe('plan: window', () => {
  // Mondays 2026-03-02 is a Monday; 22:00 Berlin = 21:00Z.
  const nightly = maintenanceWindow('nightly', 'Europe/Berlin', [{ cron: '0 22 * * *', durationSeconds: 7200 }]);
  const d = want({ window: 'nightly' }, { maintenanceWindows: [nightly] });
  runCases([
    {
      name: 'outside the window no node starts; the wait names the opening in local time',
      desired: d,
      observed: outdated(2),
      now: new Date('2026-03-02T12:00:00Z'),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.deepEqual(p.waits, [
          {
            spec: SPEC,
            code: 'window',
            reason: 'waiting for window nightly, opens 2026-03-02 22:00 Europe/Berlin (2026-03-02 21:00 UTC)',
            until: '2026-03-02T21:00:00.000Z',
          },
        ]);
        assert.equal(p.wakeAt, '2026-03-02T21:00:00.000Z');
        assert.equal(p.forecast.waves[0]?.start, '2026-03-02T21:00:00.000Z');
      },
    },
    {
      name: 'inside the window nodes start',
      desired: d,
      observed: outdated(2),
      now: new Date('2026-03-02T21:30:00Z'),
      check: (p) => assert.deepEqual(started(p), ['worker-0']),
    },
    {
      name: 'outside the window a node in flight still finishes its step',
      desired: d,
      observed: (() => {
        const w = workers(2, V1, (i) => (i === 0 ? { annotations: lockAt(-60) } : {}));
        return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
      })(),
      now: new Date('2026-03-02T12:00:00Z'),
      check: (p) => {
        assert.deepEqual(
          bare(p).map((a) => a.kind),
          ['surge'],
        );
        assert.deepEqual(waitCodes(p), ['window']);
      },
    },
    {
      name: 'a missing window is a wait that says what to fix',
      desired: want({ window: 'nope' }),
      observed: outdated(1),
      now: at(0),
      check: (p) =>
        assert.deepEqual(p.waits, [
          { spec: SPEC, code: 'window', reason: 'MaintenanceWindow nope does not exist; add it or fix rollout.window' },
        ]),
    },
  ]);
});

describe('plan: approvals', () => {
  const needStart =
    'approval needed (before the first node): merge approvals/workers-start.yaml (kind Approval, target NodeImage/workers, image img:v2, stage start)';
  runCases([
    {
      name: 'required start and no approval: waits, naming the file to merge',
      desired: want({ approval: { required: 'start' } }),
      observed: outdated(2),
      now: at(0),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.deepEqual(p.waits, [
          {
            spec: SPEC,
            code: 'approval',
            reason: needStart,
            approval: {
              stage: 'start',
              path: 'approvals/workers-start.yaml',
              target: { kind: 'NodeImage', name: 'workers', revision: 'workers-img:v2', image: V2 },
            },
          },
        ]);
        assert.equal(
          p.specs.find((s) => s.spec.name === 'workers')?.conditions.find((c) => c.type === 'Stalled')?.status,
          'True',
        );
        assert.equal(p.forecast.eta, undefined);
      },
    },
    {
      name: "with drydock.yaml reading only some directories, the wait names the file where it is read (drydock approve's path)",
      desired: {
        ...want({ approval: { required: 'start' } }),
        config: { ...config(), paths: ['clusters', 'images'] },
      },
      observed: outdated(2),
      now: at(0),
      check: (p) => {
        const wait = p.waits.find((w) => w.code === 'approval');
        assert.equal(
          wait?.reason,
          'approval needed (before the first node): merge clusters/approvals/workers-start.yaml (kind Approval, target NodeImage/workers, image img:v2, stage start)',
        );
        const file = approvalFile({ kind: 'NodeImage', name: 'workers', image: V2, revision: 'r' }, 'start', {
          paths: ['clusters', 'images'],
        });
        assert.ok(wait?.reason.includes(`merge ${file.path} `), 'the planner and drydock approve name one file');
      },
    },
    {
      name: 'an approval of an older image does not carry over',
      desired: want({ approval: { required: 'start' } }, { approvals: [approval('old', 'workers', V1, 'start')] }),
      observed: outdated(2),
      now: at(0),
      check: (p) => assert.deepEqual(waitCodes(p), ['approval']),
    },
    {
      name: 'the matching approval opens the rollout',
      desired: want({ approval: { required: 'start' } }, { approvals: [approval('go', 'workers', V2, 'start')] }),
      observed: outdated(2),
      now: at(0),
      check: (p) => {
        assert.deepEqual(started(p), ['worker-0']);
        // The status reports the approval the planner counted, and only that one.
        assert.deepEqual(p.specs[0]?.approvals, [{ stage: 'start', name: 'go', file: 'specs/test.yaml' }]);
      },
    },
    {
      name: 'an approval naming another revision of the NodeImage does not count, and status does not show it',
      desired: want(
        { approval: { required: 'start' } },
        { approvals: [{ ...approval('go', 'workers', V2, 'start'), targetRevision: 'workers-img:v1' }] },
      ),
      observed: outdated(2),
      now: at(0),
      check: (p) => {
        assert.deepEqual(waitCodes(p), ['approval']);
        assert.equal(p.specs[0]?.approvals, undefined);
      },
    },
    {
      name: 'an approval naming this revision counts; its approver is reported with it',
      desired: want(
        { approval: { required: 'start' } },
        {
          approvals: [
            {
              ...approval('go', 'workers', V2, 'start'),
              targetRevision: 'workers-img:v2',
              approvedBy: { name: 'Ada', email: 'ada@example.com', commit: 'c0ffee', at: iso(-60) },
            },
            approval('old', 'workers', V1, 'start'),
          ],
        },
      ),
      observed: outdated(2),
      now: at(0),
      check: (p) => {
        assert.deepEqual(started(p), ['worker-0']);
        assert.deepEqual(p.specs[0]?.approvals, [
          {
            stage: 'start',
            name: 'go',
            file: 'specs/test.yaml',
            approvedBy: { name: 'Ada', email: 'ada@example.com', commit: 'c0ffee', at: iso(-60) },
          },
        ]);
      },
    },
    {
      // Catches an approval counted for a stage it does not name (findApproval ignoring the stage).
      name: 'an after-canary approval of the same image does not open the start',
      desired: want(
        { approval: { required: 'start' } },
        { approvals: [approval('later', 'workers', V2, 'afterCanary')] },
      ),
      observed: outdated(2),
      now: at(0),
      check: (p) => {
        assert.deepEqual(started(p), []);
        assert.deepEqual(waitCodes(p), ['approval']);
      },
    },
    {
      name: 'afterCanary: the canary starts without approval',
      desired: want({ approval: { required: 'afterCanary' }, canary: { nodes: 1, soakSeconds: 60 }, maxSurge: 3 }),
      observed: outdated(3),
      now: at(0),
      check: (p) => assert.deepEqual(started(p), ['worker-0']),
    },
  ]);
});

describe('plan: canary', () => {
  const rollout: Partial<RolloutPolicy> = { canary: { nodes: 1, soakSeconds: 600 }, maxSurge: 3 };
  /** worker-0 was replaced by worker-9 (Done at t=100, Ready since t=60); worker-1, worker-2 outdated. */
  const afterCanary = (ready = true) => {
    const w = workers(3, V1);
    const inst = instance('workers', 'i-9', V2, 5);
    const done = node('worker-9', inst.providerID, {
      ready,
      readySince: 60,
      annotations: {
        [ANNOTATIONS.operation]: LOCK,
        [ANNOTATIONS.phase]: 'Done',
        [ANNOTATIONS.phaseSince]: iso(100),
        [ANNOTATIONS.replaces]: 'i-0',
      },
    });
    return observed({
      nodes: [...w.nodes.slice(1), done],
      cloudGroups: [cloudGroup('workers', V2, [...w.instances.slice(1), inst])],
    });
  };
  runCases([
    {
      name: 'only the canary wave starts, whatever maxSurge allows',
      desired: want(rollout),
      observed: outdated(3),
      now: at(0),
      check: (p) => {
        assert.deepEqual(started(p), ['worker-0']);
        assert.deepEqual(
          p.forecast.waves.map((w) => [w.label, w.nodes]),
          [
            ['canary', ['worker-0']],
            ['wave 2', ['worker-1', 'worker-2']],
          ],
        );
      },
    },
    {
      name: 'the rest waits for the soak, until Done + soakSeconds',
      desired: want(rollout),
      observed: afterCanary(),
      now: at(300),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.deepEqual(p.waits, [
          { spec: SPEC, code: 'soak', reason: `canary wave soaking for 600s, until ${iso(700)}`, until: iso(700) },
        ]);
      },
    },
    {
      name: 'after the soak the rest starts',
      desired: want(rollout),
      observed: afterCanary(),
      now: at(700),
      check: (p) => assert.deepEqual(started(p), ['worker-1', 'worker-2']),
    },
    {
      name: 'a canary node that is not Ready stops the rest',
      desired: want(rollout),
      observed: afterCanary(false),
      now: at(700),
      check: (p) =>
        assert.deepEqual(
          p.waits.map((w) => w.reason),
          ['canary node worker-9 is not Ready; the rest of the rollout waits'],
        ),
    },
    {
      name: 'afterCanary approval is needed once the canary has soaked',
      desired: want({ ...rollout, approval: { required: 'afterCanary' } }),
      observed: afterCanary(),
      now: at(700),
      check: (p) => assert.deepEqual(waitCodes(p), ['approval']),
    },
    {
      // Catches an approval counted for a stage it does not name (findApproval ignoring the stage).
      name: 'a start approval does not stand in for the afterCanary one',
      desired: want(
        { ...rollout, approval: { required: 'afterCanary' } },
        { approvals: [approval('go', 'workers', V2, 'start')] },
      ),
      observed: afterCanary(),
      now: at(700),
      check: (p) => {
        assert.deepEqual(started(p), []);
        assert.deepEqual(waitCodes(p), ['approval']);
      },
    },
    {
      name: 'the afterCanary approval lets the rest start once the canary has soaked',
      desired: want(
        { ...rollout, approval: { required: 'afterCanary' } },
        { approvals: [approval('go', 'workers', V2, 'afterCanary')] },
      ),
      observed: afterCanary(),
      now: at(700),
      check: (p) => assert.deepEqual(started(p), ['worker-1', 'worker-2']),
    },
  ]);
});

describe('plan: autoscaler', () => {
  const withAutoscaler = (rollout: Partial<RolloutPolicy> = {}) =>
    want(rollout, { autoscalingStrategies: [autoscaling('ca')] });
  const AS = { kind: 'AutoscalingStrategy', name: 'ca' } as const;
  runCases([
    {
      name: 'a rollout scales the autoscaler to 0, remembering its replicas, and waits before starting nodes',
      desired: withAutoscaler(),
      observed: { ...outdated(2), deployments: [deployment('cluster-autoscaler', 3)] },
      now: at(0),
      check: (p) => {
        assert.deepEqual(bare(p), [
          {
            kind: 'scaleDeployment',
            spec: AS,
            namespace: 'kube-system',
            name: 'cluster-autoscaler',
            replicas: 0,
            rememberPrevious: 3,
          },
        ]);
        assert.deepEqual(waitCodes(p), ['autoscaler', 'autoscaler']);
      },
    },
    {
      name: 'a count already remembered is never overwritten',
      desired: withAutoscaler(),
      observed: {
        ...outdated(2),
        deployments: [deployment('cluster-autoscaler', 1, { [ANNOTATIONS.previousReplicas]: '3' })],
      },
      now: at(0),
      check: (p) =>
        assert.deepEqual(bare(p), [
          { kind: 'scaleDeployment', spec: AS, namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 0 },
        ]),
    },
    {
      name: 'at 0 replicas the rollout proceeds',
      desired: withAutoscaler(),
      observed: {
        ...outdated(2),
        deployments: [deployment('cluster-autoscaler', 0, { [ANNOTATIONS.previousReplicas]: '3' })],
      },
      now: at(0),
      check: (p) => {
        assert.deepEqual(started(p), ['worker-0']);
        // Read the way a person reads it: plan's text puts the wait after "waiting:".
        const text = renderPlan(p, 'text', { commit: 'c0ffee0', cluster: 'c', at: iso(0) });
        assert.match(
          text,
          /AutoscalingStrategy\/ca: Waiting — waiting: the rollouts to finish; paused at 0 replicas until then \(restores 3\)/,
        );
      },
    },
    {
      name: 'one remembered replica is restored as "1 replica"',
      desired: withAutoscaler(),
      observed: (() => {
        const w = workers(2, V2);
        return observed({
          nodes: w.nodes,
          cloudGroups: [cloudGroup('workers', V2, w.instances)],
          deployments: [deployment('cluster-autoscaler', 0, { [ANNOTATIONS.previousReplicas]: '1' })],
        });
      })(),
      now: at(0),
      check: (p) =>
        assert.equal(p.specs.find((s) => s.spec.kind === 'AutoscalingStrategy')?.waitingFor, 'restoring 1 replica'),
    },
    {
      name: 'when every rollout is complete the exact remembered count is restored',
      desired: withAutoscaler(),
      observed: (() => {
        const w = workers(2, V2);
        return observed({
          nodes: w.nodes,
          cloudGroups: [cloudGroup('workers', V2, w.instances)],
          deployments: [deployment('cluster-autoscaler', 0, { [ANNOTATIONS.previousReplicas]: '3' })],
        });
      })(),
      now: at(0),
      check: (p) => {
        assert.deepEqual(bare(p), [
          { kind: 'scaleDeployment', spec: AS, namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 3 },
        ]);
        assert.equal(p.specs.find((s) => s.spec.kind === 'NodeImage')?.phase, 'Complete');
      },
    },
    {
      name: 'a paused autoscaler stays paused while a group goes unobserved (a cloud error is no sign the rollout ended)',
      desired: withAutoscaler(),
      observed: (() => {
        const w = workers(2, V1);
        return observed({
          nodes: w.nodes,
          cloudGroups: [],
          deployments: [deployment('cluster-autoscaler', 0, { [ANNOTATIONS.previousReplicas]: '3' })],
        });
      })(),
      now: at(0),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.match(
          p.specs.find((s) => s.spec.kind === 'AutoscalingStrategy')?.waitingFor ?? '',
          /^paused until the rollouts are known to be done; ScalingGroup workers: scaling group workers was not observed this round$/,
        );
      },
    },
    {
      name: 'a rollout of a group that says autoscaling: false leaves the autoscaler running and starts nodes',
      desired: desired({
        scalingGroups: [{ ...sg, autoscaling: false }],
        nodeImages: [nodeImage('workers', V2)],
        autoscalingStrategies: [autoscaling('ca')],
      }),
      observed: { ...outdated(2), deployments: [deployment('cluster-autoscaler', 3)] },
      now: at(0),
      check: (p) => {
        assert.equal(
          p.actions.some((a) => a.kind === 'scaleDeployment'),
          false,
        );
        assert.deepEqual(started(p), ['worker-0']);
        assert.equal(p.specs.find((s) => s.spec.kind === 'AutoscalingStrategy')?.phase, 'Complete');
      },
    },
    {
      name: 'an autoscaler paused for another group is restored while only an autoscaling: false group rolls out',
      desired: desired({
        scalingGroups: [{ ...sg, autoscaling: false }, scalingGroup('spares', 'workers')],
        nodeImages: [nodeImage('workers', V2)],
        autoscalingStrategies: [autoscaling('ca')],
      }),
      observed: (() => {
        const w = workers(2, V1);
        return observed({
          nodes: w.nodes,
          cloudGroups: [cloudGroup('workers', V2, w.instances), cloudGroup('spares', V2, [])],
          deployments: [deployment('cluster-autoscaler', 0, { [ANNOTATIONS.previousReplicas]: '3' })],
        });
      })(),
      now: at(0),
      check: (p) =>
        assert.deepEqual(
          bare(p).filter((a) => a.kind === 'scaleDeployment'),
          [{ kind: 'scaleDeployment', spec: AS, namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 3 }],
        ),
    },
    {
      name: 'an unobserved group that says autoscaling: false does not keep the autoscaler paused',
      desired: desired({
        scalingGroups: [{ ...sg, autoscaling: false }],
        nodeImages: [nodeImage('workers', V2)],
        autoscalingStrategies: [autoscaling('ca')],
      }),
      observed: observed({
        nodes: workers(2, V1).nodes,
        cloudGroups: [],
        deployments: [deployment('cluster-autoscaler', 0, { [ANNOTATIONS.previousReplicas]: '3' })],
      }),
      now: at(0),
      check: (p) =>
        assert.deepEqual(
          bare(p).filter((a) => a.kind === 'scaleDeployment'),
          [{ kind: 'scaleDeployment', spec: AS, namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 3 }],
        ),
    },
    {
      name: 'a remembered count that is not a number is reported, not guessed',
      desired: withAutoscaler(),
      observed: (() => {
        const w = workers(1, V2);
        return observed({
          nodes: w.nodes,
          cloudGroups: [cloudGroup('workers', V2, w.instances)],
          deployments: [deployment('cluster-autoscaler', 0, { [ANNOTATIONS.previousReplicas]: 'three' })],
        });
      })(),
      now: at(0),
      check: (p) => {
        assert.deepEqual(bare(p), []);
        assert.match(
          p.waits[0]?.reason ?? '',
          /previous-replicas="three" on deployment kube-system\/cluster-autoscaler is not a replica count/,
        );
      },
    },
  ]);
});
