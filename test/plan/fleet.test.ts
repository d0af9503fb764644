import { strict as assert } from 'node:assert';
import {
  admit,
  memberState,
  stageApprovalPath,
  stagePath,
  type FleetInput,
  type FleetPlan,
  type MemberReport,
  type StageApproval,
} from '../../src/plan/fleet.js';
import { plan, type Plan } from '../../src/plan/index.js';
import type { FleetRound } from '../../src/plan/fleet.js';
import type { SpecPhase } from '../../src/plan/types.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { at, cloudGroup, desired, node, nodeImage, observed, scalingGroup, workers } from './fixtures.js';
import { nodeOp } from './nodeop/fixtures.js';
import { V1, V2 } from './helpers.js';

const started = (p: Plan): string[] =>
  p.actions.flatMap((a) =>
    a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending' ? [a.node] : [],
  );

const MIN = 60_000;
const T0 = Date.parse('2026-03-01T10:00:00Z');
const REV = '0123456789abcdef';
const OLD = 'fedcba9876543210';
const worker = { kind: 'NodeImage', name: 'worker' } as const;

// Three stages: one canary cluster soaking 30 minutes and wanting an approval, two clusters of
// which one may fail, then production.
const fleet: FleetPlan = {
  staleAfterMs: 10 * MIN,
  stages: [
    { name: 'canary', clusters: ['dev'], soakMs: 30 * MIN, approval: true, tolerate: 0 },
    { name: 'early', clusters: ['eu-1', 'eu-2'], soakMs: 0, approval: false, tolerate: 1 },
    { name: 'prod', clusters: ['us-1'], soakMs: 0, approval: false, tolerate: 0 },
  ],
};

/** A member that wrote its branch `writtenAgo` ms before T0 and reports the spec as given. */
function member(phase: SpecPhase, revision = REV, completeAt = T0 - 60 * MIN, writtenAgo = MIN): MemberReport {
  return {
    writtenAt: T0 - writtenAgo,
    specs: new Map([
      ['NodeImage/worker', { revision, phase, ...(phase === 'Complete' ? { completeSince: completeAt } : {}) }],
    ]),
  };
}

const approvedCanary: StageApproval = { stage: 'canary', target: worker, revision: REV };

function input(reports: Record<string, MemberReport>, approvals: StageApproval[] = [approvedCanary]): FleetInput {
  return {
    fleet,
    change: { spec: worker, revision: REV },
    reports: new Map(Object.entries(reports)),
    approvals,
    now: T0,
  };
}

describe('fleet stage admission', () => {
  it('opens the first stage at once: nothing comes before it', () => {
    assert.deepEqual(admit(input({}), 'dev'), { open: true });
  });

  it('opens the second stage once the first reports the revision Complete, soaked and approved', () => {
    assert.deepEqual(admit(input({ dev: member('Complete') }), 'eu-1'), { open: true });
  });

  it('table: what holds a cluster of a later stage', () => {
    const cases: {
      name: string;
      reports: Record<string, MemberReport>;
      approvals?: StageApproval[];
      cluster: string;
      stage: string;
      waitsFor?: string;
      until?: number;
      says: RegExp;
    }[] = [
      {
        name: 'soak not passed: Complete 10 minutes ago, soak 30 minutes',
        reports: { dev: member('Complete', REV, T0 - 10 * MIN) },
        cluster: 'eu-1',
        stage: 'canary',
        until: T0 + 20 * MIN,
        says: /stage canary soaks NodeImage\/worker revision 0123456789abcdef until 2026-03-01T10:20:00.000Z/,
      },
      {
        name: 'the earlier cluster still reports the old revision',
        reports: { dev: member('Complete', OLD) },
        cluster: 'eu-1',
        stage: 'canary',
        waitsFor: 'dev',
        says: /waits for cluster dev \(stage canary\) to report NodeImage\/worker revision 0123456789abcdef Complete/,
      },
      {
        name: 'the earlier cluster is still progressing',
        reports: { dev: member('Progressing') },
        cluster: 'eu-1',
        stage: 'canary',
        waitsFor: 'dev',
        says: /waits for cluster dev/,
      },
      {
        name: 'an approval for another revision does not count',
        reports: { dev: member('Complete') },
        approvals: [{ stage: 'canary', target: worker, revision: OLD }],
        cluster: 'eu-1',
        stage: 'canary',
        says: /merge fleet\/approvals\/canary-worker\.yaml \(kind FleetApproval, stage canary, target NodeImage\/worker, revision 0123456789abcdef\)/,
      },
      {
        name: 'an approval for another stage does not count',
        reports: { dev: member('Complete') },
        approvals: [{ stage: 'early', target: worker, revision: REV }],
        cluster: 'eu-1',
        stage: 'canary',
        says: /approval needed after stage canary/,
      },
      {
        name: 'a failed member beyond the tolerance holds every later stage',
        reports: { dev: member('Complete'), 'eu-1': member('Failed'), 'eu-2': member('Halted') },
        cluster: 'us-1',
        stage: 'early',
        says: /stage early is beyond its tolerance of 1 .*failed in eu-1, eu-2.*every later stage is held/,
      },
      {
        name: 'a stale cluster is unreachable, not done: with a failed one it is beyond the tolerance',
        reports: {
          dev: member('Complete'),
          'eu-1': member('Failed'),
          'eu-2': member('Complete', REV, T0 - 60 * MIN, 11 * MIN),
        },
        cluster: 'us-1',
        stage: 'early',
        says: /failed in eu-1; unreachable: eu-2/,
      },
      {
        name: 'a stale first stage holds the second even though its last report said Complete',
        reports: { dev: member('Complete', REV, T0 - 60 * MIN, 11 * MIN) },
        cluster: 'eu-1',
        stage: 'canary',
        says: /stage canary is beyond its tolerance of 0 .*unreachable: dev/,
      },
      {
        name: 'a cluster that never wrote its branch is unreachable',
        reports: {},
        cluster: 'eu-2',
        stage: 'canary',
        says: /unreachable: dev/,
      },
      {
        name: 'a failed member within the tolerance: the rest must still be done',
        reports: { dev: member('Complete'), 'eu-1': member('Failed'), 'eu-2': member('Progressing') },
        cluster: 'us-1',
        stage: 'early',
        waitsFor: 'eu-2',
        says: /waits for cluster eu-2 \(stage early\)/,
      },
    ];
    for (const c of cases) {
      const got = admit(input(c.reports, c.approvals), c.cluster);
      assert.equal(got.open, false, c.name);
      if (got.open) continue;
      assert.equal(got.stage, c.stage, c.name);
      assert.equal(got.cluster, c.waitsFor, c.name);
      assert.equal(got.until, c.until, c.name);
      assert.match(got.reason, c.says, c.name);
    }
  });

  it('a failed member within the tolerance lets the next stage go on', () => {
    const reports = { dev: member('Complete'), 'eu-1': member('Failed'), 'eu-2': member('Complete') };
    assert.deepEqual(admit(input(reports), 'us-1'), { open: true });
  });

  it('an unreachable member within the tolerance lets the next stage go on', () => {
    const reports = { dev: member('Complete'), 'eu-2': member('Complete') };
    assert.deepEqual(admit(input(reports), 'us-1'), { open: true });
  });

  it('soaks from the last member of a stage to report Complete', () => {
    const soaked: FleetPlan = { ...fleet, stages: fleet.stages.map((s) => ({ ...s, soakMs: 30 * MIN })) };
    const reports = new Map([
      ['dev', member('Complete')],
      ['eu-1', member('Complete', REV, T0 - 50 * MIN)],
      ['eu-2', member('Complete', REV, T0 - 5 * MIN)],
    ]);
    const got = admit({ ...input({}), fleet: soaked, reports }, 'us-1');
    assert.equal(got.open ? undefined : got.until, T0 + 25 * MIN);
  });

  it('leaves out a member that does not carry the change (its folder replaces the spec)', () => {
    const reports = { dev: member('Complete'), 'eu-1': member('Complete', OLD), 'eu-2': member('Complete') };
    assert.equal(admit(input(reports), 'us-1').open, false);
    assert.deepEqual(admit({ ...input(reports), skip: new Set(['eu-1']) }, 'us-1'), { open: true });
  });

  it('a cluster in no stage is not ordered', () => {
    assert.deepEqual(admit(input({}), 'lab'), { open: true });
  });

  it('states a member: stale before done, the revision before the phase', () => {
    const change = { spec: worker, revision: REV };
    assert.equal(memberState(undefined, change, 10 * MIN, T0), 'unreachable');
    assert.equal(memberState(member('Complete', REV, T0, 11 * MIN), change, 10 * MIN, T0), 'unreachable');
    assert.equal(memberState(member('Complete', REV, T0, 9 * MIN), change, 10 * MIN, T0), 'done');
    assert.equal(memberState(member('Failed', OLD), change, 10 * MIN, T0), 'pending');
    assert.equal(memberState(member('Failed'), change, 10 * MIN, T0), 'failed');
    assert.equal(stageApprovalPath('canary', worker), 'fleet/approvals/canary-worker.yaml');
  });
});

describe('plan: the fleet start gate', () => {
  const sg = scalingGroup('workers', 'workers');
  const image = nodeImage('workers', V2);
  const want = desired({ scalingGroups: [sg], nodeImages: [image] });
  const w = workers(2, V1);
  const seen = observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
  const now = at(0);
  const round = (reports: Record<string, MemberReport>, ownFiles: Record<string, string[]> = {}): FleetRound => ({
    cluster: 'prod',
    fleet: {
      staleAfterMs: 10 * MIN,
      stages: [
        { name: 'canary', clusters: ['dev'], soakMs: 30 * MIN, approval: false, tolerate: 0 },
        { name: 'main', clusters: ['prod'], soakMs: 0, approval: false, tolerate: 0 },
      ],
    },
    reports: new Map(Object.entries(reports)),
    approvals: [],
    ownFiles: new Map(Object.entries(ownFiles).map(([c, f]) => [c, new Set(f)])),
  });
  const dev = (completeAgo: number): MemberReport => ({
    writtenAt: now.getTime() - MIN,
    specs: new Map([
      [
        'NodeImage/workers',
        { revision: image.revision, phase: 'Complete', completeSince: now.getTime() - completeAgo },
      ],
    ]),
  });

  it('holds a shared image until the earlier stage soaked it, with code fleet and until when', () => {
    const p = plan(want, seen, now, { fleet: round({ dev: dev(10 * MIN) }) });
    assert.deepEqual(started(p), []);
    const wait = p.waits.find((x) => x.code === 'fleet');
    assert.equal(wait?.until, new Date(now.getTime() + 20 * MIN).toISOString());
    assert.match(
      wait?.reason ?? '',
      /stage canary soaks NodeImage\/workers revision workers-img:v2 until 2026-03-02T10:20:00.000Z/,
    );
  });

  it('while held, the group keeps booting the image it had (a scale-up gets no image the earlier stages have not passed), and status says Waiting for the hold, counting the nodes', () => {
    const before = observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V1, w.instances)] });
    const p = plan(want, before, now, { fleet: round({ dev: dev(10 * MIN) }) });
    assert.deepEqual(
      p.actions.map((a) => a.kind),
      [],
    );
    assert.ok(
      p.notes.some((n) =>
        /ScalingGroup workers: new instances keep .* until the earlier stages have passed it/.test(n.text),
      ),
    );
    const s = p.specs.find((x) => x.spec.kind === 'NodeImage');
    assert.equal(s?.phase, 'Waiting');
    assert.deepEqual(s?.progress, { done: 0, total: 2 });
    assert.match(s?.waitingFor ?? '', /^fleet: stage canary soaks NodeImage\/workers/);
  });

  it('the round that sets the group image once the soak has passed is Progressing, counting the nodes', () => {
    const before = observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V1, w.instances)] });
    const p = plan(want, before, now, { fleet: round({ dev: dev(31 * MIN) }) });
    // The rollout starts: its nodes are marked as drained later (plan/drain-pending.ts).
    assert.deepEqual(
      p.actions.map((a) => a.kind),
      ['setGroupImage', 'markDrainPending', 'markDrainPending'],
    );
    const s = p.specs.find((x) => x.spec.kind === 'NodeImage');
    assert.equal(s?.phase, 'Progressing');
    assert.deepEqual(s?.progress, { done: 0, total: 2 });
  });

  it('starts once the soak has passed', () => {
    const p = plan(want, seen, now, { fleet: round({ dev: dev(31 * MIN) }) });
    assert.equal(started(p).length > 0, true);
    assert.equal(
      p.waits.some((x) => x.code === 'fleet'),
      false,
    );
  });

  it("does not order a spec whose file comes from the cluster's own folder", () => {
    const own = desired({
      scalingGroups: [sg],
      nodeImages: [{ ...image, source: { file: 'clusters/prod/images/workers.yaml', line: 1, column: 1 } }],
    });
    const p = plan(own, seen, now, { fleet: round({}) });
    assert.equal(started(p).length > 0, true);
  });

  it('does not wait for an earlier cluster whose own folder replaces the file', () => {
    const p = plan(want, seen, now, { fleet: round({}, { dev: [image.source.file] }) });
    assert.equal(started(p).length > 0, true);
  });
});

describe('fleet stage path of a pull request', () => {
  it('gives each stage its earliest start: the soaks before it, from the merge', () => {
    const path = stagePath(fleet, worker, new Set(), T0);
    assert.deepEqual(
      path.map((p) => [p.stage, p.clusters, p.earliest - T0, p.approvalPath]),
      [
        ['canary', ['dev'], 0, 'fleet/approvals/canary-worker.yaml'],
        ['early', ['eu-1', 'eu-2'], 30 * MIN, undefined],
        ['prod', ['us-1'], 30 * MIN, undefined],
      ],
    );
  });

  it('leaves out the clusters, and the stages, that replace the spec', () => {
    const path = stagePath(fleet, worker, new Set(['dev', 'eu-2']), T0);
    assert.deepEqual(
      path.map((p) => [p.stage, p.clusters, p.earliest - T0]),
      [
        ['early', ['eu-1'], 0],
        ['prod', ['us-1'], 0],
      ],
    );
  });
});

describe('plan: the fleet start gate holds a NodeOp too', () => {
  const op = nodeOp('patch');
  const want = desired({ nodeOps: [op] });
  const seen = observed({ nodes: [{ ...node('worker-0', 'sim://g/worker-0'), bootID: 'boot-0' }] });
  const now = at(0);
  const round = (reports: Record<string, MemberReport>): FleetRound => ({
    cluster: 'prod',
    fleet: {
      staleAfterMs: 10 * MIN,
      stages: [
        { name: 'canary', clusters: ['dev'], soakMs: 0, approval: false, tolerate: 0 },
        { name: 'main', clusters: ['prod'], soakMs: 0, approval: false, tolerate: 0 },
      ],
    },
    reports: new Map(Object.entries(reports)),
    approvals: [],
    ownFiles: new Map(),
  });
  const devSays = (revision: string): MemberReport => ({
    writtenAt: now.getTime() - MIN,
    specs: new Map([['NodeOp/patch', { revision, phase: 'Complete', completeSince: now.getTime() - MIN }]]),
  });
  const jobs = (p: Plan): number => p.actions.filter((a) => a.kind === 'annotateNode').length;

  it('waits for the earlier cluster to report its revision, then goes', () => {
    const held = plan(want, seen, now, { fleet: round({ dev: devSays('r0') }) });
    assert.match(
      held.waits.find((w) => w.code === 'fleet')?.reason ?? '',
      /waits for cluster dev .*NodeOp\/patch revision r1/,
    );
    assert.equal(jobs(held), 0);
    const going = plan(want, seen, now, { fleet: round({ dev: devSays('r1') }) });
    assert.equal(
      going.waits.some((w) => w.code === 'fleet'),
      false,
    );
    assert.ok(jobs(going) > 0, JSON.stringify(going.waits));
  });
});
