import { strict as assert } from 'node:assert';
import { pino } from 'pino';
import type { ClusterCache } from '../../src/observe/cluster-cache.js';
import type { DesiredTracker } from '../../src/service/desired.js';
import { RoundWatch } from '../../src/service/health.js';
import { createMetrics } from '../../src/service/metrics.js';
import type { ReconcileOutcome } from '../../src/service/reconciler.js';
import { RoundLoop, transientBackoffMs, type RoundReport } from '../../src/service/round-loop.js';
import type { DesiredState } from '../../src/spec/model.js';
import type { Plan } from '../../src/plan/types.js';

const plan: Plan = { actions: [], waits: [], notes: [], specs: [], forecast: { waves: [] } };
const outcome = (nextInMs: number, transientFailures: number): ReconcileOutcome =>
  ({ plan, observed: { problems: [] }, results: [], nextInMs, transientFailures }) as unknown as ReconcileOutcome;

function world(opts: { inForce?: boolean; synced?: boolean; commitDuringRound?: string } = {}) {
  const requests: number[] = [];
  const reports: RoundReport[] = [];
  const outcomes: (ReconcileOutcome | Error)[] = [];
  let synced = opts.synced ?? true;
  let stopping = false;
  let inForce = opts.inForce === false ? undefined : { commit: 'c1', desired: {} as DesiredState };
  const desired = {
    get inForce() {
      return inForce;
    },
  } as unknown as DesiredTracker;
  const loop = new RoundLoop({
    cluster: { isSynced: () => synced } as ClusterCache,
    desired,
    reconcile: async () => {
      // A commit loaded while the round runs (the Git source syncs on its own schedule).
      if (opts.commitDuringRound !== undefined)
        inForce = { commit: opts.commitDuringRound, desired: {} as DesiredState };
      const next = outcomes.shift();
      if (next === undefined) throw new Error('no outcome queued');
      if (next instanceof Error) throw next;
      return next;
    },
    report: async (input) => void reports.push(input),
    request: (ms) => void requests.push(ms),
    watch: new RoundWatch(() => 0, 60_000),
    stopping: () => stopping,
    metrics: createMetrics({ defaultMetrics: false }),
    logger: pino({ level: 'silent' }),
    resyncMs: 60_000,
  });
  return {
    loop,
    requests,
    reports,
    outcomes,
    sync: (v: boolean) => void (synced = v),
    stop: () => void (stopping = true),
  };
}

describe('service round loop', () => {
  it('backs off 1s, 2s, 4s ... up to 30s while transient failures repeat', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 20].map(transientBackoffMs),
      [0, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000],
    );
  });

  it("runs next at the plan's delay, or later while failures repeat, and forgets the streak after a clean round", async () => {
    const w = world();
    w.outcomes.push(outcome(200, 1), outcome(200, 1), outcome(200, 1), outcome(200, 0), outcome(5_000, 1));
    for (let i = 0; i < 5; i++) await w.loop.run();
    assert.deepEqual(w.requests, [1_000, 2_000, 4_000, 200, 5_000]);
    assert.equal(w.loop.rounds, 5);
    assert.equal(w.loop.lastOutcome?.nextInMs, 5_000);
    assert.equal(w.reports.length, 5);
    assert.equal(w.reports[0]?.plan, plan);
  });

  it('reports the commit the round planned, though a newer one came in force while it ran', async () => {
    const w = world({ commitDuringRound: 'c2' });
    w.outcomes.push(outcome(200, 0));
    await w.loop.run();
    assert.equal(w.reports[0]?.sourceCommit, 'c1');
  });

  it('without a valid commit reports an empty status and looks again at the resync interval', async () => {
    const w = world({ inForce: false });
    await w.loop.run();
    assert.deepEqual(w.reports, [{}]);
    assert.deepEqual(w.requests, [60_000]);
  });

  it('reports a failed round and retries it', async () => {
    const w = world();
    w.outcomes.push(new Error('boom'));
    await w.loop.run();
    assert.equal(w.reports.length, 1);
    assert.ok(w.reports[0]?.error, 'the error is reported');
    assert.deepEqual(w.requests, [2_000]);
    assert.equal(w.loop.lastOutcome, undefined);
  });

  it('does not run before the caches synced, nor while stopping', async () => {
    const w = world();
    w.sync(false);
    await w.loop.run();
    w.sync(true);
    w.stop();
    await w.loop.run();
    assert.equal(w.loop.rounds, 0);
    assert.deepEqual(w.reports, []);
  });
});
