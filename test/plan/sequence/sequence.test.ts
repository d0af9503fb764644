import { strict as assert } from 'node:assert';
import { runScenario } from './driver.js';
import { chaos, halting, revertRace } from './scenarios.js';

const SEEDS = Number(process.env['SEQUENCE_SEEDS'] ?? 50);

describe('plan/sequence: the planner driven against a simulated world', function () {
  this.timeout(120_000);

  it(`converges under random delays, failed boots, refused evictions and restarts (${SEEDS} seeds)`, () => {
    const outcomes = new Map<string, number>();
    let maintained = 0;
    let drained = 0;
    let overlapping = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const scenario = chaos(seed);
      const r = runScenario(scenario);
      if (scenario.maintenance !== undefined) {
        maintained++;
        // Every maintenance ends (its file leaves Git) before the rollout can complete, unless
        // the rollout had replaced its node first: then it said so (Failed, node missing).
        const missing = r.log.some((l) => l.includes(`node ${scenario.maintenance?.node} does not exist`));
        const last = r.maintenancePhases.at(-1);
        assert.ok(
          last === 'Ended' || (last === 'Failed' && missing),
          `seed ${seed}: NodeMaintenance went ${r.maintenancePhases.join(' > ')}`,
        );
        if (r.maintenancePhases.includes('Succeeded')) drained++;
        if (r.overlapRounds > 0) overlapping++;
      }
      outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
      assert.deepEqual(r.violations, [], `seed ${seed}:\n${r.log.slice(-30).join('\n')}`);
      assert.equal(r.outcome, 'complete', `seed ${seed} ended ${r.outcome}:\n${r.log.slice(-30).join('\n')}`);
    }
    // The maintenance must really run beside the rollout, not only before or after it.
    assert.ok(
      maintained >= SEEDS / 4 && drained >= maintained / 2,
      `${drained} of ${maintained} maintenances drained their node`,
    );
    assert.ok(
      overlapping >= 1,
      `no seed had a maintenance and a rollout node unavailable at once (${maintained} maintenances)`,
    );
  });

  it(`halts cleanly under stopOnFailure (${SEEDS} seeds)`, () => {
    let halted = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = runScenario(halting(seed));
      assert.deepEqual(r.violations, [], `seed ${seed}:\n${r.log.slice(-30).join('\n')}`);
      // skipNode gives a node back without failing: the rollout goes on and ends waiting for it.
      assert.ok(
        r.outcome === 'complete' || r.outcome === 'halted' || r.outcome === 'skipped',
        `seed ${seed} ended ${r.outcome}`,
      );
      if (r.outcome === 'halted') {
        halted++;
        const status = r.lastPlan.specs.find((s) => s.spec.kind === 'NodeImage');
        assert.ok(status?.lastError, `seed ${seed}: a halted rollout says why`);
        assert.equal(status?.conditions.find((c) => c.type === 'Stalled')?.status, 'True');
      }
    }
    // With a third of all boots failing, most runs must actually exercise the halt.
    assert.ok(halted >= SEEDS / 4, `only ${halted} of ${SEEDS} runs halted`);
  });

  it(`a revert mid-rollout with drydock stopping after each surge leaves every group its size (${SEEDS} seeds)`, () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const s = revertRace(seed);
      const r = runScenario(s);
      const tail = r.log.slice(-40).join('\n');
      for (const [group, size] of [
        ['cp', s.controlPlane ?? 0],
        ['worker', s.nodes],
      ] as const) {
        const live = [...r.world.instances.values()].filter((i) => i.group === group && i.state === 'running').length;
        assert.equal(r.world.groups.get(group)?.targetSize, size, `seed ${seed}: group ${group} target size\n${tail}`);
        assert.equal(live, size, `seed ${seed}: group ${group} instances\n${tail}`);
      }
      assert.deepEqual(r.violations, [], `seed ${seed}:\n${tail}`);
      assert.equal(r.outcome, 'complete', `seed ${seed} ended ${r.outcome}:\n${tail}`);
    }
  });
});
