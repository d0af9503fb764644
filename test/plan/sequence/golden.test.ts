import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { runScenario, type Scenario } from './driver.js';
import { STEADY } from './scenarios.js';

/** Golden stories: read them when they change; UPDATE_GOLDEN=1 rewrites them. */
const GOLDEN = new URL('../../../../test/plan/sequence/golden/', import.meta.url);
const calm = { neverJoins: 0, evict429: 0 };

const stories: Record<string, Scenario> = {
  // Four workers, a canary of one that soaks two minutes, then two at a time.
  'canary-then-waves': {
    seed: 1,
    nodes: 4,
    budget: 2,
    rollout: { maxSurge: 2, canary: { nodes: 1, soakSeconds: 120 }, healthGate: { minReadySeconds: 10 } },
    timing: STEADY,
    faults: calm,
    crash: 0,
    images: [[0, 'img:v2']],
  },
  // A boot that never joins, an eviction refused by its PDB, and drydock restarting mid-round.
  'faults-and-restarts': {
    seed: 2,
    nodes: 3,
    budget: 1,
    rollout: { maxSurge: 1, joinTimeoutSeconds: 180 },
    timing: STEADY,
    faults: { neverJoins: 0.3, evict429: 0.3 },
    crash: 0.2,
    images: [[0, 'img:v2']],
  },
  // The image goes back to v1 while the first replacement is still booting.
  revert: {
    seed: 3,
    nodes: 3,
    budget: 2,
    rollout: { maxSurge: 2 },
    timing: STEADY,
    faults: calm,
    crash: 0,
    images: [
      [0, 'img:v2'],
      [30, 'img:v1'],
    ],
  },
  // One control-plane node and two workers: the control plane goes first, alone.
  'control-plane-first': {
    seed: 7,
    nodes: 2,
    controlPlane: 1,
    budget: 2,
    rollout: { maxSurge: 2 },
    timing: STEADY,
    faults: calm,
    crash: 0,
    images: [[0, 'img:v2']],
  },
  // stopOnFailure: the first replacement never joins; the rollout halts and says why.
  'stop-on-failure': {
    seed: 5,
    nodes: 3,
    budget: 2,
    rollout: { maxSurge: 1, stopOnFailure: true, joinTimeoutSeconds: 120 },
    timing: STEADY,
    faults: { neverJoins: 1, evict429: 0 },
    crash: 0,
    images: [[0, 'img:v2']],
  },
};

describe('plan/sequence: golden stories', () => {
  for (const [name, scenario] of Object.entries(stories)) {
    it(name, () => {
      const r = runScenario(scenario);
      const text = `${r.log.join('\n')}\n`;
      const file = new URL(`${name}.log`, GOLDEN);
      if (process.env['UPDATE_GOLDEN'] === '1') {
        mkdirSync(GOLDEN, { recursive: true });
        writeFileSync(file, text);
      }
      assert.deepEqual(r.violations, []);
      assert.equal(text, readFileSync(file, 'utf8'));
    });
  }
});
