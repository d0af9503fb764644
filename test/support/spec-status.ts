/**
 * A spec's status as the planner gives it (SpecStatus), for tests of what is made of it: the
 * fields every status has, at their quiet values, and whatever the test says.
 */
import type { SpecKind } from '../../src/spec/model.js';
import type { SpecStatus } from '../../src/plan/types.js';

export function specStatus(kind: SpecKind, name: string, o: Partial<Omit<SpecStatus, 'spec'>> = {}): SpecStatus {
  return {
    spec: { kind, name },
    revision: 'r1',
    phase: 'Progressing',
    progress: { done: 0, total: 0 },
    failures: 0,
    conditions: [],
    nodes: [],
    pending: [],
    ...o,
  };
}
