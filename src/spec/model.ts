/**
 * drydock's normalised internal model of the desired state: what every stage after the
 * loader works with. Documents of every accepted apiVersion (drydock.dev and the seed
 * systems' own) are normalised into these shapes, with every default filled in, so the
 * planner never needs to know where a spec came from.
 *
 * The raw document shapes are generated from schemas/ (src/spec/generated/); this file is the
 * model after defaults and seed translation, and is hand-written on purpose.
 */

/** Where a spec (or a field of it) was declared: repo-relative path, 1-based line and column. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

export type Provider = 'sim' | 'aws' | 'gcp' | 'azure';
export type NodeRole = 'worker' | 'control-plane';

/** A count or a percentage of a total ("25%"), as Kubernetes' IntOrString. */
export type IntOrPercent = number | `${number}%`;

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export type DrainTimeoutPolicy = 'halt' | 'force' | 'skipNode';

export interface DrainOptions {
  /** Whether the node is drained at all (Kairos' drainOptions.enabled). */
  readonly enabled: boolean;
  /** Delete pods that have no controller, and (with onTimeout force) pods a PDB protects. */
  readonly force: boolean;
  /** Grace period for evicted pods; undefined means each pod's own. */
  readonly gracePeriodSeconds?: number;
  readonly ignoreDaemonSets: boolean;
  readonly deleteEmptyDirData: boolean;
  /** Undefined means no timeout. */
  readonly timeoutSeconds?: number;
  readonly onTimeout: DrainTimeoutPolicy;
  /** Only pods matching it are evicted; undefined means all. */
  readonly podSelector?: LabelSelector;
}

export type RolloutOrder = 'controlPlaneFirst' | 'workersFirst' | 'byName';
export type ApprovalRequirement = 'none' | 'start' | 'afterCanary';

export interface RolloutPolicy {
  readonly maxSurge: IntOrPercent;
  readonly maxUnavailable: IntOrPercent;
  /** Nodes in flight at once for this spec; 0 means no limit besides maxUnavailable. */
  readonly concurrency: number;
  readonly order: RolloutOrder;
  /** Undefined means no canary wave. */
  readonly canary?: { readonly nodes: number; readonly soakSeconds: number };
  readonly stopOnFailure: boolean;
  /**
   * The failure budget: the spec halts once this many of its nodes (or this share of them) have
   * failed. Where given it replaces stopOnFailure (true is 1); absent, stopOnFailure decides.
   */
  readonly maxFailures?: IntOrPercent;
  /**
   * What becomes of a failed node drydock cordoned (a Job failed after its retries, a reboot
   * never came back, a gate Job failed): uncordon (it takes workloads again) or keepCordoned
   * (it stays out of service for a person to look at). A drain that timed out follows
   * drain.onTimeout instead. Absent means uncordon, so that adding this field changed no
   * existing spec's revision (a new revision would run every NodeOp again).
   */
  readonly onFailure?: 'keepCordoned';
  /** replace: a new instance that has not joined within this is removed and counted as failed. */
  readonly joinTimeoutSeconds: number;
  readonly drain: DrainOptions;
  /** timeoutSeconds: a node not healthy this long after it joined fails; absent: no limit. */
  readonly healthGate: { readonly minReadySeconds: number; readonly timeoutSeconds?: number };
  /** Name of a MaintenanceWindow; undefined means any time. */
  readonly window?: string;
  readonly approval: { readonly required: ApprovalRequirement };
  /** Prometheus alerts and queries that hold (or halt) new nodes; undefined means none. */
  readonly metricGates?: MetricGates;
}

/** An alert that holds while it fires: its name and the label values it must carry. */
export interface MetricAlert {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** A PromQL query with a threshold: a breach while a sample is above (or below) `value`. */
export interface MetricQuery {
  /** What waits and `drydock plan` call it: its name, else the query. */
  readonly name: string;
  readonly query: string;
  readonly op: 'above' | 'below';
  readonly value: number;
}

/** Checks against Prometheus (and Alertmanager's silences) before each node starts. */
export interface MetricGates {
  readonly prometheus: string;
  readonly alertmanager?: string;
  /** Read each round; its content is never logged or shown. */
  readonly bearerTokenFile?: string;
  readonly timeoutSeconds: number;
  readonly onBreach: 'hold' | 'halt';
  readonly alerts: readonly MetricAlert[];
  readonly queries: readonly MetricQuery[];
}

/**
 * A pause written in Git (a spec's spec.paused, drydock.yaml's paused): present means paused.
 * `by` is filled in by the Git source: the author of the commit that set it.
 */
export interface Pause {
  readonly by?: { readonly name: string; readonly email: string; readonly commit: string; readonly at: string };
}

export type SpecKind =
  | 'ScalingGroup'
  | 'NodeImage'
  | 'AutoscalingStrategy'
  | 'NodeMaintenance'
  | 'NodeOp'
  | 'NodeOpUpgrade'
  | 'UpgradeGate'
  | 'MaintenanceWindow'
  | 'Approval'
  | 'MutexTarget'
  | 'MutexRunConfig';

/** What every spec carries besides its own fields. */
export interface SpecMeta<K extends SpecKind> {
  readonly kind: K;
  readonly name: string;
  /** The apiVersion it was written in (drydock.dev/v1alpha1 or a seed system's). */
  readonly apiVersion: string;
  /** Where the document starts. */
  readonly source: SourcePosition;
  /**
   * A stable hash of the normalised spec (not of its source text): a new revision whenever
   * anything that changes behaviour changes; formatting and comments do not.
   */
  readonly revision: string;
}

export interface ScalingGroup extends SpecMeta<'ScalingGroup'> {
  readonly provider: Provider;
  readonly groupId: string;
  /** Name of a NodeImage. */
  readonly nodeImage: string;
  readonly role: NodeRole;
  /**
   * As written. false: the cluster-autoscaler does not scale this group, so its rollout does
   * not pause the autoscaler. Absent: drydock cannot tell, and pauses it (the safe side).
   */
  readonly autoscaling?: boolean;
}

export interface NodeImage extends SpecMeta<'NodeImage'> {
  readonly image: string;
  readonly strategy: 'replace' | 'inPlace';
  /** spec.paused: no new node starts. Not part of the revision: pausing changes nothing that is done. */
  readonly paused?: Pause;
  /** inPlace: the nodes to update. */
  readonly nodeSelector?: LabelSelector;
  /** inPlace, as written (absent: an update Job from `image`, not verified by the OS). */
  readonly inPlace?: NodeImageInPlace;
  readonly rollout: RolloutPolicy;
}

export interface NodeImageInPlace {
  /** job: `image` is the update Job's container image; bottlerocket: `image` is a version or latest. */
  readonly updater: 'job' | 'bottlerocket';
  /** job only: what status.nodeInfo.osImage must report after the reboot (exact, or /regex/). */
  readonly osImage?: string;
}

export interface AutoscalingStrategy extends SpecMeta<'AutoscalingStrategy'> {
  readonly enabled: boolean;
  readonly deploymentName: string;
  readonly deploymentNamespace: string;
}

export interface NodeMaintenance extends SpecMeta<'NodeMaintenance'> {
  readonly nodeName: string;
  readonly reason: string;
  readonly drain: DrainOptions;
}

/** A spec's metadata.namespace and where it is written. */
export interface WrittenNamespace {
  readonly name: string;
  readonly at: SourcePosition;
}

export interface NodeOp extends SpecMeta<'NodeOp'> {
  readonly nodeSelector?: LabelSelector;
  readonly image: string;
  readonly imagePullSecrets: readonly string[];
  readonly command: readonly string[];
  readonly hostMountPath: string;
  readonly cordon: boolean;
  readonly drain: DrainOptions;
  readonly rebootOnSuccess: boolean;
  readonly backoffLimit: number;
  /** 0 means all matching nodes at once. */
  readonly concurrency: number;
  readonly stopOnFailure: boolean;
  /**
   * Whether nodes its selector matches later run it too (drydock.dev's default), or only the
   * nodes it selected when its revision was first seen: the Kairos operator's one-shot NodeOp.
   */
  readonly followNewNodes: boolean;
  readonly rollout: RolloutPolicy;
  /** spec.paused (a NodeOpUpgrade's, on the NodeOp it generates): no new node starts. */
  readonly paused?: Pause;
  /** metadata.namespace as written (Kairos' format has one): drydock does not run the Jobs there (validate says so at its line). */
  readonly writtenNamespace?: WrittenNamespace;
  /** Set when this NodeOp was generated from a NodeOpUpgrade. */
  readonly generatedBy?: string;
  /** What status.nodeInfo.osImage must report after the reboot (exact, or /regex/): a NodeOpUpgrade's, an inPlace NodeImage's. */
  readonly osImage?: string;
}

export interface NodeOpUpgrade extends SpecMeta<'NodeOpUpgrade'> {
  readonly image: string;
  readonly imagePullSecrets: readonly string[];
  readonly nodeSelector?: LabelSelector;
  readonly concurrency: number;
  readonly stopOnFailure: boolean;
  readonly upgradeActive: boolean;
  readonly upgradeRecovery: boolean;
  readonly force: boolean;
  /** What status.nodeInfo.osImage must report after the reboot (exact, or /regex/). */
  readonly osImage?: string;
  readonly paused?: Pause;
  /** metadata.namespace as written (Kairos' format has one): drydock does not run the Jobs there. */
  readonly writtenNamespace?: WrittenNamespace;
}

/** A batch/v1 Job to run on a node, kept as the user wrote it (the API server validates it). */
export interface JobTemplate {
  /** Kept from a MutexRule's jobName/jobNamespace; otherwise drydock names the Job. */
  readonly name?: string;
  readonly namespace?: string;
  readonly spec: Readonly<Record<string, unknown>>;
}

export interface GateTarget {
  readonly kind: SpecKind;
  /** Undefined means every spec of that kind. */
  readonly name?: string;
}

export interface UpgradeGate extends SpecMeta<'UpgradeGate'> {
  readonly appliesTo: {
    readonly targets: readonly GateTarget[];
    readonly nodeSelector?: LabelSelector;
  };
  /** Must all succeed, in order, before a node is touched. */
  readonly before: readonly JobTemplate[];
  /** Run, in order, once the node is done. */
  readonly after: readonly JobTemplate[];
  /**
   * On the gate of a MutexRule that MutexRunConfigs name: their names, sorted. Such a rule
   * gates those runs' nodes only (the Machine Config Operator's upgrade of their pools,
   * src/plan/mco/): its appliesTo names the runs. Absent: no run names it, and it gates
   * drydock's own operations. Absent rather than empty so that the revisions of existing gates
   * did not change.
   */
  readonly mutexRunConfigs?: readonly string[];
  /**
   * Each Job namespace as written (a MutexRule's jobNamespace, an UpgradeGate Job's namespace),
   * with its position: for validate's warning where drydock's RBAC grants no Jobs. Not part of
   * the revision.
   */
  readonly writtenJobNamespaces?: readonly WrittenNamespace[];
}

/**
 * The node-upgrade mutex operator's MutexTarget: MachineConfigPools whose nodes a
 * MutexRunConfig upgrades one at a time. The pools are the cluster's, not the repository's.
 */
export interface MutexTarget extends SpecMeta<'MutexTarget'> {
  readonly machineConfigPools: readonly string[];
}

/**
 * The node-upgrade mutex operator's MutexRunConfig: during an OpenShift upgrade, pause the
 * MutexTargets' pools, run the MutexRules before each of their nodes, and admit the nodes one
 * at a time through the canary pool. Its references name specs of this repository and are
 * checked by the loader.
 */
export interface MutexRunConfig extends SpecMeta<'MutexRunConfig'> {
  /** The unpaused MachineConfigPool nodes are admitted through. */
  readonly canaryPool: string;
  /** Names of MutexRules (their UpgradeGates), in the order they run before each node. */
  readonly mutexRules: readonly string[];
  /** Names of MutexTargets, in the order written. */
  readonly mutexTargets: readonly string[];
  /**
   * Each MutexRule's namespace as the run names it (the reference's, else the run's own), by
   * rule name: a node carries `mutexrule.openshift-optional.skrzypek.io/<rule>.<namespace>`
   * while it waits for its turn. A rule with no namespace anywhere is not in it.
   */
  readonly ruleNamespaces: Readonly<Record<string, string>>;
}

export interface WindowSchedule {
  /** Five-field cron expression, in the window's time zone: when a window opens. */
  readonly cron: string;
  readonly durationSeconds: number;
}

export interface WindowExclusion {
  /** ISO 8601 instants. */
  readonly start: string;
  readonly end: string;
  readonly reason: string;
}

export interface MaintenanceWindow extends SpecMeta<'MaintenanceWindow'> {
  /** IANA time zone. */
  readonly timeZone: string;
  readonly schedules: readonly WindowSchedule[];
  readonly exclusions: readonly WindowExclusion[];
}

export interface Approval extends SpecMeta<'Approval'> {
  readonly target: { readonly kind: SpecKind; readonly name: string };
  /** The exact image approved (NodeImage, NodeOpUpgrade) ... */
  readonly image?: string;
  /** ... or the exact spec revision approved (NodeOp). */
  readonly targetRevision?: string;
  readonly stage: 'start' | 'afterCanary' | 'resume';
  /** Filled in by the Git source: the author of the commit that added the file to the tracked branch. */
  readonly approvedBy?: { readonly name: string; readonly email: string; readonly commit: string; readonly at: string };
}

/** What a notification receiver may ask for (docs/guides/notifications.md). */
export type NotifyEventType = 'started' | 'approval' | 'nodeFailed' | 'halted' | 'complete';

/** Where a secret is read from: a file name in the service's secrets directory, or an env variable. */
export type SecretRef = { readonly file: string } | { readonly env: string };

export interface NotifyReceiver {
  readonly name: string;
  readonly type: 'slack' | 'teams' | 'webhook';
  readonly urlFrom: SecretRef;
  /** type webhook: the HMAC-SHA256 key. */
  readonly secretFrom?: SecretRef;
  readonly events: readonly NotifyEventType[];
}

export interface NotificationsConfig {
  /** A commit's web address with {commit} for its id. */
  readonly commitUrl?: string;
  readonly receivers: readonly NotifyReceiver[];
}

/** A cluster budget that holds from each time `cron` fires, for durationSeconds (drydock.yaml budget.windows). */
export interface BudgetWindow {
  readonly maxUnavailable: IntOrPercent;
  /** Five-field cron expression, in timeZone. */
  readonly cron: string;
  readonly durationSeconds: number;
  /** IANA time zone. */
  readonly timeZone: string;
  /** The kinds it applies to; absent means every kind. */
  readonly kinds?: readonly SpecKind[];
}

/** drydock.yaml: repo-wide settings. */
export interface RepoConfig {
  readonly cluster: string;
  /**
   * Cap on nodes unavailable at once across every operation together: maxUnavailable, or while
   * any of `windows` is active, the most restrictive active one (absent: no windows).
   */
  readonly budget: { readonly maxUnavailable: IntOrPercent; readonly windows?: readonly BudgetWindow[] };
  /** paused: no spec starts a new node. */
  readonly paused?: Pause;
  readonly defaults: { readonly rollout: RolloutPolicy };
  /** Repo-relative directories the loader reads. */
  readonly paths: readonly string[];
  readonly statusBranch: string;
  /** Absent: no notifications. */
  readonly notifications?: NotificationsConfig;
  /** Where drydock.yaml was read from; undefined when the file is absent and defaults apply. */
  readonly source?: SourcePosition;
}

export type Spec =
  | ScalingGroup
  | NodeImage
  | AutoscalingStrategy
  | NodeMaintenance
  | NodeOp
  | NodeOpUpgrade
  | UpgradeGate
  | MaintenanceWindow
  | Approval
  | MutexTarget
  | MutexRunConfig;

/** Everything Git says should be true; every list sorted by name. */
export interface DesiredState {
  readonly config: RepoConfig;
  readonly scalingGroups: readonly ScalingGroup[];
  readonly nodeImages: readonly NodeImage[];
  readonly autoscalingStrategies: readonly AutoscalingStrategy[];
  readonly nodeMaintenances: readonly NodeMaintenance[];
  /** Includes the NodeOps generated from NodeOpUpgrades. */
  readonly nodeOps: readonly NodeOp[];
  readonly nodeOpUpgrades: readonly NodeOpUpgrade[];
  readonly upgradeGates: readonly UpgradeGate[];
  readonly maintenanceWindows: readonly MaintenanceWindow[];
  readonly approvals: readonly Approval[];
  readonly mutexTargets: readonly MutexTarget[];
  readonly mutexRunConfigs: readonly MutexRunConfig[];
}

/** One finding of the loader: located, with what to do about it. */
export interface SpecError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly hint: string;
  /** Stable machine-readable code, e.g. 'schema', 'yaml-syntax', 'dangling-reference'. */
  readonly code: string;
  /** On a 'too-many-errors' finding: how many findings it stands for, so totals stay true. */
  readonly notShown?: number;
}

/** `warnings` are findings that do not refuse the commit (an emptied path); validate, plan and status show them. */
export type LoadResult =
  | {
      readonly ok: true;
      readonly desired: DesiredState;
      readonly files: readonly string[];
      readonly warnings?: readonly SpecError[];
    }
  | {
      readonly ok: false;
      readonly errors: readonly SpecError[];
      readonly files: readonly string[];
      readonly warnings?: readonly SpecError[];
    };
