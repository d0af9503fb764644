/**
 * ObservedState: one immutable snapshot of the cluster and the cloud, built from watch-backed
 * caches. It is the planner's only view of the world; every list is sorted by a stable key
 * (name, or groupId then id) so the planner never depends on API listing order.
 */
import type { GroupDescription } from '../cloud/provider.js';
import type { NodeTaint } from '../protocol/jobs.js';
import type { LabelSelector } from '../spec/model.js';
import type { ObservedMetrics } from './metrics.js';
import type { ObservedWorkload } from './workloads.js';

export type { ObservedWorkload, WorkloadKind } from './workloads.js';
export type { MetricBreach, MetricReading, ObservedMetrics } from './metrics.js';

// The protocol's keys live in protocol/keys.ts; re-exported for the observer's readers.
export { ANNOTATIONS, LABELS, type NodePhase } from '../protocol/keys.js';

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
  /** status.nodeInfo.bootID: changes when the host rebooted. */
  readonly bootID?: string;
  /** status.nodeInfo.osImage: what the OS says it is ("Bottlerocket OS 1.20.3 (aws-k8s-1.30)"); in-place updates are verified by it. */
  readonly osImage?: string;
  /** Node taints, for control-plane detection and scheduling. */
  readonly taints: readonly NodeTaint[];
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
  /** A reboot pod's recorded bootID (drydock.dev/boot-id): the boot it reboots from. */
  readonly rebootsFrom?: string;
  /** namespace/name of each PDB whose selector matches this pod, sorted. */
  readonly pdbs: readonly string[];
  /** The Deployment or StatefulSet it belongs to (`Kind/namespace/name`), when it does. */
  readonly workload?: string;
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
  /**
   * status.disruptedPods: pods an eviction counted against the budget (name → when), which the
   * controller drops once it sees them being deleted.
   */
  readonly disruptedPods?: Readonly<Record<string, string>>;
  /** The controller has not yet written a status for the PDB's current spec. */
  readonly unobserved?: true;
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
  /** Pods that ended (status.succeeded + status.failed): the attempts it made. */
  readonly attempts: number;
  /** The Failed condition's reason (BackoffLimitExceeded, DeadlineExceeded ...). */
  readonly failureReason?: string;
  /**
   * Once it finished: its last pod's termination message (what the container wrote to its
   * termination-log, or its last log lines), cut to execute/jobs MAX_MESSAGE. The planner
   * copies it onto the node, so status keeps it after the Job is deleted.
   */
  readonly message?: string;
  /**
   * Succeeded by its pod before the Job controller recorded it (protocol/job-outcome.ts): the
   * outcome may be acted on, but the Job is not deleted until it shows that outcome itself.
   */
  readonly unrecorded?: true;
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
  /**
   * Deployments and StatefulSets with their ready counts (the health gate's "evicted workloads
   * are back"), sorted by Kind/namespace/name; absent when not observed (a planner test).
   */
  readonly workloads?: readonly ObservedWorkload[];
  /** Sorted by scalingGroup. */
  readonly cloudGroups: readonly ObservedCloudGroup[];
  readonly problems: readonly ObserveProblem[];
  /**
   * The OpenShift objects an MCO upgrade is driven by (openshift.ts); observed only while the
   * desired state holds a MutexRunConfig, absent otherwise (and until first read).
   */
  readonly openshift?: ObservedOpenShift;
  /**
   * The metric gates' readings by metricGatesKey (metrics.ts); observed only while a rollout
   * has metricGates, absent otherwise.
   */
  readonly metrics?: ObservedMetrics;
}

/** ClusterVersion `version`: the release the cluster is asked to run, and what it ran. */
export interface ObservedClusterVersion {
  /** spec.desiredUpdate.version; undefined when no update was ever asked for. */
  readonly desiredVersion?: string;
  /** status.history, newest first: each release's state (Completed, Partial) and version. */
  readonly history: readonly { readonly state: string; readonly version: string }[];
}

/** A MachineConfigPool as the MCO kind reads it. */
export interface ObservedPool {
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly paused: boolean;
  readonly nodeSelector?: LabelSelector;
  /** spec.maxUnavailable as written (a count or a percentage); undefined means 1. */
  readonly maxUnavailable?: number | string;
  /** status.configuration.name: the rendered config the pool's nodes are brought to. */
  readonly configuration?: string;
  readonly degraded: boolean;
  readonly updated: boolean;
}

export interface ObservedOpenShift {
  /** The `version` ClusterVersion, when the cluster has one. */
  readonly clusterVersion?: ObservedClusterVersion;
  /** Sorted by name. */
  readonly pools: readonly ObservedPool[];
  /** Kinds the cluster does not serve (their CRD is absent): "ClusterVersion", "MachineConfigPool". */
  readonly absent: readonly string[];
  /** Why they could not be read at all yet (a refused list), with what to do. */
  readonly unreadable?: string;
}
