/**
 * The planner's scratchpad for one round: actions, waits and notes in the order the planner
 * decides them (that order is part of the contract: the executor applies actions in list
 * order, and the first wait of a spec is what its status says it waits for).
 */
import type { Action, ApprovalWanted, MetricHalt, Note, SpecRef, Wait, WaitCode } from './types.js';

/** What a scope of acted actions carries (PlanBuilder.besideLast, inLaneOf). */
interface ActScope {
  /**
   * The node whose lane the actions join (one that touches no node stays a barrier: the
   * executor reads forNode only of those that do).
   */
  readonly lane?: string;
  /** The actions run beside the step before them. */
  readonly beside?: boolean;
}

export class PlanBuilder {
  readonly actions: Action[] = [];
  readonly waits: Wait[] = [];
  readonly notes: Note[] = [];
  /**
   * Nodes an operation locked in this round. The observed state shows them free, so every kind
   * that starts nodes later in the round checks here: one lock per node across all kinds.
   */
  readonly taken = new Set<string>();

  /** What the actions acted now carry: set for a scope by besideLast and inLaneOf. */
  private scope: ActScope = {};

  act(action: Action): void {
    const { lane, beside } = this.scope;
    const own = lane !== undefined && action.forNode === undefined ? { ...action, forNode: lane } : action;
    this.actions.push(beside === true ? { ...own, beside: true } : own);
  }

  /**
   * Acts `steps` beside the step acted before them in the node's lane (Action.beside): the
   * executor starts them together, and a failure of that step does not hold them. Only for
   * actions that are their own record, so that nothing need be written before them.
   */
  besideLast<T>(steps: () => T): T {
    return this.within({ beside: true }, steps);
  }

  /**
   * Acts `steps` in `node`'s lane: the executor runs them after that node's earlier steps of the
   * round and holds them when one of those fails (a node started on the slot a finished node
   * hands over waits for that node's release to be written).
   */
  inLaneOf<T>(node: string, steps: () => T): T {
    return this.within({ lane: node }, steps);
  }

  private within<T>(change: ActScope, steps: () => T): T {
    const before = this.scope;
    this.scope = { ...before, ...change };
    try {
      return steps();
    } finally {
      this.scope = before;
    }
  }

  /**
   * Takes an instance out of its group and deletes its Node, if it has one: the instance
   * first, so a crash in between leaves a Node the cloud no longer backs, which goes away.
   */
  removeInstance(spec: SpecRef, groupId: string, instanceId: string, node: string | undefined, reason: string): void {
    this.act({ kind: 'removeInstance', spec, groupId, instanceId, ...(node !== undefined ? { node } : {}), reason });
    if (node !== undefined) this.act({ kind: 'deleteNode', spec, node, reason });
  }

  wait(
    spec: SpecRef,
    code: WaitCode,
    reason: string,
    extra: { node?: string; until?: number; approval?: ApprovalWanted; metricHalt?: MetricHalt } = {},
  ): void {
    this.waits.push({
      spec,
      code,
      reason,
      ...(extra.node !== undefined ? { node: extra.node } : {}),
      ...(extra.approval !== undefined ? { approval: extra.approval } : {}),
      ...(extra.metricHalt !== undefined ? { metricHalt: extra.metricHalt } : {}),
      ...(extra.until !== undefined && Number.isFinite(extra.until)
        ? { until: new Date(extra.until).toISOString() }
        : {}),
    });
  }

  note(spec: SpecRef, text: string, node?: string): void {
    this.notes.push({ spec, text, ...(node !== undefined ? { node } : {}) });
  }

  /** The spec's waits so far, in the order decided: its status says the first. */
  waitsFor(spec: SpecRef): Wait[] {
    return this.waits.filter((w) => same(w.spec, spec));
  }

  /** How many actions the spec has so far: none left means it is done or waiting. */
  actionsFor(spec: SpecRef): number {
    let n = 0;
    for (const a of this.actions) if (same(a.spec, spec)) n++;
    return n;
  }
}

function same(a: SpecRef, b: SpecRef): boolean {
  return a.kind === b.kind && a.name === b.name;
}
