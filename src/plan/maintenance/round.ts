/** What every NodeMaintenance's round reads and writes: the desired and observed state, the plan, the budget, the time. */
import type { DesiredState } from '../../spec/model.js';
import type { ClusterBudget } from '../budget.js';
import type { PlanBuilder } from '../builder.js';
import type { ResolvedOptions } from '../options.js';
import type { ClusterView } from '../view.js';

export interface MaintenanceRound {
  readonly desired: DesiredState;
  readonly view: ClusterView;
  readonly b: PlanBuilder;
  readonly budget: ClusterBudget;
  readonly now: number;
  readonly nowIso: string;
  readonly options: Pick<ResolvedOptions, 'published' | 'actingSince'>;
}
