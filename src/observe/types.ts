/**
 * ObservedState: one immutable snapshot of the cluster and the cloud, built from watch-backed
 * caches. It is the planner's only view of the world; every list is sorted by a stable key
 * (name, or groupId then id) so the planner never depends on API listing order.
 */
import type { GroupDescription } from '../cloud/provider.js';
import type { LabelSelector } from '../spec/model.js';

/** The node annotations of drydock's coordination protocol (DESIGN.md). */
export const ANNOTATIONS = {
  /** Kind/name@revision: the per-node lock. */
  operation: 'drydock.dev/operation',
  phase: 'drydock.dev/phase',
  /** ISO 8601 time the phase was entered. */
  phaseSince: 'drydock.dev/phase-since',
  /** "true" when drydock cordoned the node, so drydock may uncordon it. */
  cordoned: 'drydock.dev/cordoned',
  /** Image applied in place. */
  image: 'drydock.dev/image',
  /** On an old node: the instance id of its replacement. */
  replacedBy: 'drydock.dev/replaced-by',
  /** On a replacement node: the instance id it replaces. */
  replaces: 'drydock.dev/replaces',
  /** Why the node is Failed / halted, in words a person can act on. */
  reason: 'drydock.dev/reason',
  /** On the autoscaler Deployment: its replicas before drydock scaled it to zero. */
  previousReplicas: 'drydock.dev/previous-replicas',
} as const;

export const LABELS = {
  /** On objects drydock creates: which operation (Kind.name) and node they belong to. */
  operation: 'drydock.dev/operation',
  node: 'drydock.dev/node',
  /**
   * On a node: the drydock.dev/phase annotation's value, kept in step with it, because
   * `kubectl get nodes -L` and label selectors read labels, never annotations.
   */
  phase: 'drydock.dev/phase',
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export type NodePhase = 'Pending' | 'Cordoned' | 'Draining' | 'Updating' | 'Rebooting' | 'Verifying' | 'Done' | 'Failed';

export interface ObservedNode {
  readonly name: string;
  readonly providerID?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly unschedulable: boolean;
  readonly ready: boolean;
  /** ISO 8601: when the Ready condition last changed. */
  readonly readySince?: string;
  readonly createdAt: string;
  /** Node taints' keys, for control-plane detection and scheduling. */
  readonly taints: readonly { readonly key: string; readonly effect: string; readonly value?: string }[];
}

export type PodOwnerKind = 'ReplicaSet' | 'DaemonSet' | 'StatefulSet' | 'Job' | 'Node' | 'Other' | 'None';

export interface ObservedPod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly nodeName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ownerKind: PodOwnerKind;
  readonly ownerName?: string;
  readonly phase: string;
  readonly ready: boolean;
  readonly readySince?: string;
  /** Being deleted (deletionTimestamp set). */
  readonly terminating: boolean;
  /** Uses emptyDir volumes (drain needs deleteEmptyDirData). */
  readonly hasEmptyDir: boolean;
  /** Static/mirror pod: never evicted. */
  readonly mirror: boolean;
  /** namespace/name of each PDB whose selector matches this pod, sorted. */
  readonly pdbs: readonly string[];
}

export interface ObservedPDB {
  readonly namespace: string;
  readonly name: string;
  readonly selector?: LabelSelector;
  /** status.disruptionsAllowed as last computed by the disruption controller. */
  readonly disruptionsAllowed: number;
  readonly currentHealthy: number;
  readonly desiredHealthy: number;
  readonly expectedPods: number;
}

export interface ObservedDeployment {
  readonly namespace: string;
  readonly name: string;
  readonly replicas: number;
  readonly annotations: Readonly<Record<string, string>>;
}

export interface ObservedJob {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly succeeded: boolean;
  readonly failed: boolean;
  readonly completedAt?: string;
}

export interface ObservedCloudGroup {
  /** The ScalingGroup spec's name this group belongs to. */
  readonly scalingGroup: string;
  readonly description: GroupDescription;
}

/** A cloud or API read that failed this round: the planner waits rather than guessing. */
export interface ObserveProblem {
  readonly source: string;
  readonly code: string;
  readonly message: string;
  readonly retryAfterSeconds?: number;
}

export interface ObservedState {
  /** Sorted by name. */
  readonly nodes: readonly ObservedNode[];
  /** Sorted by namespace/name. */
  readonly pods: readonly ObservedPod[];
  readonly pdbs: readonly ObservedPDB[];
  /** Deployments drydock cares about (autoscalers), sorted by namespace/name. */
  readonly deployments: readonly ObservedDeployment[];
  /** Jobs drydock created (labelled), sorted by namespace/name. */
  readonly jobs: readonly ObservedJob[];
  /** Sorted by scalingGroup. */
  readonly cloudGroups: readonly ObservedCloudGroup[];
  readonly problems: readonly ObserveProblem[];
}
