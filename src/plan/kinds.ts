/**
 * The operation kinds, in the order each round plans them. Maintenances go first: a person's
 * order takes its budget share before any rollout moves a node, and no kind starts a node a
 * NodeMaintenance names (sequence/admit.ts). The MCO kind goes last: the OpenShift upgrade it
 * admits waits on the Machine Config Operator, not on drydock's own nodes. A new kind is a folder and one line here.
 */
import type { OperationKind } from './kind.js';
import { maintenanceKind } from './maintenance/kind.js';
import { mcoKind } from './mco/kind.js';
import { inPlaceKind } from './nodeop/kind.js';
import { replaceKind } from './replace/kind.js';

export const KINDS: readonly OperationKind[] = [maintenanceKind, replaceKind, inPlaceKind, mcoKind];
