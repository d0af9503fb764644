/**
 * A MutexRunConfig's status: one row per node of its target pools (Done once it runs the
 * version, with its record or MCO's label; the run's phase while held; Failed with MCO's
 * reason), the pools it paused and why, and which MutexRules gate its nodes.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { MutexRunConfig } from '../../spec/model.js';
import type { Round } from '../kind.js';
import type { Standing } from '../sequence/holder.js';
import { specConditions, waitByNode } from '../sequence/status.js';
import type { NodeRow, SpecPhase, SpecStatus } from '../types.js';
import { atVersion, type McoContext } from './context.js';
import { pausedByValue } from './prepare.js';

/** Which MutexRules gate the run's nodes (they no longer gate drydock's own operations). */
export function rulesNote(run: MutexRunConfig): string {
  if (run.mutexRules.length === 0) return 'no MutexRule gates its nodes';
  return `MutexRule ${run.mutexRules.join(', ')} gate${run.mutexRules.length === 1 ? 's' : ''} this run's nodes only, not drydock's own operations`;
}

function rowOf(ctx: McoContext, n: ObservedNode, standing: Standing | undefined, message?: string): NodeRow {
  const state = ctx.view.stateOf(n);
  const held = standing === 'current';
  const phase: NodeRow['phase'] =
    standing === 'done' || (!held && atVersion(n, ctx.version))
      ? 'Done'
      : held
        ? (state.phase ?? 'Pending')
        : 'Pending';
  const lastError = held && state.phase === 'Failed' ? state.reason : undefined;
  return {
    node: n.name,
    phase,
    ...(held && state.sinceText !== undefined ? { since: state.sinceText } : {}),
    ...(held && state.job !== undefined ? { job: state.job } : {}),
    ...(lastError !== undefined ? { lastError } : {}),
    ...(message !== undefined ? { message } : {}),
  };
}

/** What the pools say: the ones paused by this run, named, so a paused pool is never unexplained. */
function poolsNote(ctx: McoContext): string {
  const ours = ctx.targets.filter((p) => p.annotations[ANNOTATIONS.pausedBy] === pausedByValue(ctx.run.name));
  if (ours.length === 0) return '';
  return `; pool ${ours.map((p) => p.name).join(', ')} paused by this run until every node runs ${ctx.version}`;
}

export function mcoStatus(
  ctx: McoContext,
  nodes: readonly ObservedNode[],
  standing: ReadonlyMap<string, Standing>,
  halted: boolean,
): SpecStatus {
  const waits = ctx.b.waitsFor(ctx.spec);
  const byNode = waitByNode(waits);
  const rows = nodes.map((n) => rowOf(ctx, n, standing.get(n.name), byNode.get(n.name)));
  const done = rows.filter((r) => r.phase === 'Done').length;
  const failures = rows.filter((r) => r.phase === 'Failed').length;
  const actions = ctx.b.actionsFor(ctx.spec);
  const busy = rows.some((r) => standing.get(r.node) === 'current' && r.phase !== 'Failed');
  const phase: SpecPhase = halted
    ? 'Halted'
    : done === rows.length && actions === 0
      ? 'Complete'
      : busy || actions > 0
        ? 'Progressing'
        : failures > 0 && done + failures === rows.length
          ? 'Failed'
          : 'Waiting';
  const first = waits.find((w) => w.node === undefined) ?? waits[0];
  const base =
    first?.reason ??
    (phase === 'Complete'
      ? `every node of the target pools runs ${ctx.version}`
      : `${done}/${rows.length} nodes upgraded`);
  const message = `${base}${poolsNote(ctx)}; ${rulesNote(ctx.run)}`;
  const lastError = rows.find((r) => r.lastError !== undefined)?.lastError;
  return {
    spec: ctx.spec,
    revision: ctx.run.revision,
    phase,
    progress: { done, total: rows.length },
    failures,
    conditions: specConditions(phase, message, waits, halted ? message : undefined),
    nodes: rows,
    pending: [],
    ...(first !== undefined ? { waitingFor: first.reason } : {}),
    ...(lastError !== undefined ? { lastError } : {}),
  };
}

/** The status of a run whose OpenShift objects are missing, or with no update asked for. */
export function worldStatus(
  round: Round,
  run: MutexRunConfig,
  reason: string,
  phase: SpecPhase = 'Waiting',
): SpecStatus {
  const spec = { kind: 'MutexRunConfig' as const, name: run.name };
  const waits = round.b.waitsFor(spec);
  const message = `${reason}; ${rulesNote(run)}`;
  return {
    spec,
    revision: run.revision,
    phase,
    progress: { done: 0, total: 0 },
    failures: 0,
    conditions: specConditions(phase, message, waits),
    nodes: [],
    pending: [],
    ...(phase !== 'Complete' ? { waitingFor: reason } : {}),
  };
}
