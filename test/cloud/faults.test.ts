import { strict as assert } from 'node:assert';
import { DEFAULT_FAULTS, type SimFaultConfig } from '../../src/cloud/sim/config.js';
import { FaultInjector } from '../../src/cloud/sim/faults.js';
import { SeededRandom } from '../../src/cloud/sim/random.js';

const noisy: SimFaultConfig = {
  ...DEFAULT_FAULTS,
  seed: 42,
  throttleRate: 0.2,
  transientRate: 0.2,
  bootFailureRate: 0.3,
  retryAfterSeconds: 7,
  latencyMs: { min: 5, max: 50 },
};

/** The fault outcome of `n` API calls and `n` boots, as a comparable trace. */
function trace(injector: FaultInjector, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      `api:${injector.apiFault('describeGroup', 'workers')?.code ?? 'ok'} latency:${injector.latencyMs()} boot:${injector.bootJoins()}`,
    );
  }
  return out;
}

describe('sim cloud fault injection', () => {
  it('SeededRandom: same seed, same sequence; different seed, different sequence', () => {
    const a = new SeededRandom(7);
    const b = new SeededRandom(7);
    const c = new SeededRandom(8);
    const seqA = Array.from({ length: 20 }, () => a.next());
    const seqB = Array.from({ length: 20 }, () => b.next());
    const seqC = Array.from({ length: 20 }, () => c.next());
    assert.deepEqual(seqA, seqB);
    assert.notDeepEqual(seqA, seqC);
    for (const x of seqA) assert.ok(x >= 0 && x < 1, `${x} out of [0, 1)`);
  });

  it('SeededRandom: resuming from a snapshot continues the sequence', () => {
    const a = new SeededRandom(99);
    for (let i = 0; i < 5; i++) a.next();
    const resumed = SeededRandom.fromState(a.snapshot);
    assert.deepEqual(
      Array.from({ length: 10 }, () => resumed.next()),
      Array.from({ length: 10 }, () => a.next()),
    );
  });

  it('the same seed gives the same faults in the same order', () => {
    const first = trace(new FaultInjector(noisy), 200);
    assert.deepEqual(trace(new FaultInjector(noisy), 200), first);
    // With these rates all three API outcomes and both boot outcomes occur.
    for (const expected of ['api:ok', 'api:Throttled', 'api:Transient', 'boot:true', 'boot:false']) {
      assert.ok(
        first.some((t) => t.includes(expected)),
        `no ${expected} in 200 draws`,
      );
    }
    assert.notDeepEqual(trace(new FaultInjector({ ...noisy, seed: 43 }), 200), first);
  });

  it('rates are roughly honoured', () => {
    const injector = new FaultInjector({ ...DEFAULT_FAULTS, seed: 5, bootFailureRate: 0.25 });
    let failures = 0;
    for (let i = 0; i < 4000; i++) if (!injector.bootJoins()) failures++;
    assert.ok(failures > 850 && failures < 1150, `${failures} of 4000 boots failed at rate 0.25`);
  });

  it('boot faults do not depend on how many API calls were made', () => {
    const quiet = new FaultInjector(noisy);
    const busy = new FaultInjector(noisy);
    for (let i = 0; i < 37; i++) busy.apiFault('listGroups');
    assert.deepEqual(
      Array.from({ length: 50 }, () => busy.bootJoins()),
      Array.from({ length: 50 }, () => quiet.bootJoins()),
    );
  });

  it('queued faults come first, in order, then the random ones resume', () => {
    const injector = new FaultInjector(DEFAULT_FAULTS);
    injector.queueApiFaults('Throttled', 2);
    injector.queueApiFaults('Transient', 1);
    injector.queueBootFailures(2);
    const codes = Array.from({ length: 4 }, () => injector.apiFault('addCapacity', 'workers')?.code);
    assert.deepEqual(codes, ['Throttled', 'Throttled', 'Transient', undefined]);
    assert.deepEqual(
      Array.from({ length: 3 }, () => injector.bootJoins()),
      [false, false, true],
    );
  });

  it('a throttle carries retryAfterSeconds and names the group', () => {
    const injector = new FaultInjector({ ...DEFAULT_FAULTS, retryAfterSeconds: 9 });
    injector.queueApiFaults('Throttled', 1);
    const err = injector.apiFault('setGroupImage', 'workers');
    assert.equal(err?.code, 'Throttled');
    assert.deepEqual(err?.data, { groupId: 'workers', retryAfterSeconds: 9 });
    assert.match(err?.message ?? '', /"workers"/);
  });

  it('a snapshot restores the position in both sequences and the queues', () => {
    const original = new FaultInjector(noisy);
    trace(original, 13);
    original.queueApiFaults('Transient', 1);
    const restored = new FaultInjector(noisy, original.snapshot());
    assert.deepEqual(trace(restored, 50), trace(original, 50));
  });

  it('a snapshot taken under another seed is not resumed', () => {
    const original = new FaultInjector(noisy);
    trace(original, 13);
    const reseeded = new FaultInjector({ ...noisy, seed: 1000 }, original.snapshot());
    assert.deepEqual(trace(reseeded, 30), trace(new FaultInjector({ ...noisy, seed: 1000 }), 30));
  });
});
