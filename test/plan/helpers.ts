/** Shared pieces of the planner's table tests: the spec under test and its lock value. */
import type { ObservedState } from '../../src/observe/types.js';
import type { DesiredState } from '../../src/spec/model.js';
import { strict as assert } from 'node:assert';
import { plan, type Action, type Plan, type PlanOptions } from '../../src/plan/index.js';
import type { ObservedPod } from '../../src/observe/types.js';
import { ANNOTATIONS } from '../../src/protocol/keys.js';
import { cloudGroup, instance, iso, node, observed, providerID, workers } from './fixtures.js';

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

/** Every case also checks that each action says why (a reason a person can read). */
export function runCases(cases: readonly Case[]): void {
  for (const c of cases) {
    it(c.name, () => {
      const p = plan(c.desired, c.observed, c.now, c.options);
      for (const a of p.actions) assert.ok(a.reason.trim().length > 0, `${a.kind} without a reason`);
      c.check(nodeSteps(p));
    });
  }
}

/**
 * The plan without the taints of nodes drained later (plan/drain-pending.ts), for tables that
 * state a round's steps: a rollout's first round marks every node it will drain, which those
 * tables are not about. drain-pending.test.ts states the marks; the invariants and the
 * simulated worlds (plan/sequence) run with them.
 */
export function nodeSteps(p: Plan): Plan {
  return { ...p, actions: p.actions.filter((a) => a.kind !== 'markDrainPending') };
}

/**
 * The plan's steps (nodeSteps) without their reasons, for tables that state what is done; a
 * deletePod keeps its reason, which those tables check (it says which policy forced the delete).
 */
export function bare(p: Plan): Array<Omit<Action, 'reason'> | Action> {
  return nodeSteps(p).actions.map((a) => {
    if (a.kind === 'deletePod') return a;
    const { reason: _reason, ...rest } = a;
    return rest;
  });
}

export function waitCodes(p: Plan): string[] {
  return p.waits.map((w) => w.code);
}

/**
 * worker-0 and worker-1 on V1; worker-0 started at t=0 for replacement i-9 (created at 5 s),
 * which has joined as worker-9, Ready since `readySince`, not marked yet.
 */
export function replacementJoined(o: { readySince: number; pods?: ObservedPod[] }): ObservedState {
  const w = workers(2, V1, (i) =>
    i === 0
      ? {
          annotations: {
            [ANNOTATIONS.operation]: LOCK,
            [ANNOTATIONS.phase]: 'Pending',
            [ANNOTATIONS.phaseSince]: iso(0),
            [ANNOTATIONS.replacedBy]: 'i-9',
          },
        }
      : {},
  );
  return observed({
    nodes: [...w.nodes, node('worker-9', providerID('workers', 'i-9'), { readySince: o.readySince })],
    pods: o.pods ?? [],
    cloudGroups: [cloudGroup('workers', V2, [...w.instances, instance('workers', 'i-9', V2, 5)], 3)],
  });
}

/** What a released node loses: every key an operation writes while it holds a node. */
export const RELEASED = Object.fromEntries(
  [
    ANNOTATIONS.operation,
    ANNOTATIONS.phase,
    ANNOTATIONS.phaseSince,
    ANNOTATIONS.cordoned,
    ANNOTATIONS.replacedBy,
    ANNOTATIONS.reason,
    ANNOTATIONS.failures,
    ANNOTATIONS.halts,
    ANNOTATIONS.bootID,
    ANNOTATIONS.job,
    ANNOTATIONS.evicted,
  ].map((k) => [k, null]),
);
