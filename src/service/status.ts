/**
 * The one function every reconcile's exit path passes through to describe itself (Flux's
 * deferred status patch): whatever happened — a refused commit, a failed observation, a plan
 * with blocked actions — becomes one StatusSnapshot, which the service hands to the status
 * writer when its content changed.
 */
import type { SpecError } from '../spec/model.js';
import type { Plan, SpecStatus, Wait } from '../plan/types.js';
import type { ActionResult } from '../execute/execute.js';
import type { ObserveProblem } from '../observe/types.js';

export interface StatusSnapshot {
  readonly cluster: string;
  /** The commit whose specs are in force (the newest valid one). */
  readonly sourceCommit?: string;
  /** The newest commit fetched; differs from sourceCommit when it was refused. */
  readonly newestCommit?: string;
  /** Why the newest commit was refused; empty when it is in force. */
  readonly loadErrors: readonly SpecError[];
  /** What the loader warned about in the newest commit without refusing it (a listed path a commit emptied). */
  readonly loadWarnings?: readonly SpecError[];
  readonly specs: readonly SpecStatus[];
  readonly waits: readonly Wait[];
  readonly problems: readonly ObserveProblem[];
  /** With budget.windows: the cluster budget in force and the next one (Plan.budget). */
  readonly budget?: readonly string[];
  /** A failure of the round itself (observe, plan or report), by code. */
  readonly lastError?: { readonly code: string; readonly message: string };
}

export interface StatusInput {
  readonly cluster: string;
  readonly sourceCommit?: string;
  readonly newestCommit?: string;
  readonly loadErrors?: readonly SpecError[];
  readonly loadWarnings?: readonly SpecError[];
  readonly plan?: Plan;
  readonly results?: readonly ActionResult[];
  readonly problems?: readonly ObserveProblem[];
  readonly error?: { readonly code: string; readonly message: string };
  /**
   * A failed round has no plan: the specs and waits last published stand, beside the round's
   * error, rather than the status branch losing every spec's file until a round succeeds. The
   * report then names the commit they were planned under, not one that came in force since.
   */
  readonly carried?: Pick<StatusSnapshot, 'specs' | 'waits' | 'budget' | 'sourceCommit'>;
}

/** Per spec, the first action failure of this round that a person should see. */
function actionErrors(results: readonly ActionResult[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of results) {
    const o = r.outcome;
    if (o.kind !== 'stalled' && o.kind !== 'transient' && o.kind !== 'waiting') continue;
    const key = `${r.action.spec.kind}/${r.action.spec.name}`;
    if (!out.has(key)) out.set(key, o.reason);
  }
  return out;
}

/** Writes the status report (the status branch); called only when its content changed. */
export interface StatusSink {
  /** The branch written, for the notifications' link. */
  readonly branch?: string;
  /** Resolves to the status commit that holds the snapshot, where there is one. */
  write(status: StatusSnapshot): Promise<string | undefined | void>;
  /**
   * The spec statuses the branch's tip holds for `cluster` (none when the branch does not exist
   * yet): what an earlier leader wrote, read by a new one before its first write.
   */
  readSpecs?(cluster: string): Promise<readonly SpecStatus[]>;
}

export function buildStatus(input: StatusInput): StatusSnapshot {
  const errors = actionErrors(input.results ?? []);
  const carried = input.plan === undefined && input.error !== undefined ? input.carried : undefined;
  const budget = input.plan?.budget ?? carried?.budget;
  const specs = (input.plan?.specs ?? carried?.specs ?? []).map((s): SpecStatus => {
    const err = errors.get(`${s.spec.kind}/${s.spec.name}`);
    return err !== undefined && s.lastError === undefined ? { ...s, lastError: err } : s;
  });
  const sourceCommit = carried?.sourceCommit ?? input.sourceCommit;
  return {
    cluster: input.cluster,
    ...(sourceCommit !== undefined ? { sourceCommit } : {}),
    ...(input.newestCommit !== undefined ? { newestCommit: input.newestCommit } : {}),
    loadErrors: input.loadErrors ?? [],
    ...(input.loadWarnings !== undefined && input.loadWarnings.length > 0 ? { loadWarnings: input.loadWarnings } : {}),
    specs,
    waits: input.plan?.waits ?? carried?.waits ?? [],
    problems: input.problems ?? [],
    ...(budget !== undefined ? { budget } : {}),
    ...(input.error ? { lastError: input.error } : {}),
  };
}

/**
 * A stable key of a snapshot's content: equal keys mean nothing to report. The ETAs are left
 * out: an estimate counts from now, so it moves every round while a node is in flight or a
 * wait holds; it is refreshed with the next real change, never a commit by itself.
 */
export function statusKey(s: StatusSnapshot): string {
  return JSON.stringify({
    ...s,
    specs: s.specs.map(({ eta: _eta, nodes, ...rest }) => ({
      ...rest,
      nodes: nodes.map(({ eta: _nodeEta, ...row }) => row),
    })),
  });
}
