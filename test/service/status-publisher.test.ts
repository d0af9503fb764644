import { strict as assert } from 'node:assert';
import { pino } from 'pino';
import { createMetrics } from '../../src/service/metrics.js';
import { StatusPublisher } from '../../src/service/status-publisher.js';
import { buildStatus, type StatusSink, type StatusSnapshot } from '../../src/service/status.js';
import type { SpecStatus } from '../../src/plan/types.js';

function world(leader = true, sink?: StatusSink, heartbeatMs?: number) {
  let t = 1_000_000;
  const written: StatusSnapshot[] = [];
  const requests: number[] = [];
  let isLeader = leader;
  const publisher = new StatusPublisher({
    sink: sink ?? { write: async (s) => void written.push(s) },
    logger: pino({ level: 'silent' }),
    metrics: createMetrics({ defaultMetrics: false }),
    intervalMs: 2_000,
    clock: () => t,
    mayWrite: () => isLeader,
    requestRound: (ms) => void requests.push(ms),
    ...(heartbeatMs !== undefined ? { heartbeatMs: () => heartbeatMs } : {}),
  });
  return {
    publisher,
    written,
    requests,
    advance: (ms: number) => void (t += ms),
    lead: (v: boolean) => void (isLeader = v),
  };
}

const snap = (commit: string, cluster = 'c'): StatusSnapshot => buildStatus({ cluster, sourceCommit: commit });

describe('service status publisher (injected clock)', () => {
  it('writes a change at once, the same snapshot never twice', async () => {
    const w = world();
    await w.publisher.publish(snap('a'));
    w.advance(10_000);
    await w.publisher.publish(snap('a'));
    assert.deepEqual(
      w.written.map((s) => s.sourceCommit),
      ['a'],
    );
  });

  it('in a fleet, writes the same snapshot again once the heartbeat is due, and asks for that round', async () => {
    const w = world(true, undefined, 60_000);
    await w.publisher.publish(snap('a'));
    assert.deepEqual(w.requests, [60_000]);
    w.advance(59_000);
    await w.publisher.publish(snap('a'));
    w.advance(1_000);
    await w.publisher.publish(snap('a'));
    assert.deepEqual(
      w.written.map((s) => s.sourceCommit),
      ['a', 'a'],
    );
  });

  it('a change within the interval waits, and asks for the round that writes it', async () => {
    const w = world();
    await w.publisher.publish(snap('a'));
    w.advance(500);
    await w.publisher.publish(snap('b'));
    assert.deepEqual(
      w.written.map((s) => s.sourceCommit),
      ['a'],
    );
    assert.deepEqual(w.requests, [1_500]);
    w.advance(1_500);
    await w.publisher.publish(snap('b'));
    assert.deepEqual(
      w.written.map((s) => s.sourceCommit),
      ['a', 'b'],
    );
    assert.equal(w.publisher.last?.sourceCommit, 'b');
  });

  it('a standby writes nothing; a new leader writes even what an earlier leadership wrote', async () => {
    const w = world(false);
    await w.publisher.publish(snap('a'));
    assert.equal(w.written.length, 0);
    w.lead(true);
    await w.publisher.publish(snap('a'));
    w.advance(5_000);
    w.publisher.forgetWritten();
    await w.publisher.publish(snap('a'));
    assert.equal(w.written.length, 2);
  });

  it('an ETA that moved is no change by itself; it is written with the next real change', async () => {
    const w = world();
    const spec = (eta: string, done: number): SpecStatus => ({
      spec: { kind: 'NodeImage', name: 'worker' },
      revision: 'r',
      phase: 'Progressing',
      progress: { done, total: 3 },
      failures: 0,
      conditions: [],
      nodes: [{ node: 'w1', phase: 'Draining', eta }],
      pending: [],
      eta,
    });
    const at = (eta: string, done: number): StatusSnapshot => ({ ...snap('a'), specs: [spec(eta, done)] });
    await w.publisher.publish(at('2026-01-01T10:00:00.000Z', 1));
    w.advance(10_000);
    await w.publisher.publish(at('2026-01-01T10:00:10.000Z', 1));
    assert.equal(w.written.length, 1, 'only the ETA moved: no write');
    w.advance(10_000);
    await w.publisher.publish(at('2026-01-01T10:00:20.000Z', 2));
    assert.deepEqual(
      w.written.map((s) => [s.specs[0]?.eta, s.specs[0]?.nodes[0]?.eta]),
      [
        ['2026-01-01T10:00:00.000Z', '2026-01-01T10:00:00.000Z'],
        ['2026-01-01T10:00:20.000Z', '2026-01-01T10:00:20.000Z'],
      ],
    );
  });

  it('one write at a time: a change published while a write is under way asks for a later round; idle() waits for the write', async () => {
    const started: string[] = [];
    let finish!: () => void;
    const w = world(true, {
      write: (s) => {
        started.push(s.sourceCommit ?? '');
        return new Promise<void>((resolve) => (finish = resolve));
      },
    });
    const { publisher, requests } = w;
    const first = publisher.publish(snap('a'));
    w.advance(5_000);
    await publisher.publish(snap('b'));
    assert.deepEqual(started, ['a'], 'no second write while the first is under way');
    assert.deepEqual(requests, [2_000], 'the round that writes b is asked for');
    let idle = false;
    const waiting = publisher.idle().then(() => (idle = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(idle, false, 'idle() waits for the write under way');
    finish();
    await Promise.all([first, waiting]);
    w.advance(2_000);
    const second = publisher.publish(snap('b'));
    assert.deepEqual(started, ['a', 'b'], 'written once the first is done and the interval has passed');
    finish();
    await second;
  });

  it('no cluster name yet: nothing is written', async () => {
    const w = world();
    await w.publisher.publish(snap('a', ''));
    assert.equal(w.written.length, 0);
  });
});

describe('service status publisher: refused writes back off', () => {
  it('after a failed write the next rounds do not try again until the backoff (5 s, doubling) has passed', async () => {
    let t = 1_000_000;
    let attempts = 0;
    let refuse = true;
    const requests: number[] = [];
    const publisher = new StatusPublisher({
      sink: {
        write: async () => {
          attempts += 1;
          if (refuse) throw new Error('push rejected');
        },
      },
      logger: pino({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      intervalMs: 2_000,
      clock: () => t,
      mayWrite: () => true,
      requestRound: (ms) => void requests.push(ms),
    });
    await publisher.publish(snap('a'));
    assert.equal(attempts, 1);
    assert.equal(requests.at(-1), 5_000);
    t += 4_000;
    await publisher.publish(snap('a'));
    assert.equal(attempts, 1, 'within the first backoff: no write, the round is not held up');
    t += 1_000;
    await publisher.publish(snap('a'));
    assert.equal(attempts, 2);
    assert.equal(requests.at(-1), 10_000, 'the second backoff doubles');
    refuse = false;
    t += 10_000;
    await publisher.publish(snap('a'));
    assert.equal(attempts, 3, 'written once accepted again');
    t += 2_000;
    await publisher.publish(snap('b'));
    assert.equal(attempts, 4, 'after a success the normal interval applies again');
  });

  it('hands each written snapshot to onPublished with its status commit, and nothing it did not write', async () => {
    const heard: [string | undefined, string | undefined][] = [];
    let n = 0;
    const publisher = new StatusPublisher({
      sink: { write: () => Promise.resolve(`commit-${(n += 1)}`) },
      logger: pino({ level: 'silent' }),
      metrics: createMetrics({ defaultMetrics: false }),
      intervalMs: 0,
      clock: () => 0,
      mayWrite: () => true,
      requestRound: () => undefined,
      onPublished: (s, commit) => void heard.push([s.sourceCommit, commit]),
    });
    await publisher.publish(snap('a'));
    await publisher.publish(snap('a'));
    await publisher.publish(snap('b'));
    assert.deepEqual(heard, [
      ['a', 'commit-1'],
      ['b', 'commit-2'],
    ]);
  });
});
