/** Lease election against a real API server: one leader at a time, clean hand-over. */
import assert from 'node:assert/strict';
import { CoordinationV1Api, CoreV1Api, V1MicroTime } from '@kubernetes/client-node';
import { pino } from 'pino';
import { useControlPlane, eventually, retryOnConflict } from '../support/control-plane.js';
import { startLeaderElection, type LeaderElector } from '../../src/service/leader.js';

const logger = pino({ level: process.env.DRYDOCK_TEST_LOG ?? 'silent' });
const timing = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 200 };

describe('leader election against a real API server', function () {
  this.timeout(60_000);
  const cp = useControlPlane();
  const electors: LeaderElector[] = [];
  before(async () => {
    await cp()
      .adminKubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: 'drydock-system' } } });
  });
  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop()));
  });

  function candidate(
    identity: string,
    name: string,
    log: string[],
    onSyncRequested?: () => void,
    timings: typeof timing = timing,
  ): LeaderElector {
    const e = startLeaderElection({
      ...(onSyncRequested ? { onSyncRequested } : {}),
      kubeConfig: cp().adminKubeConfig(),
      namespace: 'drydock-system',
      name,
      identity,
      ...timings,
      logger,
      onStartedLeading: () => log.push(`${identity}+`),
      onStoppedLeading: () => log.push(`${identity}-`),
    });
    electors.push(e);
    return e;
  }

  it('elects exactly one of two replicas, and hands over at once when the leader stops', async () => {
    const log: string[] = [];
    // A long lease, so that a take-over by expiry (15 s) and one by release (a retry period)
    // stay far apart however loaded the machine is.
    const slow = { ...timing, leaseDurationMs: 15_000, renewDeadlineMs: 10_000 };
    const a = candidate('a', 'lease-1', log, undefined, slow);
    await eventually('a leads', async () => a.isLeader());
    const b = candidate('b', 'lease-1', log, undefined, slow);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(b.isLeader(), false);
    const t0 = Date.now();
    await a.stop();
    assert.equal(a.isLeader(), false);
    await eventually('b leads', async () => b.isLeader());
    // Released, not expired: faster than a lease duration.
    assert.ok(Date.now() - t0 < slow.leaseDurationMs, `took ${Date.now() - t0} ms`);
    assert.deepEqual(log, ['a+', 'a-', 'b+']);
    const lease = await cp()
      .adminKubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'lease-1', namespace: 'drydock-system' });
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
  });

  it('stops leading as soon as someone else takes the lease', async () => {
    const log: string[] = [];
    const a = candidate('a', 'lease-2', log);
    await eventually('a leads', async () => a.isLeader());
    const coord = cp().adminKubeConfig().makeApiClient(CoordinationV1Api);
    // The leader renews every retry period, so its renewal can land between our read and our
    // replace (409): an intruder takes the lease as any client would, reading it again.
    await retryOnConflict(async () => {
      const lease = await coord.readNamespacedLease({ name: 'lease-2', namespace: 'drydock-system' });
      await coord.replaceNamespacedLease({
        name: 'lease-2',
        namespace: 'drydock-system',
        body: {
          ...lease,
          spec: {
            ...lease.spec,
            holderIdentity: 'intruder',
            renewTime: new V1MicroTime(Date.now()),
            leaseDurationSeconds: 30,
          },
        },
      });
    });
    await eventually('a steps down', async () => !a.isLeader(), { timeoutMs: 10_000, intervalMs: 50 });
    assert.deepEqual(log, ['a+', 'a-']);
  });

  it('relays a sync request from the standby to the leader through the Lease', async () => {
    let leaderSyncs = 0;
    let standbySyncs = 0;
    const log: string[] = [];
    const a = candidate('a', 'lease-3', log, () => leaderSyncs++);
    await eventually('a leads', async () => a.isLeader());
    const b = candidate('b', 'lease-3', [], () => standbySyncs++);
    await new Promise((r) => setTimeout(r, 400));
    await b.requestSync();
    await eventually('the leader saw the request', async () => leaderSyncs === 1, { timeoutMs: 5_000, intervalMs: 50 });
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(leaderSyncs, 1, 'once per request');
    assert.equal(standbySyncs, 0, 'only the leader acts on it');
    assert.deepEqual(log, ['a+'], 'the annotation did not cost the leader its leadership');
  });
});
