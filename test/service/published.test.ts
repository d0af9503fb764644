/**
 * What the planner is told the status branch holds: nothing without a status branch; the
 * tip's ended maintenances and metric halts before a leader's first write (read once per leadership, and no
 * write until that read succeeded); the last snapshot written afterwards.
 */
import { strict as assert } from 'node:assert';
import { pino } from 'pino';
import type { SpecStatus } from '../../src/plan/types.js';
import { PublishedStatuses } from '../../src/service/published.js';
import { buildStatus, type StatusSnapshot } from '../../src/service/status.js';
import { specStatus } from '../support/spec-status.js';

const ended = specStatus('NodeMaintenance', 'disk', {
  phase: 'Ended',
  maintenance: {
    nodeName: 'w-1',
    reason: 'replace disk',
    totalPods: 0,
    evictionPods: 0,
    pendingPods: [],
    drainProgress: 100,
    endedAt: '2026-03-02T10:00:00.000Z',
  },
});
const running = specStatus('NodeMaintenance', 'fan', { phase: 'Running' });
const image = specStatus('NodeImage', 'worker', { phase: 'Complete' });

function world(tip: () => readonly SpecStatus[] | Error, withBranch = true) {
  let written: StatusSnapshot | undefined;
  const reads: string[] = [];
  const published = new PublishedStatuses({
    ...(withBranch
      ? {
          read: async (cluster: string) => {
            reads.push(cluster);
            const t = tip();
            if (t instanceof Error) throw t;
            return t;
          },
        }
      : {}),
    written: () => written,
    logger: pino({ level: 'silent' }),
  });
  return { published, reads, write: (s: StatusSnapshot | undefined) => void (written = s) };
}

describe('service: what the status branch holds, for the plan', () => {
  it('without a status branch the plan is given nothing and writes are not held', async () => {
    const w = world(() => [ended], false);
    assert.equal(await w.published.forPlan('c', true), undefined);
    assert.equal(w.published.mayWrite(), true);
    assert.deepEqual(w.reads, []);
  });

  it('a new leader reads the tip once and carries only its ended maintenances', async () => {
    const w = world(() => [image, running, ended]);
    assert.equal(w.published.mayWrite(), false);
    assert.deepEqual(await w.published.forPlan('c', true), [ended]);
    assert.equal(w.published.mayWrite(), true);
    assert.deepEqual(await w.published.forPlan('c', true), [ended]);
    assert.deepEqual(w.reads, ['c']);
  });

  it("a new leader carries a spec's metric halt, which outlasts the process that saw the breach", async () => {
    const halted = specStatus('NodeOp', 'patch', {
      phase: 'Progressing',
      metricHalt: { breach: 'alert NodeDown firing since 2026-03-02T09:58:00.000Z', since: '2026-03-02T09:58:00.000Z' },
    });
    const w = world(() => [image, halted, running, ended]);
    assert.deepEqual(await w.published.forPlan('c', true), [halted, ended]);
  });

  it('after a write, the snapshot written is what the branch holds', async () => {
    const w = world(() => [ended]);
    await w.published.forPlan('c', true);
    w.write({ ...buildStatus({ cluster: 'c' }), specs: [image] });
    assert.deepEqual(await w.published.forPlan('c', true), [image]);
    assert.equal(w.published.mayWrite(), true);
  });

  it("a failed round's report, which has no specs, does not make the plan forget the endings", async () => {
    const w = world(() => [ended]);
    await w.published.forPlan('c', true);
    w.write(buildStatus({ cluster: 'c', error: { code: 'observe', message: 'the API server did not answer' } }));
    assert.deepEqual(await w.published.forPlan('c', true), [ended]);
    assert.equal(w.published.mayWrite(), true);
    assert.deepEqual(w.reads, ['c']);
  });

  it('a takeover reads the tip again: another replica may have written since', async () => {
    let tip: readonly SpecStatus[] = [];
    const w = world(() => tip);
    assert.deepEqual(await w.published.forPlan('c', true), []);
    w.published.forget();
    w.write(undefined);
    assert.equal(w.published.mayWrite(), false, 'the round planned before the takeover is not written');
    tip = [ended];
    assert.deepEqual(await w.published.forPlan('c', true), [ended]);
    assert.deepEqual(w.reads, ['c', 'c']);
  });

  it('a tip that cannot be read holds every write until it can, and is read again next round', async () => {
    let tip: readonly SpecStatus[] | Error = new Error('fetch failed');
    const w = world(() => tip);
    assert.equal(await w.published.forPlan('c', true), undefined);
    assert.equal(w.published.mayWrite(), false);
    tip = [ended];
    assert.deepEqual(await w.published.forPlan('c', true), [ended]);
    assert.equal(w.published.mayWrite(), true);
  });

  it('a standby, or a leader before the cluster is named, does not read the tip', async () => {
    const w = world(() => [ended]);
    assert.equal(await w.published.forPlan('c', false), undefined);
    assert.equal(await w.published.forPlan('', true), undefined);
    assert.deepEqual(w.reads, []);
    assert.equal(w.published.mayWrite(), false);
  });
});
