/** Shared pieces of the planner's table tests: the spec under test and its lock value. */
import type { ObservedState } from '../../src/observe/types.js';
import type { DesiredState } from '../../src/spec/model.js';
import { plan, type Plan, type PlanOptions } from '../../src/plan/index.js';

export const SPEC = { kind: 'NodeImage', name: 'workers' } as const;
export const V1 = 'img:v1';
export const V2 = 'img:v2';
/** The lock a NodeImage named workers at image V2 writes (fixtures name revisions `<name>-<image>`). */
export const LOCK = 'NodeImage/workers@workers-img:v2';

export interface Case {
  readonly name: string;
  readonly desired: DesiredState;
  readonly observed: ObservedState;
  readonly now: Date;
  readonly options?: PlanOptions;
  readonly check: (p: Plan) => void;
}

export function runCases(cases: readonly Case[]): void {
  for (const c of cases) it(c.name, () => c.check(plan(c.desired, c.observed, c.now, c.options)));
}

export function waitCodes(p: Plan): string[] {
  return p.waits.map((w) => w.code);
}
