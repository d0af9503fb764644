/**
 * The failure budget (rollout.maxFailures), the pause from Git (spec.paused, drydock.yaml's
 * paused) and budgets by window (drydock.yaml budget.windows), as tables: one observed state
 * in, what the planner starts, waits for and reports. Each through a replace rollout and a
 * NodeOp, the two ways into the shared node sequence.
 */
import { strict as assert } from 'node:assert';
import { plan, type Action, type Plan } from '../../src/plan/index.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import type { ObservedNode } from '../../src/observe/types.js';
import type { BudgetWindow, NodeOp, Pause, RepoConfig, RolloutPolicy } from '../../src/spec/model.js';
import {
  at,
  cloudGroup,
  config,
  desired,
  iso,
  node,
  nodeImage,
  observed,
  policy,
  scalingGroup,
  workers,
} from './fixtures.js';
import { LOCK, V1, V2 } from './helpers.js';
import { nodeOp } from './nodeop/fixtures.js';

const NS = 'drydock-system';
const OP_LOCK = 'NodeOp/patch@r1';

/** The nodes an annotateNode of this plan locks Pending: the ones it starts. */
function started(p: Plan): string[] {
  return p.actions
    .filter(
      (a): a is Extract<Action, { kind: 'annotateNode' }> =>
        a.kind === 'annotateNode' && a.annotations[ANNOTATIONS.phase] === 'Pending',
    )
    .map((a) => a.node);
}

const specOf = (p: Plan, kind: string) => p.specs.find((s) => s.spec.kind === kind);

// ---- replace: four workers on V1, the NodeImage at V2; `phases` are the locked ones ----

function replaceWorld(phases: Record<number, string>) {
  const w = workers(4, V1, (i) => {
    const phase = phases[i];
    if (phase === undefined) return {};
    return {
      annotations: {
        [ANNOTATIONS.operation]: LOCK,
        [ANNOTATIONS.phase]: phase,
        [ANNOTATIONS.phaseSince]: iso(-60),
        ...(phase === 'Failed'
          ? { [ANNOTATIONS.reason]: 'replacement did not join', [ANNOTATIONS.failures]: '3' }
          : {}),
      },
    };
  });
  return observed({ nodes: w.nodes, cloudGroups: [cloudGroup('workers', V2, w.instances)] });
}

function replacePlan(
  rollout: Partial<RolloutPolicy>,
  phases: Record<number, string>,
  o: { paused?: Pause; repoPaused?: Pause } = {},
): Plan {
  const image = { ...nodeImage('workers', V2, rollout), ...(o.paused !== undefined ? { paused: o.paused } : {}) };
  const cfg: RepoConfig = { ...config(), ...(o.repoPaused !== undefined ? { paused: o.repoPaused } : {}) };
  const d = desired({ config: cfg, scalingGroups: [scalingGroup('workers', 'workers')], nodeImages: [image] });
  return plan(d, replaceWorld(phases), at(0));
}

// ---- NodeOp: worker-0..4; `phases` are the ones it holds ----

function opNode(name: string, phase?: string): ObservedNode {
  const annotations: Record<string, string> =
    phase === undefined
      ? {}
      : {
          [ANNOTATIONS.operation]: OP_LOCK,
          [ANNOTATIONS.phase]: phase,
          [ANNOTATIONS.phaseSince]: iso(-60),
          ...(phase === 'Failed' ? { [ANNOTATIONS.reason]: 'Job failed' } : {}),
        };
  return { ...node(name, `sim://g/${name}`, { annotations, readySince: -3600 }), bootID: `boot-${name}` };
}

function opPlan(
  op: NodeOp,
  phases: Record<number, string>,
  o: { count?: number; budget?: RepoConfig['budget']; now?: Date } = {},
): Plan {
  const nodes = Array.from({ length: o.count ?? 4 }, (_, i) => opNode(`worker-${i}`, phases[i]));
  const running = Object.entries(phases)
    .filter(([, phase]) => phase === 'Updating')
    .map(([i]) => ({
      namespace: NS,
      name: `nodeop-patch-worker-${i}-r1`,
      labels: {},
      succeeded: false,
      failed: false,
      attempts: 1,
    }));
  const cfg: RepoConfig = { ...config(), ...(o.budget !== undefined ? { budget: o.budget } : {}) };
  return plan(desired({ config: cfg, nodeOps: [op] }), observed({ nodes, jobs: running }), o.now ?? at(0), {
    jobNamespace: NS,
  });
}

const patch = (rollout: Partial<RolloutPolicy>, o: Partial<NodeOp> = {}): NodeOp =>
  nodeOp('patch', { rollout: policy({ ...nodeOp('patch').rollout, ...rollout }), ...o });

describe('plan: the failure budget (rollout.maxFailures)', () => {
  const cases: readonly {
    name: string;
    run: () => Plan;
    kind: 'NodeImage' | 'NodeOp';
    starts: string[];
    halted: boolean;
    budget?: string;
  }[] = [
    {
      name: 'replace, maxFailures 2: one failed node, the next starts',
      run: () => replacePlan({ maxFailures: 2 }, { 0: 'Failed' }),
      kind: 'NodeImage',
      starts: ['worker-1'],
      halted: false,
      budget: '1 of 2 failures allowed: the rollout halts at the 2nd failed node',
    },
    {
      name: 'replace, maxFailures 2: the second failed node halts it',
      run: () => replacePlan({ maxFailures: 2 }, { 0: 'Failed', 1: 'Failed' }),
      kind: 'NodeImage',
      starts: [],
      halted: true,
      budget: '2 of 2 failures allowed: the rollout halts now',
    },
    {
      name: 'replace, maxFailures 50% of 4 nodes is 2: one failed node, the next starts',
      run: () => replacePlan({ maxFailures: '50%' }, { 0: 'Failed' }),
      kind: 'NodeImage',
      starts: ['worker-1'],
      halted: false,
      budget: '1 of 2 failures allowed (maxFailures 50% of 4 nodes): the rollout halts at the 2nd failed node',
    },
    {
      name: 'replace, stopOnFailure without maxFailures: the first failed node halts it, as before',
      run: () => replacePlan({ stopOnFailure: true }, { 0: 'Failed' }),
      kind: 'NodeImage',
      starts: [],
      halted: true,
    },
    {
      name: 'replace, maxFailures 2 given beside stopOnFailure true: the budget decides',
      run: () => replacePlan({ stopOnFailure: true, maxFailures: 2 }, { 0: 'Failed' }),
      kind: 'NodeImage',
      starts: ['worker-1'],
      halted: false,
      budget: '1 of 2 failures allowed: the rollout halts at the 2nd failed node',
    },
    {
      name: 'NodeOp, maxFailures 2: one failed node, the next starts',
      run: () => opPlan(patch({ maxFailures: 2 }), { 0: 'Failed' }),
      kind: 'NodeOp',
      starts: ['worker-1'],
      halted: false,
      budget: '1 of 2 failures allowed: the rollout halts at the 2nd failed node',
    },
    {
      name: 'NodeOp, maxFailures 2: the second failed node halts it',
      run: () => opPlan(patch({ maxFailures: 2 }), { 0: 'Failed', 1: 'Failed' }),
      kind: 'NodeOp',
      starts: [],
      halted: true,
      budget: '2 of 2 failures allowed: the rollout halts now',
    },
    {
      name: 'NodeOp, maxFailures 2: a node in flight at the second failure still finishes (no start, no release)',
      run: () => opPlan(patch({ maxFailures: 2 }, { concurrency: 2 }), { 0: 'Failed', 1: 'Failed', 2: 'Updating' }),
      kind: 'NodeOp',
      starts: [],
      halted: true,
      budget: '2 of 2 failures allowed: the rollout halts now',
    },
    {
      name: 'NodeOp, stopOnFailure (its own) without maxFailures: the first failed node halts it, as before',
      run: () => opPlan(patch({}, { stopOnFailure: true }), { 0: 'Failed' }),
      kind: 'NodeOp',
      starts: [],
      halted: true,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = c.run();
      assert.deepEqual(started(p), c.starts);
      const status = specOf(p, c.kind);
      assert.equal(status?.phase === 'Halted', c.halted, `phase ${status?.phase}`);
      assert.equal(
        p.waits.some((w) => w.code === 'halted'),
        c.halted,
      );
      assert.equal(status?.failureBudget, c.budget);
    });
  }

  it('NodeOp, maxFailures 2: a cordoned node whose Job fails this round is uncordoned and does not halt the spec', () => {
    const op = patch({ maxFailures: 2 }, { cordon: true });
    const cordoned = {
      ...opNode('worker-0', 'Updating'),
      unschedulable: true,
    };
    const failing = { ...cordoned, annotations: { ...cordoned.annotations, [ANNOTATIONS.cordoned]: 'true' } };
    const job = {
      namespace: NS,
      name: 'nodeop-patch-worker-0-r1',
      labels: {},
      succeeded: false,
      failed: true,
      attempts: 1,
      failureReason: 'BackoffLimitExceeded',
    };
    const nodes = [failing, opNode('worker-1'), opNode('worker-2')];
    const p = plan(desired({ config: config(), nodeOps: [op] }), observed({ nodes, jobs: [job] }), at(0), {
      jobNamespace: NS,
    });
    assert.ok(p.actions.some((a) => a.kind === 'uncordon' && a.node === 'worker-0'));
    assert.notEqual(specOf(p, 'NodeOp')?.phase, 'Halted');
    assert.equal(
      p.waits.some((w) => w.code === 'halted'),
      false,
    );
    assert.equal(
      specOf(p, 'NodeOp')?.failureBudget,
      '1 of 2 failures allowed: the rollout halts at the 2nd failed node',
    );
  });

  it('the halt names the budget and the failed nodes', () => {
    const p = replacePlan({ maxFailures: 2 }, { 0: 'Failed', 1: 'Failed' });
    const halt = p.waits.find((w) => w.code === 'halted');
    assert.match(halt?.reason ?? '', /^rollout halted: maxFailures 2: 2 nodes failed \(worker-0, worker-1\)/);
  });

  it('a job still running on the halting round keeps its node going (its wait is there, nothing is released)', () => {
    const p = opPlan(patch({ maxFailures: 2 }, { concurrency: 2 }), { 0: 'Failed', 1: 'Failed', 2: 'Updating' });
    assert.ok(p.waits.some((w) => w.code === 'job' && w.node === 'worker-2'));
    assert.deepEqual(
      p.actions.filter((a) => 'node' in a && a.node === 'worker-2'),
      [],
    );
  });
});

describe('plan: a pause from Git (spec.paused, drydock.yaml paused)', () => {
  const alice: Pause = {
    by: { name: 'Alice', email: 'alice@example.com', commit: 'abcdef0123456789', at: '2026-03-02T09:00:00.000Z' },
  };

  it('replace: a paused NodeImage starts nothing; its node in flight goes on; status names who and since when', () => {
    const p = replacePlan({ maxSurge: 2 }, { 0: 'Cordoned' }, { paused: alice });
    assert.deepEqual(started(p), []);
    // worker-0 (Cordoned) takes its next step: its drain.
    assert.ok(p.actions.some((a) => a.kind === 'annotateNode' && a.node === 'worker-0'));
    const status = specOf(p, 'NodeImage');
    assert.equal(
      status?.paused,
      'paused by Alice <alice@example.com> since commit abcdef0 (spec.paused, 2026-03-02T09:00:00.000Z): no new node starts, nodes in flight finish theirs; remove spec.paused to resume',
    );
    assert.equal(status?.conditions.find((c) => c.type === 'Stalled')?.reason, 'paused');
  });

  it('replace: the same world unpaused starts the next nodes', () => {
    // worker-1 on the free slot, worker-2 on worker-0's, whose instance this round removes.
    assert.deepEqual(started(replacePlan({ maxSurge: 2 }, { 0: 'Cordoned' })), ['worker-1', 'worker-2']);
  });

  it('replace: drydock.yaml paused holds it the same way and names the repository switch', () => {
    const p = replacePlan({ maxSurge: 2 }, {}, { repoPaused: alice });
    assert.deepEqual(started(p), []);
    assert.match(specOf(p, 'NodeImage')?.paused ?? '', /^paused by Alice .* \(drydock.yaml paused, /);
  });

  it('NodeOp: a paused NodeOp starts nothing while its running Job goes on; unpaused, the next starts', () => {
    const paused = opPlan(patch({}, { concurrency: 2, paused: alice }), { 0: 'Updating' });
    assert.deepEqual(started(paused), []);
    assert.ok(paused.waits.some((w) => w.code === 'job' && w.node === 'worker-0'));
    assert.ok(paused.waits.some((w) => w.code === 'paused'));
    assert.match(specOf(paused, 'NodeOp')?.paused ?? '', /^paused by Alice <alice@example.com> since commit abcdef0/);
    assert.deepEqual(started(opPlan(patch({}, { concurrency: 2 }), { 0: 'Updating' })), ['worker-1']);
  });

  it('a pause whose author is not known still holds, and says so', () => {
    const p = opPlan(patch({}, { paused: {} }), {});
    assert.deepEqual(started(p), []);
    assert.match(specOf(p, 'NodeOp')?.paused ?? '', /^paused \(spec.paused; who paused it is not known\)/);
  });
});

describe('plan: budgets by window (drydock.yaml budget.windows)', () => {
  // Day: 1 node from 08:00 for 14h; night: 3 nodes from 22:00 for 10h; outside both, maxUnavailable 2.
  const day: BudgetWindow = { maxUnavailable: 1, cron: '0 8 * * *', durationSeconds: 14 * 3600, timeZone: 'UTC' };
  const night: BudgetWindow = { maxUnavailable: 3, cron: '0 22 * * *', durationSeconds: 10 * 3600, timeZone: 'UTC' };
  const budget = { maxUnavailable: 2, windows: [day, night] };
  const allAtOnce = patch({}, { concurrency: 0 });
  const T_DAY = new Date('2026-03-02T10:00:00Z');
  const T_NIGHT = new Date('2026-03-02T23:00:00Z');

  it('the day budget of 1 holds a NodeOp of concurrency 0 to one node, and wakes when the night one starts', () => {
    const p = opPlan(allAtOnce, {}, { count: 5, budget, now: T_DAY });
    assert.deepEqual(started(p), ['worker-0']);
    const wait = p.waits.find((w) => w.code === 'budget');
    assert.match(
      wait?.reason ?? '',
      /allows 1 node unavailable at once across all operations \(drydock.yaml budget.windows\[0\]\); from 2026-03-02 22:00 UTC it allows 3 nodes \(budget.windows\[1\]\)/,
    );
    assert.equal(wait?.until, '2026-03-02T22:00:00.000Z');
    assert.equal(p.wakeAt, '2026-03-02T22:00:00.000Z');
    assert.deepEqual(p.budget, [
      'every kind: 1 node (drydock.yaml budget.windows[0]); from 2026-03-02 22:00 UTC, 3 nodes (budget.windows[1])',
    ]);
  });

  it('the night budget of 3 lets three nodes go at once', () => {
    const p = opPlan(allAtOnce, {}, { count: 5, budget, now: T_NIGHT });
    assert.deepEqual(started(p), ['worker-0', 'worker-1', 'worker-2']);
    assert.deepEqual(p.budget, [
      'every kind: 3 nodes (drydock.yaml budget.windows[1]); from 2026-03-03 08:00 UTC, 1 node (budget.windows[0])',
    ]);
  });

  it('at night, nodes already down count against the night budget: two in flight leave room for one', () => {
    const p = opPlan(allAtOnce, { 0: 'Updating', 1: 'Updating' }, { count: 5, budget, now: T_NIGHT });
    assert.deepEqual(started(p), ['worker-2']);
  });

  it('outside every window, maxUnavailable is the budget', () => {
    const p = opPlan(allAtOnce, {}, { count: 5, budget: { maxUnavailable: 2, windows: [night] }, now: T_DAY });
    assert.deepEqual(started(p), ['worker-0', 'worker-1']);
    assert.deepEqual(p.budget, [
      'every kind: 2 nodes (drydock.yaml budget.maxUnavailable); from 2026-03-02 22:00 UTC, 3 nodes (budget.windows[0])',
    ]);
  });

  it('where windows overlap, the most restrictive active one is in force', () => {
    const always: BudgetWindow = { ...night, cron: '0 * * * *', durationSeconds: 3600, maxUnavailable: 4 };
    const p = opPlan(
      allAtOnce,
      {},
      { count: 5, budget: { maxUnavailable: 5, windows: [always, night] }, now: T_NIGHT },
    );
    assert.deepEqual(started(p), ['worker-0', 'worker-1', 'worker-2']);
  });

  it('a window for other kinds does not apply: a NodeImage-only night budget leaves a NodeOp at maxUnavailable', () => {
    const imagesOnly: BudgetWindow = { ...night, kinds: ['NodeImage'] };
    const p = opPlan(allAtOnce, {}, { count: 5, budget: { maxUnavailable: 1, windows: [imagesOnly] }, now: T_NIGHT });
    assert.deepEqual(started(p), ['worker-0']);
    assert.deepEqual(p.budget, [
      'NodeImage: 3 nodes (drydock.yaml budget.windows[0]); from 2026-03-03 08:00 UTC, 1 node (budget.maxUnavailable)',
      'every other kind: 1 node (drydock.yaml budget.maxUnavailable)',
    ]);
  });

  it('a percentage is of every node in the cluster, at least one', () => {
    const pct: BudgetWindow = { ...night, maxUnavailable: '40%' };
    const p = opPlan(allAtOnce, {}, { count: 5, budget: { maxUnavailable: 1, windows: [pct] }, now: T_NIGHT });
    assert.deepEqual(started(p), ['worker-0', 'worker-1']);
  });

  it('replace under the one cluster budget: the night budget lets a replace rollout take three nodes', () => {
    const rollout = { maxSurge: 3 };
    const image = nodeImage('workers', V2, rollout);
    const d = (now: Date) =>
      plan(
        desired({
          config: { ...config(), budget },
          scalingGroups: [scalingGroup('workers', 'workers')],
          nodeImages: [image],
        }),
        replaceWorld({}),
        now,
      );
    assert.deepEqual(started(d(T_DAY)), ['worker-0']);
    assert.deepEqual(started(d(T_NIGHT)), ['worker-0', 'worker-1', 'worker-2']);
  });

  it('without windows, nothing changes: no budget lines in the plan', () => {
    const p = opPlan(allAtOnce, {}, { count: 5, budget: { maxUnavailable: 2 }, now: T_NIGHT });
    assert.equal(p.budget, undefined);
    assert.deepEqual(started(p), ['worker-0', 'worker-1']);
  });
});
