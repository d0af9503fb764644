/**
 * What the forecast needs from an in-place spec's round, read from its status rows and the
 * spec's own wait (window, approval, soak, halt), as replace/index.ts does for replacements.
 */
import type { ForecastInput } from '../forecast.js';
import { nodeOpDefault } from '../pace.js';
import type { SpecStatus } from '../types.js';
import type { NodeOpContext } from './context.js';

export function nodeOpForecastInput(ctx: NodeOpContext, status: SpecStatus): ForecastInput {
  const { rollout } = ctx.op;
  const open = status.nodes.filter((r) => r.phase !== 'Done' && r.phase !== 'Failed' && r.phase !== 'Skipped');
  const inFlight = open.filter((r) => r.phase !== 'Pending').map((r) => r.node);
  const rest = open.filter((r) => r.phase === 'Pending').map((r) => r.node);
  const wait = ctx.b.waitsFor(ctx.spec).find((w) => w.node === undefined);
  const until = wait?.until !== undefined ? Date.parse(wait.until) : undefined;
  const concurrency = ctx.op.concurrency > 0 ? ctx.op.concurrency : Number.POSITIVE_INFINITY;
  const canary = rollout.canary;
  const window =
    rollout.window !== undefined ? ctx.desired.maintenanceWindows.find((w) => w.name === rollout.window) : undefined;
  return {
    spec: ctx.spec,
    remaining: [...inFlight, ...rest],
    parallelism: Math.min(concurrency, Math.max(1, ctx.budget.max)),
    canaryNodes: canary === undefined ? 0 : Math.max(0, canary.nodes - status.progress.done),
    soakSeconds: canary?.soakSeconds ?? 0,
    ...(window !== undefined ? { window } : {}),
    startAt: inFlight.length === 0 && until !== undefined ? until : ctx.now,
    // A person must act (an approval, a halt): no ETA.
    blocked: status.phase === 'Halted' || (wait !== undefined && wait.until === undefined && wait.code === 'approval'),
    drains: ctx.op.drain.enabled,
    begun: status.nodes.some((r) => r.phase !== 'Pending'),
    pace: {
      kind: ctx.spec.kind === 'NodeImage' ? 'inPlace' : 'nodeOp',
      defaultSeconds: nodeOpDefault({
        cordon: ctx.op.cordon,
        drain: ctx.op.drain,
        reboot: ctx.op.rebootOnSuccess,
        minReadySeconds: rollout.healthGate.minReadySeconds,
      }),
    },
  };
}
