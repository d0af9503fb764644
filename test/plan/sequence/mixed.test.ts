/**
 * A NodeImage replace rollout, a NodeOp with a Job and a reboot per node, and a person's
 * NodeMaintenances, all active at once (mixed.ts): one cluster budget and one lock per node,
 * checked from the world after every action, and everything completes.
 */
import { strict as assert } from 'node:assert';
import { runMixed } from './mixed.js';
import { mixed } from './scenarios.js';

// 16: a NodeOp node spends fewer rounds down than it did, and 8 seeds no longer always
// brought all three kinds down at once, which the last assertion wants to have seen.
const SEEDS = Number(process.env['SEQUENCE_MIXED_SEEDS'] ?? 16);
const FIRST = Number(process.env['SEQUENCE_MIXED_FIRST_SEED'] ?? 1);

describe('plan/sequence: a NodeImage rollout, a NodeOp and NodeMaintenances at once', function () {
  this.timeout(120_000);

  it(`hold one budget and one lock per node, and all complete (${SEEDS} seeds)`, () => {
    let allThree = 0;
    let waitedForNodeOp = 0;
    const gates = { approval: 0, window: 0, canaryTaken: 0 };
    for (let seed = FIRST; seed < FIRST + SEEDS; seed++) {
      const s = mixed(seed);
      const r = runMixed(s);
      const tail = `seed ${seed}:\n${r.log.slice(-40).join('\n')}`;
      assert.deepEqual(r.violations, [], tail);
      assert.equal(r.outcome, 'complete', `ended ${r.outcome}; ${tail}`);
      const by = new Map(r.placed.map((p) => [p.m.name, p]));
      // The maintenance came for the node the rollout was about to take, and the rollout let it.
      assert.ok(by.get('first')?.phases.includes('Succeeded'), `seed ${seed}: the first maintenance drained its node`);
      if (by.get('mid')?.heldBy?.startsWith('NodeOp/') === true) waitedForNodeOp++;
      // Leaving Git uncordons a node drydock cordoned, never one a person did.
      assert.ok(r.releasedCordoned.has('hand') && r.releasedCordoned.has('first'), `seed ${seed}: both released`);
      for (const [name, cordoned] of r.releasedCordoned) {
        const node = by.get(name)?.m.nodeName ?? '';
        assert.equal(cordoned, r.world.cordonedByHand.has(node), `seed ${seed}: ${name} released ${node}`);
      }
      if (r.allThreeRounds > 0) allThree++;
      if (r.gates.waited.approval > 0) gates.approval++;
      if (r.gates.waited.window > 0) gates.window++;
      if (r.gates.canaryTakenWhileWaiting > 0) gates.canaryTaken++;
    }
    // The gates were met, not only configured: some run waited for a person, some for a window,
    // and in some the NodeOp had the image's canary node while the image waited for afterCanary.
    assert.ok(gates.approval > 0 && gates.window > 0, `gates met: ${JSON.stringify(gates)}`);
    assert.ok(gates.canaryTaken > 0, `no run had the NodeOp take the image's canary before its approval`);
    assert.ok(waitedForNodeOp > 0, 'no maintenance came for a node the NodeOp had in flight');
    assert.ok(allThree > 0, 'no seed had a NodeImage node, a NodeOp node and a maintained node unavailable at once');
  });
});
