/**
 * The forecast's per-node time (src/plan/pace.ts) and the waves it gives: observed nodes of the
 * same spec first, then of the same kind of step, then the kind's default from the policy.
 * Expected times are worked out by hand from the defaults the module documents (boot and join
 * 150 s, drain 60 s, Job 60 s, reboot 120 s).
 */
import { strict as assert } from 'node:assert';
import { plan } from '../../src/plan/index.js';
import {
  describePace,
  nodeOpDefault,
  paceOf,
  replaceDefault,
  type NodeTiming,
  type PaceKind,
} from '../../src/plan/pace.js';
import type { SpecRef } from '../../src/plan/types.js';
import type { RolloutPolicy } from '../../src/spec/model.js';
import {
  at,
  cloudGroup,
  config,
  desired,
  iso,
  maintenanceWindow,
  nodeImage,
  observed,
  policy,
  scalingGroup,
  workers,
} from './fixtures.js';
import { nodeOp } from './nodeop/fixtures.js';
import { V1, V2 } from './helpers.js';

const WORKERS: SpecRef = { kind: 'NodeImage', name: 'workers' };
const OTHER: SpecRef = { kind: 'NodeImage', name: 'gpu' };

/** Observed nodes of `spec`, one per entry of `seconds`, done a minute apart (the last newest). */
const timings = (spec: SpecRef, kind: PaceKind, seconds: readonly number[]): NodeTiming[] =>
  seconds.map((s, i) => ({ spec, kind, node: `${spec.name}-${i}`, doneAt: iso(-3600 + 60 * i), seconds: s }));

describe('forecast pace: the per-node time', () => {
  const replace = { kind: 'replace' as const, defaultSeconds: 210 };
  const cases: Array<[string, readonly NodeTiming[], number, string]> = [
    ['nothing observed: the default', [], 210, '3m 30s per node, default, no observations'],
    [
      "the median of the spec's own nodes (odd count)",
      timings(WORKERS, 'replace', [40, 90, 50]),
      50,
      '50s per node, from 3 observed nodes of this spec',
    ],
    [
      'the median of an even count is the mean of the middle two, rounded',
      timings(WORKERS, 'replace', [40, 50, 61, 90]),
      56,
      '56s per node, from 4 observed nodes of this spec',
    ],
    [
      "the spec's own nodes win over another spec's",
      [...timings(WORKERS, 'replace', [100]), ...timings(OTHER, 'replace', [10, 10, 10])],
      100,
      '1m 40s per node, from 1 observed node of this spec',
    ],
    [
      'without its own, the same kind of step on another spec',
      timings(OTHER, 'replace', [20, 30, 70]),
      30,
      '30s per node, from 3 observed nodes of other replacements',
    ],
    [
      'another kind of step is not counted',
      timings(OTHER, 'nodeOp', [5, 5, 5]),
      210,
      '3m 30s per node, default, no observations',
    ],
  ];
  for (const [name, observedNodes, seconds, words] of cases) {
    it(name, () => {
      const p = paceOf(WORKERS, replace, observedNodes);
      assert.equal(p.perNodeSeconds, seconds);
      assert.equal(describePace(p), words);
    });
  }

  it('only the 25 most recent nodes count', () => {
    // 30 nodes: the five oldest took 1000 s, the 25 newest 20 s.
    const old = timings(WORKERS, 'replace', [1000, 1000, 1000, 1000, 1000, ...Array<number>(25).fill(20)]);
    const p = paceOf(WORKERS, replace, old);
    assert.equal(p.perNodeSeconds, 20);
    assert.equal(p.observed, 25);
  });

  it('defaults from the policy: replace is boot and join, health gate and drain', () => {
    const drainOff = { ...policy().drain, enabled: false };
    const rows: Array<[Partial<RolloutPolicy>, number]> = [
      [{}, 150 + 60],
      [{ healthGate: { minReadySeconds: 30 } }, 150 + 30 + 60],
      [{ drain: drainOff }, 150],
    ];
    for (const [overrides, seconds] of rows) assert.equal(replaceDefault(policy(overrides)), seconds);
  });

  it('defaults from the policy: a node operation is its drain when cordoned, the Job, the reboot and the health gate', () => {
    const on = policy().drain;
    const off = { ...on, enabled: false };
    const rows: Array<[Parameters<typeof nodeOpDefault>[0], number]> = [
      [{ cordon: false, drain: on, reboot: false, minReadySeconds: 0 }, 60],
      [{ cordon: true, drain: on, reboot: false, minReadySeconds: 0 }, 60 + 60],
      [{ cordon: true, drain: off, reboot: true, minReadySeconds: 0 }, 60 + 120],
      [{ cordon: true, drain: on, reboot: true, minReadySeconds: 15 }, 60 + 60 + 120 + 15],
    ];
    for (const [o, seconds] of rows) assert.equal(nodeOpDefault(o), seconds);
  });
});

describe('forecast pace: the waves it gives', () => {
  const sg = scalingGroup('workers', 'workers');
  const world = (n: number) => {
    const w = workers(n, V1);
    return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
  };
  const forecast = (
    rollout: Partial<RolloutPolicy>,
    n: number,
    observedNodes: readonly NodeTiming[],
    parts: Parameters<typeof desired>[0] = {},
    now = at(0),
  ) =>
    plan(desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, rollout)], ...parts }), world(n), now, {
      observedNodes,
    }).forecast;
  const spans = (f: ReturnType<typeof forecast>) => f.waves.map((w) => [w.label, w.nodes.length, w.start, w.end]);

  it('observed nodes of the spec: waves of maxSurge, each the median long, and the plan says so', () => {
    const f = forecast({ maxSurge: 2, maxUnavailable: 2 }, 5, timings(WORKERS, 'replace', [30, 40, 50]));
    assert.deepEqual(spans(f), [
      ['wave 1', 2, iso(0), iso(40)],
      ['wave 2', 2, iso(40), iso(80)],
      ['wave 3', 1, iso(80), iso(120)],
    ]);
    assert.equal(f.eta, iso(120));
    assert.deepEqual(f.paces, [
      { spec: WORKERS, kind: 'replace', perNodeSeconds: 40, basis: 'observed', observed: 3, sameSpec: true },
    ]);
  });

  it('nothing observed: the default from the policy, minReadySeconds included', () => {
    const f = forecast({ maxSurge: 3, healthGate: { minReadySeconds: 90 } }, 3, []);
    // 150 boot and join + 90 minReadySeconds + 60 drain.
    assert.deepEqual(spans(f), [['wave 1', 3, iso(0), iso(300)]]);
    assert.equal(describePace(f.paces?.[0] ?? assert.fail('no pace')), '5m per node, default, no observations');
  });

  it('the canary wave, its soak, then the rest at the cluster budget', () => {
    const f = forecast(
      { maxSurge: 5, concurrency: 4, canary: { nodes: 1, soakSeconds: 300 } },
      7,
      timings(WORKERS, 'replace', [60]),
      { config: config(3) },
    );
    // canary 0-60, soak to 360, then waves of 3 (the budget), then the last 3.
    assert.deepEqual(spans(f), [
      ['canary', 1, iso(0), iso(60)],
      ['wave 2', 3, iso(360), iso(420)],
      ['wave 3', 3, iso(420), iso(480)],
    ]);
  });

  it('a window closed now: the first wave waits for its next opening', () => {
    // 22:00-24:00 Berlin (21:00-23:00Z in March); planned at 12:00Z, 100 s per node observed.
    const nightly = maintenanceWindow('nightly', 'Europe/Berlin', [{ cron: '0 22 * * *', durationSeconds: 7200 }]);
    const f = forecast(
      { maxSurge: 2, window: 'nightly' },
      3,
      timings(WORKERS, 'replace', [100]),
      { maintenanceWindows: [nightly] },
      new Date('2026-03-02T12:00:00Z'),
    );
    assert.deepEqual(spans(f), [
      ['wave 1', 2, '2026-03-02T21:00:00.000Z', '2026-03-02T21:01:40.000Z'],
      ['wave 2', 1, '2026-03-02T21:01:40.000Z', '2026-03-02T21:03:20.000Z'],
    ]);
  });

  it('the perNodeSeconds option wins over what was observed, and the plan says so', () => {
    const p = plan(
      desired({ scalingGroups: [sg], nodeImages: [nodeImage('workers', V2, { maxSurge: 2 })] }),
      world(2),
      at(0),
      { perNodeSeconds: 77, observedNodes: timings(WORKERS, 'replace', [10]) },
    );
    assert.equal(p.forecast.eta, iso(77));
    assert.equal(
      describePace(p.forecast.paces?.[0] ?? assert.fail('no pace')),
      '1m 17s per node, as set by the perNodeSeconds option',
    );
  });

  it('a NodeOp: its default is its own steps, and nodes observed of another NodeOp count', () => {
    const nodes = workers(2, V1).nodes;
    const op = nodeOp('patch', { concurrency: 1, cordon: true, rebootOnSuccess: true });
    const run = (observedNodes: readonly NodeTiming[]) =>
      plan(desired({ nodeOps: [op] }), observed({ nodes }), at(0), { observedNodes }).forecast;
    // The fixture's NodeOp does not drain: Job 60 + reboot 120.
    assert.deepEqual(spans(run([])), [
      ['wave 1', 1, iso(0), iso(180)],
      ['wave 2', 1, iso(180), iso(360)],
    ]);
    const other = run(timings({ kind: 'NodeOp', name: 'kernel' }, 'nodeOp', [25, 35]));
    assert.equal(other.eta, iso(60));
    assert.equal(
      describePace(other.paces?.[0] ?? assert.fail('no pace')),
      '30s per node, from 2 observed nodes of other node operations',
    );
  });
});
