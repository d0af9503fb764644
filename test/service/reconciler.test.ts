import assert from 'node:assert/strict';
import { nextDelay } from '../../src/service/reconciler.js';
import { buildStatus } from '../../src/service/status.js';
import { parseListen, ListenError } from '../../src/service/http.js';
import type { Action, Plan, SpecStatus } from '../../src/plan/types.js';
import type { ObservedState } from '../../src/observe/types.js';
import type { ActionResult } from '../../src/execute/execute.js';
import type { Outcome } from '../../src/execute/classify.js';

const spec = { kind: 'NodeImage', name: 'worker' } as const;
const cordon: Action = { kind: 'cordon', spec, reason: 'test', node: 'n1' };
const emptyPlan: Plan = { actions: [], waits: [], notes: [], specs: [], forecast: { waves: [] } };
const observed: ObservedState = {
  nodes: [],
  pods: [],
  pdbs: [],
  deployments: [],
  jobs: [],
  cloudGroups: [],
  problems: [],
};
const now = new Date('2024-01-01T00:00:00Z');
const deps = { settleMs: 200, resyncMs: 60_000 };
const result = (outcome: Outcome): ActionResult => ({ action: cordon, outcome, durationMs: 1 });

describe('nextDelay', () => {
  const table: { name: string; plan?: Plan; observed?: ObservedState; results?: ActionResult[]; want: number }[] = [
    { name: 'idle: the resync interval', want: 60_000 },
    {
      name: 'an action changed something: settle, then look again',
      plan: { ...emptyPlan, actions: [cordon] },
      results: [result({ kind: 'done' })],
      want: 200,
    },
    {
      name: 'a PDB refused an eviction: its retry delay',
      plan: { ...emptyPlan, actions: [cordon] },
      results: [result({ kind: 'waiting', code: 'TooManyRequests', reason: 'x', retryAfterSeconds: 5 })],
      want: 5_000,
    },
    {
      name: 'a transient failure: one second',
      plan: { ...emptyPlan, actions: [cordon] },
      results: [result({ kind: 'transient', code: 'Conflict', reason: 'x' })],
      want: 1_000,
    },
    { name: 'the plan wakes at a time', plan: { ...emptyPlan, wakeAt: '2024-01-01T00:00:30Z' }, want: 30_000 },
    { name: 'a wakeAt in the past: now', plan: { ...emptyPlan, wakeAt: '2023-12-31T00:00:00Z' }, want: 0 },
    { name: 'planned but not run (not leading)', plan: { ...emptyPlan, actions: [cordon] }, want: 800 },
    {
      name: 'a throttled cloud read: its retry delay',
      observed: {
        ...observed,
        problems: [{ source: 'cloud/w', code: 'Throttled', message: 'x', retryAfterSeconds: 3 }],
      },
      want: 3_000,
    },
    {
      name: 'held by a metric gate: ask Prometheus again in 5 s (no watch says when an alert clears)',
      plan: { ...emptyPlan, waits: [{ spec, code: 'metrics', reason: 'metric gate breached: x' }] },
      observed: { ...observed, metrics: {} },
      want: 5_000,
    },
    {
      name: 'another wait beside metric gates that pass: the resync interval',
      plan: { ...emptyPlan, waits: [{ spec, code: 'window', reason: 'closed' }] },
      observed: { ...observed, metrics: {} },
      want: 60_000,
    },
  ];
  for (const row of table) {
    it(row.name, () =>
      assert.equal(nextDelay(row.plan ?? emptyPlan, row.observed ?? observed, row.results ?? [], now, deps), row.want),
    );
  }
});

describe('buildStatus', () => {
  const specStatus: SpecStatus = {
    spec,
    revision: 'r1',
    phase: 'Progressing',
    progress: { done: 1, total: 3 },
    failures: 0,
    conditions: [],
    nodes: [],
    pending: [],
  };

  it("carries the refused commit's errors next to the commit still in force", () => {
    const err = { file: 'a.yaml', line: 1, column: 2, message: 'm', hint: 'h', code: 'schema' };
    const s = buildStatus({ cluster: 'c', sourceCommit: 'aaa', newestCommit: 'bbb', loadErrors: [err] });
    assert.equal(s.sourceCommit, 'aaa');
    assert.equal(s.newestCommit, 'bbb');
    assert.deepEqual(s.loadErrors, [err]);
    assert.deepEqual(s.specs, []);
  });

  it('a failed round keeps the specs and waits last published beside its error; a planned round does not', () => {
    const wait = { spec, code: 'window' as const, reason: 'outside the maintenance window' };
    const last = buildStatus({ cluster: 'c', plan: { ...emptyPlan, specs: [specStatus], waits: [wait] } });
    const error = { code: 'ApiUnavailable', message: 'the API server did not answer' };
    const failed = buildStatus({ cluster: 'c', error, carried: last });
    assert.deepEqual(failed.specs, [specStatus]);
    assert.deepEqual(failed.waits, [wait]);
    assert.deepEqual(failed.lastError, error);
    // A round that planned reports its own plan, even when it carries an error too.
    const planned = buildStatus({ cluster: 'c', plan: emptyPlan, error, carried: last });
    assert.deepEqual(planned.specs, []);
    // No valid commit at all (no error, no plan): nothing is carried.
    assert.deepEqual(buildStatus({ cluster: 'c', carried: last }).specs, []);
  });

  it('a failed round that carries the specs carries the commit they were planned under', () => {
    // A new commit came in force, and the round on it failed: the specs shown are the last
    // round's, so the report names that round's commit, and the new one as the newest.
    const last = buildStatus({ cluster: 'c', sourceCommit: 'aaa', plan: { ...emptyPlan, specs: [specStatus] } });
    const error = { code: 'ApiUnavailable', message: 'the API server did not answer' };
    const failed = buildStatus({ cluster: 'c', sourceCommit: 'bbb', newestCommit: 'bbb', error, carried: last });
    assert.deepEqual(failed.specs, [specStatus]);
    assert.equal(failed.sourceCommit, 'aaa');
    assert.equal(failed.newestCommit, 'bbb');
  });

  it('adds the first failed action of a spec as its lastError', () => {
    const s = buildStatus({
      cluster: 'c',
      plan: { ...emptyPlan, specs: [specStatus] },
      results: [
        result({ kind: 'done' }),
        result({ kind: 'stalled', code: 'Forbidden', reason: 'cordon n1: nodes "n1" is forbidden' }),
      ],
    });
    assert.equal(s.specs[0]?.lastError, 'cordon n1: nodes "n1" is forbidden');
  });

  it('keeps a round error by code', () => {
    assert.deepEqual(
      buildStatus({ cluster: 'c', error: { code: 'HTTP503', message: 'reconcile: HTTP 503' } }).lastError,
      {
        code: 'HTTP503',
        message: 'reconcile: HTTP 503',
      },
    );
  });
});

describe('parseListen', () => {
  const ok: [string, string, number][] = [
    [':8080', '0.0.0.0', 8080],
    ['8080', '0.0.0.0', 8080],
    ['127.0.0.1:0', '127.0.0.1', 0],
    ['[::1]:9000', '::1', 9000],
  ];
  for (const [input, host, port] of ok)
    it(`accepts ${input}`, () => assert.deepEqual(parseListen(input), { host, port }));
  for (const bad of ['', 'localhost', ':99999', 'a:b']) {
    it(`refuses ${JSON.stringify(bad)} with what to write instead`, () => {
      assert.throws(
        () => parseListen(bad),
        (e: unknown) => e instanceof ListenError && e.code === 'listen' && /e\.g\. :8080/.test(e.message),
      );
    });
  }
});
