/**
 * StartSlots' hand-over (sequence/admit.ts): a node finished this round gives its place to one
 * waiting node, one for one, and only where that keeps every limit as it stands now.
 */
import { strict as assert } from 'node:assert';
import { ClusterBudget } from '../../src/plan/budget.js';
import { StartSlots, type HandOver } from '../../src/plan/sequence/admit.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { config, node } from './fixtures.js';
import { LOCK } from './helpers.js';

/** `held` nodes locked (in flight), `free` more idle; the budget allows `max`. */
function budgetOf(max: number, held: number, free = 4): ClusterBudget {
  const nodes = [
    ...Array.from({ length: held }, (_, i) =>
      node(`held-${i}`, `sim://g/held-${i}`, {
        annotations: { [ANNOTATIONS.operation]: LOCK, [ANNOTATIONS.phase]: 'Pending' },
      }),
    ),
    ...Array.from({ length: free }, (_, i) => node(`free-${i}`, `sim://g/free-${i}`)),
  ];
  return new ClusterBudget(config(max), nodes);
}

const finished = (node: string, own?: string): HandOver => ({
  node,
  unavailable: false,
  ...(own !== undefined ? { own } : {}),
});
const full = { code: 'surge' as const, reason: 'the group is full' };

describe('plan: a finished node hands its place over (StartSlots)', () => {
  it('at the concurrency limit: one node per finished node, in its lane', () => {
    const slots = new StartSlots({ concurrency: 2 }, 2, undefined, budgetOf(10, 2), [finished('held-0')]);
    assert.deepEqual(slots.take(), { after: 'held-0', from: finished('held-0') });
    assert.equal(slots.take(), undefined);
  });

  it('at the budget: the finished node gives its share back for the node that takes its place', () => {
    const budget = budgetOf(2, 2);
    const slots = new StartSlots({ concurrency: 0 }, 2, undefined, budget, [finished('held-1')]);
    assert.equal(slots.take()?.after, 'held-1');
    assert.equal(budget.free, 0);
    assert.equal(slots.take(), undefined);
  });

  it('a concurrency lowered under the nodes in flight is reached as they finish: nothing is handed over', () => {
    const slots = new StartSlots({ concurrency: 1 }, 3, undefined, budgetOf(10, 3), [finished('held-0')]);
    assert.equal(slots.take(), undefined);
  });

  it('a budget lowered under the nodes in flight: nothing is handed over', () => {
    const slots = new StartSlots({ concurrency: 0 }, 3, undefined, budgetOf(1, 3), [finished('held-0')]);
    assert.equal(slots.take(), undefined);
  });

  it("past the kind's own limit, only a place of that same limit (a replace's group) is taken", () => {
    const slots = new StartSlots({ concurrency: 0 }, 2, undefined, budgetOf(10, 2), [
      finished('held-0', 'group-a'),
      finished('held-1', 'group-b'),
    ]);
    assert.equal(slots.take(() => full, 'group-b')?.after, 'held-1');
    assert.equal(
      slots.take(() => full, 'group-b'),
      undefined,
    );
    assert.equal(slots.take(() => full, 'group-a')?.after, 'held-0');
  });

  it("past the kind's own limit with no key for it, no place is taken", () => {
    const slots = new StartSlots({ concurrency: 0 }, 1, undefined, budgetOf(10, 1), [finished('held-0', 'group-a')]);
    assert.equal(
      slots.take(() => full),
      undefined,
    );
  });

  it("held by concurrency alone, any finished node's place serves", () => {
    const slots = new StartSlots({ concurrency: 1 }, 1, undefined, budgetOf(10, 1), [finished('held-0', 'group-a')]);
    assert.equal(slots.take(() => undefined, 'group-b')?.after, 'held-0');
  });

  it("never past the canary's share", () => {
    const slots = new StartSlots({ concurrency: 1, canary: { nodes: 1 } as never }, 1, 0, budgetOf(10, 1), [
      finished('held-0'),
    ]);
    assert.equal(slots.take(), undefined);
  });
});
