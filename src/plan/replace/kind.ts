/**
 * The replace kind: a NodeImage with strategy replace renews its ScalingGroups' nodes by surging
 * a new instance per node, moving the workloads over and removing the old one (context.ts reads
 * the groups, inflight.ts is its step, forecast through index.ts).
 */
import type { KindRound, OperationKind, Round, RoundGates, SpecOutcome } from '../kind.js';
import { compareStrings } from '../order.js';
import { buildRollout } from './context.js';
import { isReplace, outdatedControlPlane, planReplace } from './index.js';
import { releaseRemovedRollouts } from './removed.js';

export const replaceKind: OperationKind = {
  name: 'NodeImage (replace)',
  read(round: Round): KindRound {
    const { desired } = round;
    const rollouts = [...desired.nodeImages]
      .filter(isReplace)
      .sort((x, y) => compareStrings(x.name, y.name))
      .map((image) => buildRollout({ ...round, budget: round.budget.forKind('NodeImage'), image }));
    // A group the cloud did not answer for may still be mid-rollout: the autoscaler is then
    // neither restored nor paused on a guess (a 20 % error rate would flap it every round).
    // A group that says `autoscaling: false` is not the autoscaler's: not seeing it keeps nothing paused.
    const unobserved = rollouts
      .flatMap((r) => r.notices)
      .find((n) => n.kind === 'unobserved' && n.sg.autoscaling !== false);
    const controlPlanes = rollouts.flatMap((r) => {
      const node = outdatedControlPlane(r);
      return node === undefined
        ? []
        : [{ operation: `NodeImage/${r.image.name}`, spec: r.spec, node, missing: `is not on ${r.image.image} yet` }];
    });
    return {
      running: rollouts.some((r) => r.running),
      ...(unobserved?.kind === 'unobserved'
        ? { unknown: `ScalingGroup ${unobserved.sg.name}: ${unobserved.why}` }
        : {}),
      controlPlanes,
      plan(gates: RoundGates): SpecOutcome[] {
        releaseRemovedRollouts(desired, round.view, rollouts, round.b);
        return rollouts.map((r) => planReplace(r, gates(`NodeImage/${r.image.name}`)));
      },
    };
  },
};
