/**
 * What the status branch reports, as the report stage receives it: the plan's per-spec status
 * (src/plan/types.ts SpecStatus, the one shape from the planner to the status branch, its file
 * paths made repository paths) and the loader's errors. Plain data, already decided; rendering
 * (status-docs.ts) only lays it out.
 */
import type { SpecStatus } from '../plan/types.js';
import type { SpecError } from '../spec/model.js';

export interface StatusReport {
  readonly cluster: string;
  /** The commit whose specs are in force; undefined while no commit has been valid. */
  readonly sourceCommit?: string;
  /** The newest commit fetched, when it differs from sourceCommit (refused or not verified). */
  readonly newestCommit?: string;
  /** Each spec's status as the plan gave it, with repository paths (approvals, approvalWanted). */
  readonly specs: readonly SpecStatus[];
  /** Why the newest commit was refused: validation errors (errors.yaml). */
  readonly errors?: readonly SpecError[];
  /** With drydock.yaml budget.windows: the cluster budget in force and when the next one starts. */
  readonly budget?: readonly string[];
  /** Other things a person should know (a rewritten history, an unsigned commit, ...). */
  readonly notes?: readonly string[];
}

/** The status branch's files: repo path → content. */
export type StatusDocs = ReadonlyMap<string, string>;
