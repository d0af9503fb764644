/**
 * What the status branch reports, as the report stage receives it: filled by the service from
 * the plan's per-spec status (src/plan/types.ts SpecStatus) and the loader's errors. Plain
 * data, already decided; rendering (status-docs.ts) only lays it out.
 */
import type { MaintenanceReport } from '../plan/types.js';
import type { SpecError } from '../spec/model.js';

export interface StatusCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

/** One node's row: the node and its phase, plus whatever the stage knows (instance, image, since, ...). */
export interface StatusNodeRow {
  readonly node: string;
  readonly phase: string;
  readonly instance?: string;
  readonly image?: string;
  /** ISO 8601. */
  readonly since?: string;
  readonly replacedBy?: string;
  readonly message?: string;
  /** ISO 8601 estimate of when the node is done. */
  readonly eta?: string;
}

export interface StatusApproval {
  readonly stage: 'start' | 'afterCanary';
  /** The Approval spec's name and file. */
  readonly name: string;
  readonly file?: string;
  readonly approvedBy?: { readonly name: string; readonly email: string; readonly commit: string; readonly at: string };
}

export interface SpecReport {
  readonly kind: string;
  readonly name: string;
  readonly revision?: string;
  /** Pending, Waiting, Progressing, Halted, Complete, Failed, ... */
  readonly phase: string;
  readonly progress: { readonly done: number; readonly total: number };
  /** NodeImage only: how its nodes change, which names its progress ("replaced", "updated"). */
  readonly strategy?: 'replace' | 'inPlace';
  /** ISO 8601 estimate of when every node is done; absent when none is left or a person must act first. */
  readonly eta?: string;
  /** What it waits for now, in words a person can act on. */
  readonly waitingFor?: string;
  readonly conditions: readonly StatusCondition[];
  readonly nodes: readonly StatusNodeRow[];
  readonly lastError?: string;
  readonly approvals?: readonly StatusApproval[];
  /** When it waits for an approval: the exact file to merge (repository path and content). */
  readonly approvalFile?: { readonly path: string; readonly content: string };
  /** e.g. { failures: 1, outdated: 4 }. */
  readonly counts?: Readonly<Record<string, number>>;
  /** NodeMaintenance only: medik8s' status fields (totalPods, evictionPods, pendingPods, ...). */
  readonly maintenance?: MaintenanceReport;
  /** Anything else the stage wants recorded (pending instances, waves, ...). */
  readonly extra?: Readonly<Record<string, unknown>>;
}

export interface StatusReport {
  readonly cluster: string;
  /** The commit whose specs are in force; undefined while no commit has been valid. */
  readonly sourceCommit?: string;
  /** The newest commit fetched, when it differs from sourceCommit (refused or not verified). */
  readonly newestCommit?: string;
  readonly specs: readonly SpecReport[];
  /** Why the newest commit was refused: validation errors (errors.yaml). */
  readonly errors?: readonly SpecError[];
  /** Other things a person should know (a rewritten history, an unsigned commit, ...). */
  readonly notes?: readonly string[];
}

/** The status branch's files: repo path → content. */
export type StatusDocs = ReadonlyMap<string, string>;
