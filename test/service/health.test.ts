import { strict as assert } from 'node:assert';
import { readiness, RoundWatch } from '../../src/service/health.js';

describe('service health (injected clock)', () => {
  function watch(stuckAfterMs = 60_000) {
    let t = 5_000_000;
    return { w: new RoundWatch(() => t, stuckAfterMs), advance: (ms: number) => void (t += ms) };
  }

  it('is live between rounds however long they are apart', () => {
    const { w, advance } = watch();
    assert.deepEqual(w.liveness(), { ok: true });
    w.roundStarted();
    w.roundEnded();
    advance(10 * 60_000);
    assert.deepEqual(w.liveness(), { ok: true });
  });

  it('fails only once a round has run longer than stuckAfterMs, and says for how long', () => {
    const { w, advance } = watch(60_000);
    w.roundStarted();
    advance(60_000);
    assert.deepEqual(w.liveness(), { ok: true }, 'exactly the limit is still live');
    advance(30_000);
    assert.deepEqual(w.liveness(), { ok: false, reason: 'a reconcile has been running for 90s' });
    w.roundEnded();
    assert.deepEqual(w.liveness(), { ok: true });
  });

  it('fails while shutting down', () => {
    const { w } = watch();
    w.shuttingDown();
    assert.deepEqual(w.liveness(), { ok: false, reason: 'shutting down' });
  });

  it('is ready with synced caches and a commit in force, and says what is missing otherwise', () => {
    const sha = 'a'.repeat(40);
    const refused = 'b'.repeat(40);
    assert.deepEqual(readiness({ synced: true, inForce: sha, newest: refused }), { ready: true, reasons: [] });
    assert.deepEqual(readiness({ synced: false }), {
      ready: false,
      reasons: ['cluster caches not synced', 'no commit fetched yet'],
    });
    assert.deepEqual(readiness({ synced: true, newest: refused }), {
      ready: false,
      reasons: ['no valid commit yet (newest bbbbbbb was refused)'],
    });
    assert.deepEqual(readiness({ synced: true, newest: 'dir-hash' }), {
      ready: false,
      reasons: ['no valid commit yet (newest dir-hash was refused)'],
    });
  });
});
