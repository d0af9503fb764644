/**
 * A NodeOp's status: one row per node it selects or holds (phase, Job, attempts, last error),
 * progress as done/total nodes, and the spec's phase read from this round's decisions.
 */
import type { ObservedNode } from '../../observe/types.js';
import { approvalRef, approvalsInForce, opTarget } from '../approval.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { specConditions, waitByNode } from '../sequence/status.js';
import type { NodeRow, SpecPhase, SpecStatus, Wait } from '../types.js';
import { jobOf, type NodeOpContext, type Standing } from './context.js';
import { verificationText } from './os-check.js';

function rowOf(
  ctx: NodeOpContext,
  n: ObservedNode,
  standing: Standing | undefined,
  message: string | undefined,
): NodeRow {
  const { name, job } = jobOf(ctx, ctx.operation, n.name);
  // `n` may be a node a step failed this round: stateOf parses it as the step left it.
  const state = ctx.view.stateOf(n);
  const jobRef = state.job ?? (job !== undefined ? `${ctx.settings.jobNamespace}/${name}` : undefined);
  const held = standing === 'current';
  const done = standing === 'done';
  const phase: NodeRow['phase'] = done ? 'Done' : held ? (state.phase ?? 'Pending') : 'Pending';
  const since = held ? state.sinceText : undefined;
  const lastError = held && state.phase === 'Failed' ? state.reason : undefined;
  // A done node names the Job it ran (namespace/name; it is deleted soon after), and what the Job
  // said while drydock.dev/job still names it (until another operation starts on the node).
  const ran = done && n.annotations[ctx.record.key] === ctx.record.value;
  const doneJob = ran ? `${ctx.settings.jobNamespace}/${name}` : undefined;
  const ownMessage = held || (doneJob !== undefined && state.job === doneJob);
  const jobMessage = ownMessage ? n.annotations[ANNOTATIONS.jobMessage] : undefined;
  return {
    node: n.name,
    phase,
    ...(since !== undefined ? { since } : {}),
    ...(held && jobRef !== undefined ? { job: jobRef } : {}),
    ...(doneJob !== undefined ? { job: doneJob } : {}),
    ...(job !== undefined ? { attempts: job.attempts } : {}),
    ...(lastError !== undefined ? { lastError } : {}),
    ...(jobMessage !== undefined ? { jobMessage } : {}),
    ...(message !== undefined ? { message } : {}),
  };
}

export function buildNodeOpStatus(
  ctx: NodeOpContext,
  nodes: readonly ObservedNode[],
  standing: ReadonlyMap<string, Standing>,
  halted: boolean,
  waits: readonly Wait[],
  actions: number,
): SpecStatus {
  const byNode = waitByNode(waits);
  const rows = nodes.map((n) => rowOf(ctx, n, standing.get(n.name), byNode.get(n.name)));
  const done = rows.filter((r) => r.phase === 'Done').length;
  const failures = rows.filter((r) => r.phase === 'Failed').length;
  const skipped = rows.filter((r) => r.phase === 'Skipped').length;
  const busy = rows.some(
    (r) => r.phase !== 'Done' && r.phase !== 'Failed' && r.phase !== 'Skipped' && standing.get(r.node) === 'current',
  );
  // No node selected is not done: the spec has run nowhere (its wait says why).
  const phase: SpecPhase = halted
    ? 'Halted'
    : done === rows.length && rows.length > 0
      ? 'Complete'
      : busy || actions > 0
        ? 'Progressing'
        : failures > 0 && done + failures + skipped === rows.length
          ? 'Failed'
          : 'Waiting';
  // What holds the whole spec (window, approval, halt) says more than one node's progress.
  const first = waits.find((w) => w.node === undefined) ?? waits[0];
  const message =
    first?.reason ??
    (phase === 'Complete'
      ? `every selected node ran revision ${ctx.op.revision}`
      : `${done}/${rows.length} nodes done`);
  const conditions = specConditions(phase, message, waits, halted ? message : undefined);
  const lastError = rows.find((r) => r.lastError !== undefined)?.lastError;
  const approvals = approvalsInForce(ctx.desired, opTarget(ctx.op, ctx.spec));
  const verification = verificationText(ctx);
  return {
    spec: ctx.spec,
    revision: ctx.op.revision,
    phase,
    progress: { done, total: rows.length },
    // The in-place kinds share this status; a NodeImage among them is an inPlace one.
    ...(ctx.spec.kind === 'NodeImage' ? { strategy: 'inPlace' as const } : {}),
    ...(ctx.bottlerocket?.version !== undefined ? { resolvedImage: ctx.bottlerocket.version } : {}),
    ...(verification !== undefined ? { verification } : {}),
    failures,
    conditions,
    nodes: rows,
    pending: [],
    ...(first !== undefined ? { waitingFor: first.reason } : {}),
    ...(first?.approval !== undefined ? { approvalWanted: first.approval } : {}),
    ...(lastError !== undefined ? { lastError } : {}),
    ...(approvals.length > 0 ? { approvals: approvals.map(approvalRef) } : {}),
  };
}
