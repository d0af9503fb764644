/**
 * What an operation kind is to the planner. A kind supplies only what is its own: which nodes
 * its specs want and in what state (read from the round, writing nothing), its operation step
 * and how it verifies it, and its forecast. The shared node sequence (sequence/: the start
 * gate with its window, approvals, canary and limits; taking and releasing a node; the drain;
 * what a failure, a halt or a skip means) is written once and called by every kind.
 *
 * Adding a kind is a folder beside replace/ that exports an OperationKind, and one line in
 * kinds.ts.
 */
import type { DesiredState } from '../spec/model.js';
import type { ClusterBudget } from './budget.js';
import type { PlanBuilder } from './builder.js';
import type { PendingControlPlane } from './control-plane.js';
import type { ForecastInput } from './forecast.js';
import type { ResolvedOptions } from './options.js';
import type { StartGates } from './sequence/start-gate.js';
import type { SpecStatus } from './types.js';
import type { ClusterView } from './view.js';

/** What every kind's round reads and writes: the state, the plan being built, the budget, the time. */
export interface Round {
  readonly desired: DesiredState;
  readonly view: ClusterView;
  readonly b: PlanBuilder;
  readonly budget: ClusterBudget;
  readonly options: ResolvedOptions;
  readonly now: number;
  readonly nowIso: string;
}

/** One spec's outcome of the round: its status, and what the forecast needs (none for a kind without waves). */
export interface SpecOutcome {
  readonly status: SpecStatus;
  readonly forecast?: ForecastInput;
}

/** The gates of the round that hold a spec from outside it, asked per spec ("NodeImage/workers"). */
export type RoundGates = (operation: string) => StartGates;

/** A kind's specs as read at the start of the round, before any spec moves a node. */
export interface KindRound {
  /** Whether a spec of this kind has nodes to replace: the cluster-autoscaler stays paused while one has. */
  readonly running: boolean;
  /** Why it is unknown whether one has (a scaling group not observed): a paused autoscaler stays paused. */
  readonly unknown?: string;
  /** Each spec's first control-plane node still to do (controlPlaneFirst across specs). */
  readonly controlPlanes: readonly PendingControlPlane[];
  /** Moves the kind's specs one round: writes to round.b, returns one outcome per spec. */
  plan(gates: RoundGates): SpecOutcome[];
}

export interface OperationKind {
  /** The spec kinds it acts on, for the reader. */
  readonly name: string;
  read(round: Round): KindRound;
}
