import { strict as assert } from 'node:assert';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { Leadership, type LeaderElectionOptions } from '../../src/service/leader.js';

function world() {
  let t = 1_000_000;
  const events: string[] = [];
  const opts: LeaderElectionOptions = {
    kubeConfig: {} as KubeConfig,
    namespace: 'ns',
    name: 'drydock',
    identity: 'me',
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    logger: pino({ level: 'silent' }),
    onStartedLeading: () => void events.push('started'),
    onStoppedLeading: () => void events.push('stopped'),
  };
  return { l: new Leadership(opts, () => t), events, advance: (ms: number) => void (t += ms) };
}

const won = async () => true;
const lost = async () => false;
const failed = async (): Promise<boolean> => {
  throw new Error('apiserver unreachable');
};

describe('leadership (injected clock)', () => {
  it('starts leading once on winning the lease, and stops when another replica holds it', async () => {
    const w = world();
    await w.l.round(won);
    await w.l.round(won);
    assert.equal(w.l.isLeader(), true);
    await w.l.round(lost);
    assert.equal(w.l.isLeader(), false);
    assert.deepEqual(w.events, ['started', 'stopped']);
  });

  it('stops acting at the renew deadline while renewals fail, before the next round notices', async () => {
    const w = world();
    await w.l.round(won);
    w.advance(6_000);
    await w.l.round(failed);
    assert.equal(w.l.isLeader(), true, 'one failed renewal within the deadline keeps leadership');
    w.advance(3_999);
    assert.equal(w.l.isLeader(), true);
    w.advance(1);
    assert.equal(w.l.isLeader(), false, 'isLeader answers by the clock alone');
    assert.deepEqual(w.events, ['started']);
    await w.l.round(failed);
    assert.deepEqual(w.events, ['started', 'stopped'], 'the next round lets go and says so');
  });

  it('ignores a round that finishes after stop', async () => {
    const w = world();
    w.l.stopped = true;
    await w.l.round(won);
    assert.equal(w.l.isLeader(), false);
    assert.deepEqual(w.events, []);
  });
});
