/**
 * What the forecast needs of a node operation (NodeOp, NodeOpUpgrade, inPlace NodeImage): its
 * nodes not done yet, in flight first, `concurrency` at a time within the cluster budget, inside
 * its maintenance window. No canary wave: a node operation's canary is concurrency 1.
 */
import type { DesiredState, NodeOp } from '../../spec/model.js';
import type { ForecastInput } from '../forecast.js';
import type { SpecStatus, Wait } from '../types.js';

/** Waits only a person ends: the forecast has no ETA while one holds the spec. */
const FOR_A_PERSON: ReadonlySet<Wait['code']> = new Set(['approval', 'halted']);

export function nodeOpForecastInput(input: {
  readonly status: SpecStatus;
  readonly op: NodeOp;
  readonly desired: DesiredState;
  readonly waits: readonly Wait[];
  readonly budgetMax: number;
  readonly now: number;
}): ForecastInput {
  const { status, op } = input;
  const left = status.nodes.filter((r) => r.phase !== 'Done' && r.phase !== 'Failed');
  const remaining = [...left.filter((r) => r.phase !== 'Pending'), ...left.filter((r) => r.phase === 'Pending')];
  const all = op.concurrency > 0 ? op.concurrency : Math.max(1, left.length);
  const name = op.rollout.window;
  const window = name === undefined ? undefined : input.desired.maintenanceWindows.find((w) => w.name === name);
  const mine = (w: Wait): boolean => w.spec.kind === status.spec.kind && w.spec.name === status.spec.name;
  return {
    spec: status.spec,
    remaining: remaining.map((r) => r.node),
    parallelism: Math.min(all, Math.max(1, input.budgetMax)),
    canaryNodes: 0,
    soakSeconds: 0,
    ...(window !== undefined ? { window } : {}),
    startAt: input.now,
    blocked: status.phase === 'Halted' || input.waits.some((w) => mine(w) && FOR_A_PERSON.has(w.code)),
  };
}
