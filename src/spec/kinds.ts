/**
 * Every apiVersion/kind drydock reads, the schema that checks it and the normaliser that maps
 * it to the model; and the kinds it refuses with a reason.
 */
import type { Spec } from './model.js';
import type { NormaliseContext } from './normalise/context.js';
import * as d from './normalise/drydock.js';
import * as e from './normalise/edgeless.js';
import * as k from './normalise/kairos.js';
import { mNodeMaintenance } from './normalise/medik8s.js';
import { MUTEX_API, xMutexRule, xMutexRunConfig, xMutexTarget } from './normalise/mutex.js';

export const DRYDOCK_API = 'drydock.dev/v1alpha1';

export interface KindHandler {
  /** Path under schemas/. */
  readonly schema: string;
  readonly normalise: (ctx: NormaliseContext) => Spec[];
}

const EDGELESS = 'update.edgeless.systems/v1alpha1';
/** The Kairos operator's API: its specs also make drydock label Kairos nodes as the operator does (plan/nodeop/kairos-labels.ts). */
export const KAIROS_API = 'operator.kairos.io/v1alpha1';

export const KINDS: Readonly<Record<string, Readonly<Record<string, KindHandler>>>> = {
  [DRYDOCK_API]: {
    ScalingGroup: { schema: 'scaling-group.schema.json', normalise: d.dScalingGroup },
    NodeImage: { schema: 'node-image.schema.json', normalise: d.dNodeImage },
    AutoscalingStrategy: { schema: 'autoscaling-strategy.schema.json', normalise: d.dAutoscalingStrategy },
    NodeMaintenance: { schema: 'node-maintenance.schema.json', normalise: d.dNodeMaintenance },
    NodeOp: { schema: 'node-op.schema.json', normalise: d.dNodeOp },
    NodeOpUpgrade: { schema: 'node-op-upgrade.schema.json', normalise: d.dNodeOpUpgrade },
    UpgradeGate: { schema: 'upgrade-gate.schema.json', normalise: d.dUpgradeGate },
    MaintenanceWindow: { schema: 'maintenance-window.schema.json', normalise: d.dMaintenanceWindow },
    Approval: { schema: 'approval.schema.json', normalise: d.dApproval },
  },
  [EDGELESS]: {
    NodeImage: { schema: 'seeds/edgeless-node-image.schema.json', normalise: e.eNodeImage },
    ScalingGroup: { schema: 'seeds/edgeless-scaling-group.schema.json', normalise: e.eScalingGroup },
    AutoscalingStrategy: {
      schema: 'seeds/edgeless-autoscaling-strategy.schema.json',
      normalise: e.eAutoscalingStrategy,
    },
  },
  [KAIROS_API]: {
    NodeOp: { schema: 'seeds/kairos-node-op.schema.json', normalise: k.kNodeOp },
    NodeOpUpgrade: { schema: 'seeds/kairos-node-op-upgrade.schema.json', normalise: k.kNodeOpUpgrade },
  },
  'nodemaintenance.medik8s.io/v1beta1': {
    NodeMaintenance: { schema: 'seeds/medik8s-node-maintenance.schema.json', normalise: mNodeMaintenance },
  },
  'nodemaintenance.kubevirt.io/v1beta1': {
    NodeMaintenance: { schema: 'seeds/medik8s-node-maintenance.schema.json', normalise: mNodeMaintenance },
  },
  [MUTEX_API]: {
    MutexRule: { schema: 'seeds/mutex-rule.schema.json', normalise: xMutexRule },
    MutexTarget: { schema: 'seeds/mutex-target.schema.json', normalise: xMutexTarget },
    MutexRunConfig: { schema: 'seeds/mutex-run-config.schema.json', normalise: xMutexRunConfig },
  },
};

/** Kinds of known API groups that drydock deliberately does not read from Git: why, and what instead. */
export const REFUSED: Readonly<Record<string, Readonly<Record<string, { message: string; hint: string }>>>> = {
  [EDGELESS]: {
    PendingNode: {
      message: 'PendingNode is operator-managed state, not intent: drydock does not read it from Git',
      hint: 'delete the file; drydock derives joining and leaving nodes from the cloud and the cluster and reports them under extra.pending in the NodeImage’s status (status/NodeImage/<name>.yaml on the status branch)',
    },
  },
  [DRYDOCK_API]: {
    RepoConfig: {
      message: 'RepoConfig is only read from drydock.yaml at the repository root',
      hint: 'move these settings into drydock.yaml at the root',
    },
  },
};

/** "drydock.dev/v1alpha1: ScalingGroup, NodeImage, …; update.edgeless.systems/v1alpha1: …" */
export function acceptedKinds(): string {
  return Object.entries(KINDS)
    .map(([api, kinds]) => `${api}: ${Object.keys(kinds).join(', ')}`)
    .join('; ');
}
