/**
 * The canary wave as every kind reads it (src/plan/sequence/canary.ts): the wave goes alone,
 * soaks, then opens; once more nodes than the wave are done, it stays open even when a
 * canary node goes NotReady later (another operation rebooting it).
 */
import { strict as assert } from 'node:assert';
import { canaryGate, type CanaryProgress } from '../../src/plan/sequence/canary.js';
import { at, iso, node } from './fixtures.js';

function progress(done: { ready: boolean; at: number }[], inFlight: number): CanaryProgress {
  return {
    policy: { nodes: 1, soakSeconds: 60 },
    wave: 1,
    done: done.map((d, i) => ({
      node: { ...node(`w-${i}`, `pid-${i}`), ready: d.ready, readySince: iso(d.at) },
      at: at(d.at).getTime(),
    })),
    inFlight,
    doneWord: 'replaced',
  };
}

describe('plan: the canary wave (sequence/canary.ts)', () => {
  it('opens one slot, then waits while the canary runs', () => {
    assert.deepEqual(canaryGate(progress([], 0), at(0).getTime()), { open: true, limit: 1 });
    const running = canaryGate(progress([], 1), at(0).getTime());
    assert.equal(running?.open, false);
  });

  it('soaks for soakSeconds from when the canary was done, then passes', () => {
    const soaking = canaryGate(progress([{ ready: true, at: 100 }], 0), at(130).getTime());
    assert.equal(soaking?.open, false);
    assert.match(soaking?.open === false ? soaking.reason : '', /soaking for 60s, until .*T10:02:40/);
    assert.equal(canaryGate(progress([{ ready: true, at: 100 }], 0), at(161).getTime()), undefined);
  });

  it('a canary node NotReady before the rest started closes the gate', () => {
    const gate = canaryGate(progress([{ ready: false, at: 100 }], 0), at(400).getTime());
    assert.equal(gate?.open, false);
    assert.match(gate?.open === false ? gate.reason : '', /canary node w-0 is not Ready/);
  });

  it('once a node past the wave is done, a canary rebooted later does not close it again', () => {
    // w-0 was the canary, w-1 came after it; w-0 is NotReady (another operation reboots it).
    assert.equal(
      canaryGate(
        progress(
          [
            { ready: false, at: 100 },
            { ready: true, at: 300 },
          ],
          0,
        ),
        at(400).getTime(),
      ),
      undefined,
    );
  });
});
