import { strict as assert } from 'node:assert';
import type { V1Lease } from '@kubernetes/client-node';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { LeaseObserver } from '../../src/service/lease-observer.js';

const lease = (
  holder: string,
  renewTime: string,
  opts: { durationSeconds?: number; syncRequest?: string } = {},
): V1Lease => ({
  metadata: {
    name: 'drydock',
    namespace: 'ns',
    ...(opts.syncRequest ? { annotations: { [ANNOTATIONS.syncRequested]: opts.syncRequest } } : {}),
  },
  spec: {
    holderIdentity: holder,
    renewTime: new Date(renewTime) as unknown as never,
    ...(opts.durationSeconds !== undefined ? { leaseDurationSeconds: opts.durationSeconds } : {}),
  },
});

describe('lease observer (injected clock)', () => {
  function world() {
    let t = 1_000_000;
    return { o: new LeaseObserver('me', 15, () => t), advance: (ms: number) => void (t += ms) };
  }

  it("takes a rival's lease only after it stayed unchanged for the lease duration on our own clock", () => {
    const { o, advance } = world();
    // The rival's renewTime is far in the past by our clock: skew does not matter, only change does.
    const stale = lease('rival', '2000-01-01T00:00:00Z', { durationSeconds: 10 });
    assert.equal(o.see(stale).mayTake, false);
    advance(9_999);
    assert.equal(o.see(stale).mayTake, false);
    advance(1);
    assert.equal(o.see(stale).mayTake, true);
  });

  it('starts counting again when the holder renews', () => {
    const { o, advance } = world();
    o.see(lease('rival', '2000-01-01T00:00:00Z', { durationSeconds: 10 }));
    advance(9_000);
    assert.equal(o.see(lease('rival', '2000-01-01T00:00:05Z', { durationSeconds: 10 })).mayTake, false);
    advance(9_000);
    assert.equal(o.see(lease('rival', '2000-01-01T00:00:05Z', { durationSeconds: 10 })).mayTake, false);
    advance(1_000);
    assert.equal(o.see(lease('rival', '2000-01-01T00:00:05Z', { durationSeconds: 10 })).mayTake, true);
  });

  it('uses its own lease duration when the Lease names none, and may always take its own or a free lease', () => {
    const { o, advance } = world();
    const rival = lease('rival', '2000-01-01T00:00:00Z');
    o.see(rival);
    advance(14_999);
    assert.equal(o.see(rival).mayTake, false);
    advance(1);
    assert.equal(o.see(rival).mayTake, true);
    assert.deepEqual(o.see(lease('me', '2000-01-01T00:00:00Z')), { mayTake: true, ours: true, syncRequested: false });
    assert.equal(o.see(lease('', '2000-01-01T00:00:00Z')).mayTake, true);
  });

  it('reports a new sync request once, and takes what the first read shows as history', () => {
    const { o } = world();
    const at = '2000-01-01T00:00:00Z';
    assert.equal(o.see(lease('me', at, { syncRequest: 'old' })).syncRequested, false);
    assert.equal(o.see(lease('me', at, { syncRequest: 'old' })).syncRequested, false);
    assert.equal(o.see(lease('me', at, { syncRequest: 'new' })).syncRequested, true);
    assert.equal(o.see(lease('me', at, { syncRequest: 'new' })).syncRequested, false);
    assert.equal(o.see(lease('me', at)).syncRequested, false, 'an annotation removed is no request');
  });
});
