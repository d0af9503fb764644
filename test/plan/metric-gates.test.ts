/**
 * The metric gates as tables, for every kind through the shared start gate: no reading yet,
 * Prometheus unreachable, an alert firing, a query past its threshold (hold and halt), and a
 * passing reading, each before a node starts and during a canary's soak. The readings are
 * written out as the observer would hand them over; the planner only reads them.
 */
import assert from 'node:assert/strict';
import { metricGatesKey, type MetricReading } from '../../src/observe/metrics.js';
import { plan } from '../../src/plan/index.js';
import type { PlanOptions } from '../../src/plan/options.js';
import type { Action, Plan, SpecStatus } from '../../src/plan/types.js';
import type { ObservedNode } from '../../src/observe/types.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { renderText } from '../../src/report/plan-render.js';
import type { Approval, DesiredState, MetricGates, NodeImage, RolloutPolicy } from '../../src/spec/model.js';
import { at, cloudGroup, desired, iso, node, nodeImage, observed, policy, scalingGroup, workers } from './fixtures.js';
import { V1, V2 } from './helpers.js';
import { nodeOp } from './nodeop/fixtures.js';

const NS = 'drydock-system';

const GATES: MetricGates = {
  prometheus: 'http://prometheus.monitoring:9090',
  alertmanager: 'http://alertmanager.monitoring:9093',
  timeoutSeconds: 5,
  onBreach: 'hold',
  alerts: [{ name: 'NodeDown', labels: { severity: 'page' } }],
  queries: [{ name: 'error-rate', query: 'sum(rate(errors[5m]))', op: 'above', value: 0.05 }],
};
const HALT: MetricGates = { ...GATES, onBreach: 'halt' };

const PASSING: MetricReading = { reachable: true, breaches: [] };
const FIRING: MetricReading = {
  reachable: true,
  breaches: [{ what: 'alert NodeDown{severity="page"}', value: 'firing', since: iso(-120) }],
};
const PAST: MetricReading = {
  reachable: true,
  breaches: [{ what: 'query error-rate', value: '0.2 > 0.05', since: iso(-30) }],
};
const DOWN: MetricReading = {
  reachable: false,
  problem: 'Prometheus at http://prometheus.monitoring:9090 unreachable: fetch failed: connect ECONNREFUSED',
  since: iso(-45),
};

interface Kind {
  readonly label: string;
  /** The spec's name. */
  readonly spec: string;
  make(rollout: Partial<RolloutPolicy>): DesiredState;
  /** Three nodes to do, `done` of them done (done 60 s ago); `extra`: more plan options. */
  run(d: DesiredState, metrics: MetricReading | undefined, done?: number, extra?: PlanOptions): Plan;
}

const readings = (gates: MetricGates | undefined, r: MetricReading | undefined) =>
  gates === undefined || r === undefined ? {} : { metrics: { [metricGatesKey(gates)]: r } };

const inPlaceNode = (name: string, annotations: Record<string, string> = {}): ObservedNode => ({
  ...node(name, `sim://g/${name}`, { annotations, readySince: -3600 }),
  bootID: `boot-${name}`,
});

const KINDS: readonly Kind[] = [
  {
    label: 'NodeOp',
    spec: 'patch',
    make: (rollout) => desired({ nodeOps: [nodeOp('patch', { concurrency: 3, rollout: policy(rollout) })] }),
    run(d, r, done = 0, extra = {}) {
      const nodes = ['w-0', 'w-1', 'w-2'].map((name, i) =>
        inPlaceNode(name, i < done ? { 'nodeop.drydock.dev/patch': 'r1', [ANNOTATIONS.doneAt]: iso(-60) } : {}),
      );
      const gates = d.nodeOps[0]?.rollout.metricGates;
      return plan(d, observed({ nodes, ...readings(gates, r) }), at(0), { jobNamespace: NS, ...extra });
    },
  },
  {
    label: 'NodeImage inPlace',
    spec: 'edge',
    make: (rollout) => {
      const image: NodeImage = {
        ...nodeImage('edge', 'os:v2', { concurrency: 3, ...rollout }, 'e1'),
        strategy: 'inPlace',
      };
      return desired({ nodeImages: [image] });
    },
    run(d, r, done = 0, extra = {}) {
      const nodes = ['w-0', 'w-1', 'w-2'].map((name, i) =>
        inPlaceNode(name, i < done ? { [ANNOTATIONS.image]: 'os:v2', [ANNOTATIONS.doneAt]: iso(-60) } : {}),
      );
      const gates = d.nodeImages[0]?.rollout.metricGates;
      return plan(d, observed({ nodes, ...readings(gates, r) }), at(0), {
        jobNamespace: NS,
        rebootTimeoutSeconds: 600,
        ...extra,
      });
    },
  },
  {
    label: 'NodeImage replace',
    spec: 'workers',
    make: (rollout) =>
      desired({ scalingGroups: [scalingGroup('workers', 'workers')], nodeImages: [nodeImage('workers', V2, rollout)] }),
    run(d, r, done = 0, extra = {}) {
      assert.equal(done, 0, 'the replace table starts from nothing done');
      const w = workers(3, V1);
      const gates = d.nodeImages[0]?.rollout.metricGates;
      return plan(
        d,
        observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)], ...readings(gates, r) }),
        at(0),
        extra,
      );
    },
  },
];

const started = (p: Plan): string[] =>
  p.actions
    .filter(
      (a): a is Extract<Action, { kind: 'annotateNode' }> =>
        a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending',
    )
    .map((a) => a.node);

const waitOf = (p: Plan, code: string) => p.waits.find((w) => w.code === code);

for (const kind of KINDS) {
  describe(`metric gates: ${kind.label}`, () => {
    const table: {
      name: string;
      gates?: MetricGates;
      reading?: MetricReading;
      starts: boolean;
      code?: string;
      reason?: RegExp;
    }[] = [
      { name: 'no gates: a node starts', starts: true },
      { name: 'gates passing: a node starts', gates: GATES, reading: PASSING, starts: true },
      {
        name: 'gates not read yet: nothing starts',
        gates: GATES,
        starts: false,
        code: 'metrics',
        reason: /^Prometheus at http:\/\/prometheus\.monitoring:9090 not read yet/,
      },
      {
        name: 'Prometheus unreachable: a wait of its own, never a pass',
        gates: GATES,
        reading: DOWN,
        starts: false,
        code: 'metrics',
        reason:
          /^Prometheus at http:\/\/prometheus\.monitoring:9090 unreachable: fetch failed: connect ECONNREFUSED \(since 2026-03-02T09:59:15\.000Z\)/,
      },
      {
        name: 'an alert firing holds, naming the alert, its labels and since when',
        gates: GATES,
        reading: FIRING,
        starts: false,
        code: 'metrics',
        reason:
          /^metric gate breached: alert NodeDown\{severity="page"\} firing since 2026-03-02T09:58:00\.000Z; no new node starts until it clears$/,
      },
      {
        name: 'a query past its threshold holds, naming its value',
        gates: GATES,
        reading: PAST,
        starts: false,
        code: 'metrics',
        reason: /^metric gate breached: query error-rate 0\.2 > 0\.05 since 2026-03-02T09:59:30\.000Z/,
      },
      {
        name: 'onBreach halt: a breach halts',
        gates: HALT,
        reading: PAST,
        starts: false,
        code: 'halted',
        reason:
          /^rollout halted: metric gate breached: query error-rate 0\.2 > 0\.05 .*onBreach is halt; with no status branch to remember it, the halt lasts only while the breach does$/,
      },
      {
        name: 'onBreach halt: Prometheus unreachable holds, it does not halt',
        gates: HALT,
        reading: DOWN,
        starts: false,
        code: 'metrics',
      },
    ];
    for (const row of table) {
      it(row.name, () => {
        const p = kind.run(kind.make(row.gates !== undefined ? { metricGates: row.gates } : {}), row.reading);
        assert.equal(started(p).length > 0, row.starts, `started: ${started(p).join(', ')}`);
        if (row.code === undefined) {
          assert.equal(waitOf(p, 'metrics'), undefined);
          return;
        }
        const w = waitOf(p, row.code);
        assert.ok(w !== undefined, `a ${row.code} wait among ${p.waits.map((x) => x.code).join(', ')}`);
        if (row.reason !== undefined) assert.match(w.reason, row.reason);
      });
    }

    if (kind.label !== 'NodeImage replace') {
      it('a breach during the canary soak holds past the soak; clearing it lets the rest go', () => {
        const d = kind.make({ metricGates: GATES, canary: { nodes: 1, soakSeconds: 30 } });
        // The canary node was done 60 s ago: its 30 s soak is over.
        const held = kind.run(d, FIRING, 1);
        assert.deepEqual(started(held), []);
        assert.match(waitOf(held, 'metrics')?.reason ?? '', /alert NodeDown/);
        assert.deepEqual(started(kind.run(d, PASSING, 1)), ['w-1', 'w-2']);
      });
    }
  });
}

const PAST_HALT = {
  breach: 'query error-rate 0.2 > 0.05 since 2026-03-02T09:59:30.000Z',
  since: '2026-03-02T09:59:30.000Z',
};
const haltedSpec = (p: Plan): SpecStatus | undefined => p.specs.find((s) => s.metricHalt !== undefined);

for (const kind of KINDS) {
  describe(`metric gates, onBreach halt sticks: ${kind.label}`, () => {
    const d = kind.make({ metricGates: HALT });
    // Round one, with a status branch that holds nothing yet: the breach halts the spec.
    const first = kind.run(d, PAST, 0, { published: [] });
    const published = first.specs;

    it('a breach halts, and the wait and the status carry what breached and since when', () => {
      assert.deepEqual(started(first), []);
      const w = waitOf(first, 'halted');
      assert.deepEqual(w?.metricHalt, PAST_HALT);
      assert.match(w?.reason ?? '', /onBreach is halt; it stays halted after the breach clears: .*change the spec/);
      assert.deepEqual(haltedSpec(first)?.metricHalt, PAST_HALT);
    });

    it('the breach cleared, the status branch shows the halt at this revision: still halted', () => {
      const p = kind.run(d, PASSING, 0, { published });
      assert.deepEqual(started(p), []);
      assert.equal(
        waitOf(p, 'halted')?.reason,
        `rollout halted: metric gate breached: query error-rate 0.2 > 0.05 since 2026-03-02T09:59:30.000Z (halted since 2026-03-02T09:59:30.000Z); it stays halted after the breach clears: fix the cause, then merge approvals/${kind.spec}-resume.yaml (kind Approval, stage resume) or change the spec (any change makes a new revision) to resume`,
      );
      // Published again, the halt holds the round after too.
      assert.deepEqual(haltedSpec(p)?.metricHalt, PAST_HALT);
    });

    /** The Approval the halted wait asks for, as a person would merge it in `commit`. */
    const resumeApproval = (p: Plan, commit: string): Approval => {
      const wanted = waitOf(p, 'halted')?.approval;
      assert.ok(wanted !== undefined, 'the halted wait names the Approval that resumes it');
      assert.equal(wanted.stage, 'resume');
      assert.equal(wanted.path, `approvals/${kind.spec}-resume.yaml`);
      const { target } = wanted;
      return {
        kind: 'Approval',
        apiVersion: 'drydock.dev/v1alpha1',
        name: `${kind.spec}-resume`,
        revision: 'a-resume',
        source: { file: wanted.path, line: 1, column: 1 },
        target: { kind: target.kind, name: target.name },
        ...(target.image !== undefined ? { image: target.image } : { targetRevision: target.revision }),
        stage: 'resume',
        approvedBy: { name: 'Ada', email: 'ada@example.org', commit, at: '2024-01-01T00:00:00.000Z' },
      };
    };

    it('an Approval with stage resume merged after the halt began releases it once the breach cleared', () => {
      const held = kind.run(d, PASSING, 0, { published });
      const a = resumeApproval(held, 'c0ffee1');
      const p = kind.run({ ...d, approvals: [a] }, PASSING, 0, { published });
      assert.ok(started(p).length > 0, `waits: ${p.waits.map((w) => w.reason).join('; ')}`);
      assert.equal(waitOf(p, 'halted'), undefined);
      assert.equal(haltedSpec(p), undefined, 'the halt is no longer published');
    });

    it('merged while the breach goes on, a resume holds until it clears, then releases that halt', () => {
      const a = resumeApproval(kind.run(d, PASSING, 0, { published }), 'c0ffee1');
      const firing = kind.run({ ...d, approvals: [a] }, PAST, 0, { published });
      assert.deepEqual(started(firing), []);
      assert.deepEqual(waitOf(firing, 'halted')?.metricHalt, PAST_HALT, 'the same halt, not one that saw the approval');
      const cleared = kind.run({ ...d, approvals: [a] }, PASSING, 0, { published: firing.specs });
      assert.ok(started(cleared).length > 0, `waits: ${cleared.waits.map((w) => w.reason).join('; ')}`);
    });

    it('a breach that comes back after a resume halts again, and only a new resume releases it', () => {
      const a = resumeApproval(kind.run(d, PASSING, 0, { published }), 'c0ffee1');
      // The resumed rollout published no halt; the breach comes back.
      const again = kind.run({ ...d, approvals: [a] }, PAST, 0, { published: [] });
      assert.deepEqual(haltedSpec(again)?.metricHalt, { ...PAST_HALT, resumeSeen: 'c0ffee1' });
      const stillHeld = kind.run({ ...d, approvals: [a] }, PASSING, 0, { published: again.specs });
      assert.deepEqual(started(stillHeld), [], 'the approval in force when it halted does not release it');
      const b = resumeApproval(stillHeld, 'beef002');
      const released = kind.run({ ...d, approvals: [b] }, PASSING, 0, { published: again.specs });
      assert.ok(started(released).length > 0, `waits: ${released.waits.map((w) => w.reason).join('; ')}`);
    });

    it('a new revision of the spec releases it', () => {
      const older = published.map((s) => ({ ...s, revision: `${s.revision}-before` }));
      const p = kind.run(d, PASSING, 0, { published: older });
      assert.ok(started(p).length > 0, `waits: ${p.waits.map((w) => w.reason).join('; ')}`);
      assert.equal(waitOf(p, 'halted'), undefined);
      assert.equal(haltedSpec(p), undefined);
    });

    it('without a status branch, the halt ends when the breach clears', () => {
      const p = kind.run(d, PASSING);
      assert.ok(started(p).length > 0, `waits: ${p.waits.map((w) => w.reason).join('; ')}`);
      assert.equal(waitOf(p, 'halted'), undefined);
    });
  });
}

describe('metric gates: drydock plan', () => {
  it('shows each gate, its checks, the specs it holds and its reading', () => {
    const d = KINDS[0]?.make({ metricGates: GATES });
    assert.ok(d !== undefined);
    const p = KINDS[0]?.run(d, FIRING);
    assert.ok(p !== undefined);
    assert.deepEqual(p.metricGates, [
      {
        prometheus: 'http://prometheus.monitoring:9090',
        alertmanager: 'http://alertmanager.monitoring:9093',
        onBreach: 'hold',
        checks: ['alert NodeDown{severity="page"} firing', 'query error-rate (sum(rate(errors[5m]))) > 0.05'],
        specs: ['NodeOp/patch'],
        state: 'breached: alert NodeDown{severity="page"} firing since 2026-03-02T09:58:00.000Z',
      },
    ]);
    const text = renderText(p, { at: iso(0) });
    assert.match(
      text,
      /Metric gates:\n {2}Prometheus at http:\/\/prometheus\.monitoring:9090, silences from Alertmanager at http:\/\/alertmanager\.monitoring:9093; on breach hold; for NodeOp\/patch: breached: .*\n {4}- alert NodeDown\{severity="page"\} firing\n {4}- query error-rate/,
    );
  });

  it('a plan without gates has no metricGates', () => {
    const d = KINDS[0]?.make({});
    assert.ok(d !== undefined);
    assert.equal(KINDS[0]?.run(d, undefined).metricGates, undefined);
  });
});
