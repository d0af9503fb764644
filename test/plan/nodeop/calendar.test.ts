/**
 * One calendar for every kind, as tables: the window, the approvals, the canary wave and the
 * health gate decide when an in-place node (NodeOp, NodeOpUpgrade, NodeImage inPlace) starts
 * and when it is done, by the same rules as a replace rollout.
 */
import assert from 'node:assert/strict';
import { plan } from '../../../src/plan/index.js';
import type { Action, Plan, SpecRef } from '../../../src/plan/types.js';
import type { ObservedJob, ObservedNode, ObservedPod } from '../../../src/observe/types.js';
import { ANNOTATIONS } from '../../../src/protocol/keys.js';
import type { Approval, DesiredState, NodeImage, NodeOp, RolloutPolicy } from '../../../src/spec/model.js';
import { approval, at, desired, iso, maintenanceWindow, node, nodeImage, observed, pod, policy } from '../fixtures.js';
import { nodeOp } from './fixtures.js';
import { nodeSteps } from '../helpers.js';

const NS = 'drydock-system';

interface Kind {
  readonly label: string;
  readonly spec: SpecRef;
  /** The lock value a node started by it carries. */
  readonly lock: string;
  /** The annotation a done node carries. */
  readonly record: Record<string, string>;
  /** Desired state with this kind's spec under the given rollout policy (and approvals). */
  make(rollout: Partial<RolloutPolicy>, parts?: Partial<DesiredState>): DesiredState;
  /** An approval naming this spec as it is now (`right`) or another image/revision. */
  approval(stage: Approval['stage'], right: boolean): Approval;
}

function opOf(name: string, rollout: Partial<RolloutPolicy>, o: Partial<NodeOp> = {}): NodeOp {
  // A NodeOp's own stopOnFailure field (Kairos') is its policy's.
  return nodeOp(name, {
    concurrency: 3,
    stopOnFailure: rollout.stopOnFailure ?? false,
    rollout: policy(rollout),
    ...o,
  });
}

const approvalFor = (target: SpecRef, stage: Approval['stage'], o: Partial<Approval>): Approval => ({
  ...approval(`${target.name}-${stage}`, target.name, '', stage),
  target,
  image: undefined,
  approvedBy: { name: 'Ada Approver', email: 'ada@example.com', commit: 'c0ffee', at: iso(-60) },
  ...o,
});

const KINDS: readonly Kind[] = [
  {
    label: 'NodeOp',
    spec: { kind: 'NodeOp', name: 'patch' },
    lock: 'NodeOp/patch@r1',
    record: { 'nodeop.drydock.dev/patch': 'r1' },
    make: (rollout, parts = {}) => desired({ nodeOps: [opOf('patch', rollout)], ...parts }),
    approval: (stage, right) =>
      approvalFor({ kind: 'NodeOp', name: 'patch' }, stage, { targetRevision: right ? 'r1' : 'r0' }),
  },
  {
    label: 'NodeOpUpgrade',
    spec: { kind: 'NodeOpUpgrade', name: 'os' },
    lock: 'NodeOp/os@r1',
    record: { 'nodeop.drydock.dev/os': 'r1' },
    make: (rollout, parts = {}) =>
      desired({
        nodeOps: [opOf('os', rollout, { generatedBy: 'NodeOpUpgrade/os', image: 'os-upgrade:v2' })],
        ...parts,
      }),
    approval: (stage, right) =>
      approvalFor({ kind: 'NodeOpUpgrade', name: 'os' }, stage, { image: right ? 'os-upgrade:v2' : 'os-upgrade:v1' }),
  },
  {
    label: 'NodeImage inPlace',
    spec: { kind: 'NodeImage', name: 'edge' },
    lock: 'NodeImage/edge@e1',
    record: { [ANNOTATIONS.image]: 'os:v2' },
    make: (rollout, parts = {}) => {
      const image: NodeImage = {
        ...nodeImage('edge', 'os:v2', { concurrency: 3, ...rollout }, 'e1'),
        strategy: 'inPlace',
      };
      return desired({ nodeImages: [image], ...parts });
    },
    approval: (stage, right) =>
      approvalFor({ kind: 'NodeImage', name: 'edge' }, stage, { image: right ? 'os:v2' : 'os:v1' }),
  },
];

function n(name: string, annotations: Record<string, string> = {}, o: Partial<ObservedNode> = {}): ObservedNode {
  return { ...node(name, `sim://g/${name}`, { annotations, readySince: -3600 }), bootID: `boot-${name}`, ...o };
}

function run(d: DesiredState, nodes: ObservedNode[], now = 0, o: { pods?: ObservedPod[]; jobs?: ObservedJob[] } = {}) {
  const obs = observed({ nodes, pods: o.pods ?? [], jobs: o.jobs ?? [] });
  return plan(d, obs, at(now), { jobNamespace: NS, rebootTimeoutSeconds: 600 });
}

const started = (p: Plan): string[] =>
  p.actions
    .filter(
      (a): a is Extract<Action, { kind: 'annotateNode' }> =>
        a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending',
    )
    .map((a) => a.node);

const statusOf = (p: Plan, spec: SpecRef) =>
  p.specs.find((s) => s.spec.kind === spec.kind && s.spec.name === spec.name);

// T0 is 2026-03-02 10:00 UTC = 11:00 Europe/Berlin.
const nightly = maintenanceWindow('nightly', 'Europe/Berlin', [{ cron: '0 22 * * *', durationSeconds: 7200 }]);
const always = maintenanceWindow(
  'always',
  'UTC',
  [{ cron: '* * * * *', durationSeconds: 120 }],
  [{ start: iso(-60), end: iso(3600), reason: 'release freeze' }],
);

for (const kind of KINDS) {
  describe(`calendar: ${kind.label}`, () => {
    const held = (phase: string, extra: Record<string, string> = {}) => ({
      [ANNOTATIONS.operation]: kind.lock,
      [ANNOTATIONS.phase]: phase,
      [ANNOTATIONS.phaseSince]: iso(-10),
      ...extra,
    });

    it('outside its window no node starts, a node in flight moves on, and the wait names the opening in zone and UTC', () => {
      const d = kind.make({ window: 'nightly' }, { maintenanceWindows: [nightly] });
      const p = run(d, [n('w-0', held('Updating')), n('w-1'), n('w-2')]);
      assert.deepEqual(started(p), []);
      assert.ok(
        p.actions.some((a) => a.kind === 'createNodeJob' && a.node === 'w-0'),
        'the node in flight goes on',
      );
      const w = p.waits.find((x) => x.code === 'window');
      assert.equal(
        w?.reason,
        'waiting for window nightly, opens 2026-03-02 22:00 Europe/Berlin (2026-03-02 21:00 UTC)',
      );
      assert.equal(w?.until, '2026-03-02T21:00:00.000Z');
      assert.equal(statusOf(p, kind.spec)?.waitingFor, w?.reason);
      assert.deepEqual(started(run(d, [n('w-1')], 11 * 3600)), ['w-1'], 'at 22:00 Berlin it starts');
    });

    it('an exclusion wins over a schedule that is open', () => {
      const d = kind.make({ window: 'always' }, { maintenanceWindows: [always] });
      const p = run(d, [n('w-0')]);
      assert.deepEqual(started(p), []);
      assert.equal(p.waits.find((x) => x.code === 'window')?.until, iso(3600));
    });

    it('a start approval counts only for the exact image or revision; the approver is in status', () => {
      const wrong = run(
        kind.make({ approval: { required: 'start' } }, { approvals: [kind.approval('start', false)] }),
        [n('w-0')],
      );
      assert.deepEqual(started(wrong), []);
      assert.match(
        wrong.waits.find((w) => w.code === 'approval')?.reason ?? '',
        /approval needed \(before the first node\)/,
      );
      const right = run(kind.make({ approval: { required: 'start' } }, { approvals: [kind.approval('start', true)] }), [
        n('w-0'),
      ]);
      assert.deepEqual(started(right), ['w-0']);
      assert.equal(statusOf(right, kind.spec)?.approvals?.[0]?.approvedBy?.name, 'Ada Approver');
    });

    it('the canary wave starts alone, soaks, then waits for the afterCanary approval of this exact spec', () => {
      const rollout = { canary: { nodes: 1, soakSeconds: 300 }, approval: { required: 'afterCanary' as const } };
      assert.deepEqual(started(run(kind.make(rollout), [n('w-0'), n('w-1'), n('w-2')])), ['w-0'], 'one canary');
      const canaryDone = n('w-0', { ...kind.record, [ANNOTATIONS.doneAt]: iso(-60) });
      const soaking = run(kind.make(rollout), [canaryDone, n('w-1'), n('w-2')]);
      assert.deepEqual(started(soaking), []);
      const soak = soaking.waits.find((w) => w.code === 'soak');
      assert.equal(soak?.until, iso(240));
      const afterSoak = (approvals: Approval[]) =>
        run(kind.make(rollout, { approvals }), [canaryDone, n('w-1'), n('w-2')], 300);
      const unapproved = afterSoak([kind.approval('afterCanary', false)]);
      assert.deepEqual(started(unapproved), []);
      assert.match(unapproved.waits.find((w) => w.code === 'approval')?.reason ?? '', /after the canary wave/);
      assert.deepEqual(started(afterSoak([kind.approval('afterCanary', true)])), ['w-1', 'w-2']);
    });

    it('health gate: a node is done only when Ready with its pods and its evicted workloads are back; a timeout fails it and stopOnFailure halts', () => {
      const evicted = { [ANNOTATIONS.evicted]: 'Deployment/apps/web' };
      const verifying = n('w-0', held('Verifying', evicted));
      const web = (ready: number) => [
        { kind: 'Deployment' as const, namespace: 'apps', name: 'web', desired: 3, ready },
      ];
      const gate = { healthGate: { minReadySeconds: 1, timeoutSeconds: 60 }, stopOnFailure: true };
      const short = plan(kind.make(gate), observed({ nodes: [verifying], workloads: web(2) }), at(0), {
        jobNamespace: NS,
      });
      assert.deepEqual(nodeSteps(short).actions, []);
      assert.equal(
        short.waits.find((w) => w.code === 'health')?.reason,
        'node w-0: health gate: Deployment apps/web has 2/3 ready replicas',
      );
      const podDown = run(kind.make(gate), [verifying], 0, { pods: [pod('apps', 'db-0', 'w-0', { ready: false })] });
      assert.match(podDown.waits.find((w) => w.code === 'health')?.reason ?? '', /pod apps\/db-0 is not Ready/);
      const back = plan(kind.make(gate), observed({ nodes: [verifying], workloads: web(3) }), at(0), {
        jobNamespace: NS,
      });
      const done = back.actions.find((a) => a.kind === 'annotateNode');
      assert.equal(done?.kind === 'annotateNode' ? done.annotations[ANNOTATIONS.operation] : undefined, null);
      const late = plan(kind.make(gate), observed({ nodes: [verifying, n('w-1')], workloads: web(2) }), at(60), {
        jobNamespace: NS,
      });
      const failed = late.actions.find((a) => a.kind === 'annotateNode' && a.node === 'w-0');
      assert.equal(failed?.kind === 'annotateNode' ? failed.annotations[ANNOTATIONS.phase] : undefined, 'Failed');
      assert.match(
        failed?.kind === 'annotateNode' ? String(failed.annotations[ANNOTATIONS.reason]) : '',
        /did not pass the health gate within 60s \(Deployment apps\/web has 2\/3 ready replicas\)/,
      );
      const halted = run(kind.make(gate), [n('w-0', held('Failed', { [ANNOTATIONS.reason]: 'x' })), n('w-1')], 61);
      assert.deepEqual(started(halted), []);
      assert.equal(statusOf(halted, kind.spec)?.phase, 'Halted');
    });
  });
}

describe('calendar: a NodeImage inPlace leaving Git (or turning replace) releases its nodes', () => {
  const lock = {
    [ANNOTATIONS.operation]: 'NodeImage/edge@e1',
    [ANNOTATIONS.phase]: 'Updating',
    [ANNOTATIONS.phaseSince]: iso(-10),
    [ANNOTATIONS.job]: `${NS}/nodeimage-edge-w-0-e1`,
    [ANNOTATIONS.cordoned]: 'true',
  };
  const inFlight = n('w-0', lock, { unschedulable: true });
  const job = (state: 'running' | 'succeeded'): ObservedJob => ({
    namespace: NS,
    name: 'nodeimage-edge-w-0-e1',
    labels: {},
    succeeded: state === 'succeeded',
    failed: false,
    attempts: 1,
  });
  const asReplace = desired({ nodeImages: [nodeImage('edge', 'os:v3', {}, 'e2')] });

  for (const [label, d] of [
    ['removed', desired()],
    ['changed to replace', asReplace],
  ] as const) {
    it(`${label}: the running Job finishes first, then the node is uncordoned and its lock released`, () => {
      const running = run(d, [inFlight], 0, { jobs: [job('running')] });
      assert.deepEqual(running.actions, []);
      assert.ok(running.waits.some((w) => w.code === 'job' && w.node === 'w-0'));
      const finished = run(d, [inFlight], 0, { jobs: [job('succeeded')] });
      assert.deepEqual(
        finished.actions.map((a) => `${a.kind} ${'node' in a ? a.node : ''}`),
        ['uncordon w-0', 'annotateNode w-0', 'deleteJob w-0'],
      );
      const release = finished.actions[1];
      assert.equal(release?.kind === 'annotateNode' ? release.annotations[ANNOTATIONS.operation] : undefined, null);
    });
  }
});

describe('calendar: the forecast covers in-place kinds', () => {
  it('a NodeOp forecasts its canary and waves, the first at the window opening', () => {
    const op = nodeOp('patch', {
      concurrency: 1,
      rollout: policy({ window: 'nightly', canary: { nodes: 1, soakSeconds: 60 } }),
    });
    const p = run(desired({ nodeOps: [op], maintenanceWindows: [nightly] }), [n('w-0'), n('w-1'), n('w-2')]);
    assert.deepEqual(
      p.forecast.waves.map((w) => [w.label, w.nodes, w.start]),
      [
        ['canary', ['w-0'], '2026-03-02T21:00:00.000Z'],
        ['wave 2', ['w-1'], p.forecast.waves[1]?.start],
        ['wave 3', ['w-2'], p.forecast.waves[2]?.start],
      ],
    );
    assert.ok((p.forecast.waves[1]?.start ?? '') > (p.forecast.waves[0]?.end ?? ''), 'the soak comes between');
  });
});
