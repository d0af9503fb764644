/**
 * The maintenance kind: a NodeMaintenance takes its one node, cordons and drains it, and holds
 * it until its file leaves Git (index.ts). No window, approval or canary holds it: it is a
 * person's order (a pause in Git does not hold it either). It has no waves, so no forecast.
 */
import type { KindRound, OperationKind, Round, SpecOutcome } from '../kind.js';
import { planMaintenances } from './index.js';

export const maintenanceKind: OperationKind = {
  name: 'NodeMaintenance',
  read(round: Round): KindRound {
    return {
      running: false,
      controlPlanes: [],
      plan: (): SpecOutcome[] =>
        planMaintenances({ ...round, budget: round.budget.forKind('NodeMaintenance') }).map((status) => ({ status })),
    };
  },
};
