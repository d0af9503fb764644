/**
 * The in-place kind: a NodeOp, the NodeOp a NodeOpUpgrade generates, and a NodeImage with
 * strategy inPlace run a Job on each selected node (then, where asked, reboot it) while the
 * node stays in its group (context.ts reads the nodes, step.ts is its step, verify.ts its
 * check, forecast.ts its forecast).
 */
import type { KindRound, OperationKind, Round, RoundGates, SpecOutcome } from '../kind.js';
import { compareStrings } from '../order.js';
import {
  buildNodeOpContext,
  inPlaceNodeOp,
  nodeOpForecastInput,
  pendingControlPlane,
  planNodeOp,
  planRemovedNodeOps,
  type NodeOpContext,
  type NodeOpSettings,
} from './index.js';
import { planKairosLabels } from './kairos-labels.js';

/** Where node Jobs and reboot pods run, their images, and how long a reboot may take: the plan options'. */
function settingsOf({ options }: Round): NodeOpSettings {
  return {
    jobNamespace: options.jobNamespace,
    rebootTimeoutMs: options.rebootTimeoutMs,
    ...(options.rebootImage !== undefined ? { rebootImage: options.rebootImage } : {}),
    ...(options.bottlerocketImage !== undefined ? { bottlerocketImage: options.bottlerocketImage } : {}),
    ...(options.actingSince !== undefined ? { actingSince: options.actingSince } : {}),
  };
}

function contexts(round: Round): NodeOpContext[] {
  const { desired } = round;
  const settings = settingsOf(round);
  const base = { desired, now: round.now, view: round.view, b: round.b, budget: round.budget, settings };
  return [
    ...[...desired.nodeOps]
      .sort((x, y) => compareStrings(x.name, y.name))
      .map((op) =>
        buildNodeOpContext({ ...base, budget: round.budget.forKind(op.generatedBy ? 'NodeOpUpgrade' : 'NodeOp'), op }),
      ),
    ...[...desired.nodeImages]
      .filter((i) => i.strategy === 'inPlace')
      .sort((x, y) => compareStrings(x.name, y.name))
      .map((image) =>
        buildNodeOpContext(
          { ...base, budget: round.budget.forKind('NodeImage'), op: inPlaceNodeOp(image) },
          {
            spec: { kind: 'NodeImage', name: image.name },
            image: image.image,
            ...(image.inPlace?.updater === 'bottlerocket' ? { bottlerocket: true } : {}),
          },
        ),
      ),
  ];
}

export const inPlaceKind: OperationKind = {
  name: 'NodeOp, NodeOpUpgrade, NodeImage (inPlace)',
  read(round: Round): KindRound {
    const list = contexts(round);
    const controlPlanes = list.flatMap((ctx) => {
      const node = pendingControlPlane(ctx);
      if (node === undefined) return [];
      const missing = ctx.appliesImage !== undefined ? `is not on ${ctx.appliesImage} yet` : 'is not done yet';
      return [{ operation: `${ctx.operation.kind}/${ctx.operation.name}`, spec: ctx.spec, node, missing }];
    });
    return {
      running: false,
      controlPlanes,
      plan(gates: RoundGates): SpecOutcome[] {
        planKairosLabels(round.desired, round.view.observed.nodes, round.b);
        planRemovedNodeOps(round.desired, { b: round.b, view: round.view, settings: settingsOf(round) });
        return list.map((ctx) => {
          const status = planNodeOp(ctx, gates(`${ctx.operation.kind}/${ctx.operation.name}`));
          return { status, forecast: nodeOpForecastInput(ctx, status) };
        });
      },
    };
  },
};
