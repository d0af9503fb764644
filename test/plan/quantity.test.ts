import { strict as assert } from 'node:assert';
import { ClusterBudget } from '../../src/plan/budget.js';
import { compareNames } from '../../src/plan/order.js';
import { resolveLimits } from '../../src/plan/quantity.js';
import type { IntOrPercent } from '../../src/spec/model.js';
import { config, node } from './fixtures.js';

describe('plan: rollout limits and the cluster budget', () => {
  // Kubernetes' rules: maxSurge rounds up, maxUnavailable rounds down; both 0 → unavailable 1.
  const cases: [IntOrPercent, IntOrPercent, number, { maxSurge: number; maxUnavailable: number }][] = [
    [1, 0, 10, { maxSurge: 1, maxUnavailable: 0 }],
    ['25%', '25%', 10, { maxSurge: 3, maxUnavailable: 2 }],
    ['10%', '10%', 5, { maxSurge: 1, maxUnavailable: 0 }],
    [0, 0, 10, { maxSurge: 0, maxUnavailable: 1 }],
    ['0%', '0%', 10, { maxSurge: 0, maxUnavailable: 1 }],
    ['100%', 2, 3, { maxSurge: 3, maxUnavailable: 2 }],
    [2.7, 1.2, 10, { maxSurge: 2, maxUnavailable: 1 }],
  ];
  for (const [surge, unavailable, total, expected] of cases) {
    it(`maxSurge ${String(surge)}, maxUnavailable ${String(unavailable)} of ${total}`, () => {
      assert.deepEqual(resolveLimits(surge, unavailable, total), expected);
    });
  }

  const busy = (phase: string, extra: Record<string, string> = {}, unschedulable = false) =>
    node(`n-${phase}-${Object.keys(extra).length}`, `sim://g/${phase}`, {
      unschedulable,
      annotations: { 'drydock.dev/operation': 'NodeOp/x@1', 'drydock.dev/phase': phase, ...extra },
    });
  const budgetCases: [string, IntOrPercent, ReturnType<typeof node>[], number][] = [
    ['nothing in flight', 3, [node('a', 'p://a'), node('b', 'p://b')], 3],
    ['a Draining node uses one', 3, [busy('Draining', {}, true)], 2],
    ['a Pending node reserves one', 3, [busy('Pending')], 2],
    ['a Done node uses none', 3, [busy('Done')], 3],
    ['a Failed node left uncordoned uses none', 3, [busy('Failed')], 3],
    // It waits for a person, never holding the budget for every other operation (onFailure keepCordoned).
    ['a Failed node drydock left cordoned uses none', 3, [busy('Failed', { 'drydock.dev/cordoned': 'true' }, true)], 3],
    ['a percentage of a small cluster allows one', '10%', [node('a', 'p://a')], 1],
    ['a literal 0 allows none', 0, [node('a', 'p://a')], 0],
  ];
  for (const [name, value, nodes, free] of budgetCases) {
    it(`budget: ${name}`, () => assert.equal(new ClusterBudget(config(value), nodes).free, free));
  }
});

describe('plan: node order', () => {
  it('sorts names naturally, and stays a total order', () => {
    const names = ['worker-10', 'worker-2', 'worker-02', 'cp-1', 'worker-1', 'worker-b', 'worker-a', 'worker'];
    assert.deepEqual([...names].sort(compareNames), [
      'cp-1',
      'worker',
      'worker-1',
      'worker-2',
      'worker-02',
      'worker-10',
      'worker-a',
      'worker-b',
    ]);
  });
});
