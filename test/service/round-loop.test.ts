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
import type { Written } from '../../src/kube/written.js';

const plan: Plan = { actions: [], waits: [], notes: [], specs: [], forecast: { waves: [] } };
const outcome = (nextInMs: number, transientFailures: number, written: readonly Written[] = []): ReconcileOutcome =>
  ({
    plan,
    observed: { problems: [] },
    results: [],
    nextInMs,
    transientFailures,
    written,
  }) as unknown as ReconcileOutcome;

const lockWrite: Written = { collection: 'nodes', name: 'w-1', resourceVersion: '41' };

/** A promise with its resolve, to say when the caches see a write. */
function later<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function world(
  opts: {
    inForce?: boolean;
    synced?: boolean;
    commitDuringRound?: string;
    whenSeen?: (writes: readonly Written[], timeoutMs: number) => Promise<boolean>;
  } = {},
) {
  const requests: number[] = [];
  /** Rounds asked for as a watch event asks (a gap after the last): when, counted in requests. */
  const spaced: number[] = [];
  const reconciled: number[] = [];
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
    cluster: {
      isSynced: () => synced,
      whenSeen: opts.whenSeen ?? (() => Promise.resolve(true)),
    } as unknown as ClusterCache,
    desired,
    reconcile: async () => {
      reconciled.push(requests.length);
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
    requestSpaced: () => void spaced.push(requests.length),
    watch: new RoundWatch(() => 0, 60_000),
    stopping: () => stopping,
    metrics: createMetrics({ defaultMetrics: false }),
    logger: pino({ level: 'silent' }),
    resyncMs: 60_000,
    seenWithinMs: 3_000,
  });
  return {
    loop,
    requests,
    spaced,
    reconciled,
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

  it('asks for the next round as soon as the caches have seen the writes of this one', async () => {
    const seen = later<boolean>();
    const asked: { writes: readonly Written[]; timeoutMs: number }[] = [];
    const w = world({
      whenSeen: (writes, timeoutMs) => {
        asked.push({ writes, timeoutMs });
        return seen.promise;
      },
    });
    w.outcomes.push(outcome(250, 0, [lockWrite]));
    await w.loop.run();
    assert.deepEqual(asked, [{ writes: [lockWrite], timeoutMs: 3_000 }]);
    assert.deepEqual(w.requests, [250], 'the settle time stands until the write is seen');
    seen.resolve(true);
    await seen.promise;
    await Promise.resolve();
    assert.deepEqual(w.requests, [250, 0]);
  });

  it('plans the next round only once the writes of the last one are seen', async () => {
    const seen = later<boolean>();
    const w = world({ whenSeen: () => seen.promise });
    w.outcomes.push(outcome(250, 0, [lockWrite]), outcome(60_000, 0));
    await w.loop.run();
    let second = false;
    const round = w.loop.run().then(() => (second = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(second, false, 'the round waits for the write');
    assert.equal(w.reconciled.length, 1, 'nothing planned on caches without the write');
    seen.resolve(true);
    await round;
    assert.equal(w.reconciled.length, 2);
    assert.equal(w.loop.rounds, 2);
  });

  it('a write never seen in time neither asks for a round at once nor holds the next one', async () => {
    const w = world({ whenSeen: () => Promise.resolve(false) });
    w.outcomes.push(outcome(250, 0, [lockWrite]), outcome(60_000, 0));
    await w.loop.run();
    await Promise.resolve();
    assert.deepEqual(w.requests, [250]);
    await w.loop.run();
    assert.equal(w.loop.rounds, 2);
  });

  it('a round that wrote nothing waits for nothing', async () => {
    const w = world({ whenSeen: () => assert.fail('nothing was written') });
    w.outcomes.push(outcome(250, 0), outcome(250, 0));
    await w.loop.run();
    await w.loop.run();
    assert.equal(w.loop.rounds, 2);
  });

  it('asks for a round as a watch event asks once work left running past its round has settled', () => {
    const w = world({ whenSeen: () => assert.fail('the caches showed its writes before it settled') });
    w.loop.settled({ retryInMs: 0, written: [lockWrite] });
    assert.deepEqual(w.requests, []);
    assert.deepEqual(w.spaced, [0]);
  });

  it("asks for a round at a refused eviction's retry delay when work left running was refused", () => {
    const w = world();
    w.loop.settled({ retryInMs: 5_000, written: [] });
    assert.deepEqual(w.requests, [5_000]);
    assert.deepEqual(w.spaced, [], 'not sooner');
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
