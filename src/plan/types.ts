/**
 * The Plan: the planner's whole answer for one reconcile. `plan(desired, observed, now)` is
 * pure; the executor turns `actions` into API calls, the reporter turns `specs`, `waits` and
 * `notes` into status text without re-deriving anything.
 */
import type { JobTemplate, LabelSelector, SpecKind } from '../spec/model.js';
import type { NodePhase } from '../protocol/keys.js';
import type { NodeJobSpec, NodeTaint, OperationRef } from '../protocol/jobs.js';

/** Which spec an action, wait or note belongs to. */
export interface SpecRef {
  readonly kind: SpecKind;
  readonly name: string;
}

/**
 * What every action carries: the spec it is for, and why the planner decided it, in words a
 * person reading the plan or the executor's log can follow (Cluster API's planner notes).
 */
interface ActionBase {
  readonly spec: SpecRef;
  readonly reason: string;
  /**
   * The node whose step this is, when it is another node: the executor keeps it in that node's
   * order (its lane), after that node's earlier steps. A replacement marked Done is the
   * replaced node's step; a node started on the slot a finished node hands over runs after
   * that node's release (nodeop/index.ts).
   */
  readonly forNode?: string;
  /**
   * Runs beside the step before it in its node's lane, not after it: the action is its own
   * durable record (a Job under a fixed name, found again and never made twice), so it needs
   * nothing written before it, and a failed write of that step does not hold it.
   */
  readonly beside?: true;
}

/** Every side effect drydock may cause. Each must be safe to repeat. */
export type Action = ActionBase &
  (
    | { readonly kind: 'setGroupImage'; readonly groupId: string; readonly image: string }
    | {
        /**
         * Raise the group's size by `count`. `forNodes` names the started nodes the new
         * instances are for, in order: an executor may annotate each with replaced-by=<new id>
         * right away; if it does not (or crashes first), the planner claims the new instances
         * for those nodes in the next round.
         */
        readonly kind: 'surge';
        readonly groupId: string;
        readonly count: number;
        readonly forNodes?: readonly string[];
      }
    | {
        readonly kind: 'annotateNode';
        readonly node: string;
        /** null removes the annotation. */
        readonly annotations: Readonly<Record<string, string | null>>;
      }
    | { readonly kind: 'cordon'; readonly node: string }
    | {
        /**
         * Puts DRAIN_PENDING_TAINT (and the annotation naming the spec) on the node, or takes
         * off what drydock put on; other taints are left as they are.
         */
        readonly kind: 'markDrainPending';
        readonly node: string;
        readonly pending: boolean;
      }
    | { readonly kind: 'uncordon'; readonly node: string }
    | {
        readonly kind: 'evict';
        readonly node: string;
        readonly namespace: string;
        readonly pod: string;
        readonly gracePeriodSeconds?: number;
      }
    | {
        /** Only when the drain policy says force: deletes around a PDB or an unmanaged pod. */
        readonly kind: 'deletePod';
        readonly node: string;
        readonly namespace: string;
        readonly pod: string;
        readonly gracePeriodSeconds?: number;
      }
    | {
        readonly kind: 'copyLabels';
        readonly from: string;
        readonly to: string;
        readonly labels: Readonly<Record<string, string>>;
      }
    | { readonly kind: 'removeInstance'; readonly groupId: string; readonly instanceId: string; readonly node?: string }
    | { readonly kind: 'deleteNode'; readonly node: string }
    | {
        readonly kind: 'scaleDeployment';
        readonly namespace: string;
        readonly name: string;
        readonly replicas: number;
        /** Set when scaling down: the count to restore later, kept on the Deployment. */
        readonly rememberPrevious?: number;
      }
    | {
        /**
         * Creates the operation Job of `operation` on `node` (execute/jobs nodeJob builds it;
         * its name is deterministic, so a repeat finds the Job made before).
         */
        readonly kind: 'createNodeJob';
        readonly node: string;
        readonly namespace: string;
        readonly operation: OperationRef;
        readonly job: NodeJobSpec;
        /** The node's taints now: the Job tolerates them. */
        readonly taints: readonly NodeTaint[];
        /** inPlace: the image the Job puts on the node. */
        readonly appliesImage?: string;
      }
    | {
        /**
         * Creates the Bottlerocket update Job of `operation` on `node` (execute/jobs
         * bottlerocketUpdateJob builds it, named as createNodeJob's): it stages `version` (X.Y.Z,
         * or latest) through the node's update API and leaves the reboot to drydock's reboot pod.
         */
        readonly kind: 'createBottlerocketUpdateJob';
        readonly node: string;
        readonly namespace: string;
        readonly operation: OperationRef;
        readonly version: string;
        readonly taints: readonly NodeTaint[];
        /** The Job's image (sh, awk, curl): `--bottlerocket-image`; absent, execute's default. */
        readonly image?: string;
      }
    | {
        /** Starts the reboot pod; `bootID` is the one recorded on the node before it. */
        readonly kind: 'createRebootPod';
        readonly node: string;
        readonly namespace: string;
        readonly operation: OperationRef;
        readonly bootID: string;
        readonly taints: readonly NodeTaint[];
        /** The pod's image: `--reboot-image`, or `--bottlerocket-image` with bottlerocketApi; absent, execute's default. */
        readonly image?: string;
        /** bottlerocketApi: the pod asks the node's Bottlerocket API to reboot (POST /actions/reboot). */
        readonly method?: 'bottlerocketApi';
      }
    | {
        /**
         * Creates one Job of an UpgradeGate for `node` (execute/jobs gateJob builds it; its
         * name is deterministic: gate, step, position, node, operation and revision).
         */
        readonly kind: 'createGateJob';
        readonly node: string;
        readonly operation: OperationRef;
        readonly gate: string;
        readonly step: 'before' | 'after';
        readonly index: number;
        readonly template: JobTemplate;
        /** replace: the node that takes this one's place. */
        readonly replacement?: string;
        /** Where the Job runs when its template names no namespace. */
        readonly defaultNamespace: string;
        /** The gate was written as a MutexRule of this name: MUTEX_RULE in the Job's environment. */
        readonly mutexRule?: string;
      }
    /** Deletes a finished Job whose outcome is recorded on its node. */
    | { readonly kind: 'deleteJob'; readonly node: string; readonly namespace: string; readonly name: string }
    /** Deletes a reboot pod once the reboot is verified. */
    | { readonly kind: 'deleteRebootPod'; readonly node: string; readonly namespace: string; readonly name: string }
    | {
        /**
         * Sets or removes node labels (null removes). copyLabels only sets; the MCO kind also
         * takes the mutex rule labels off a node to admit it into the canary pool.
         */
        readonly kind: 'labelNode';
        readonly node: string;
        readonly labels: Readonly<Record<string, string | null>>;
      }
    | {
        /**
         * Patches a MachineConfigPool: spec.paused together with drydock.dev/paused-by (set when
         * pausing, removed when unpausing), so drydock unpauses only what it paused; or the
         * pool's nodeSelector.matchExpressions, written whole.
         */
        readonly kind: 'patchPool';
        readonly pool: string;
        readonly paused?: boolean;
        readonly nodeSelector?: LabelSelector;
      }
  );

export type ActionKind = Action['kind'];

export type WaitCode =
  | 'window'
  | 'approval'
  | 'pdb'
  | 'budget'
  | 'concurrency'
  | 'surge'
  | 'join'
  | 'health'
  | 'soak'
  | 'drain'
  | 'halted'
  /** A metric gate (a Prometheus alert or query) holds new nodes, or Prometheus did not answer. */
  | 'metrics'
  /** A pause written in Git (spec.paused, drydock.yaml paused) holds new starts. */
  | 'paused'
  | 'lock'
  | 'cloud'
  | 'autoscaler'
  /** A node failed and is left as it is (not halting the rollout) until a person looks. */
  | 'failed'
  /**
   * A node was given back without its operation (drain.onTimeout skipNode): no failure; it is
   * left as it is until a person looks or the spec changes.
   */
  | 'skipped'
  /** A node operation's Job is starting or running. */
  | 'job'
  /** An UpgradeGate's Job for a node is starting or running. */
  | 'gate'
  /** A node is rebooting: its bootID has not changed yet, or it is not Ready yet. */
  | 'reboot'
  /** The node a spec names does not exist (yet). */
  | 'node'
  /** controlPlaneFirst across specs: workers wait for every spec's control plane. */
  | 'order'
  /** The Machine Config Operator is upgrading a node drydock admitted. */
  | 'mco'
  /** A MachineConfigPool (or ClusterVersion) is missing, unsuitable, or being prepared. */
  | 'pool'
  /** In a fleet: the stages before this cluster's have not passed the revision yet (plan/fleet.ts). */
  | 'fleet';

/**
 * The Approval file a wait for one asks for: where it goes and what it approves, so status can
 * show the file to merge (report/approval-file.ts writes its content) without reading words.
 */
export interface ApprovalWanted {
  readonly stage: 'start' | 'afterCanary' | 'resume';
  /** Repository path, relative to the specs root. */
  readonly path: string;
  readonly target: {
    readonly kind: 'NodeImage' | 'NodeOp' | 'NodeOpUpgrade';
    readonly name: string;
    readonly revision: string;
    /** NodeImage and NodeOpUpgrade: the image approved (a NodeOp's approval names its revision). */
    readonly image?: string;
  };
}

/**
 * A metric gate with onBreach halt halted the spec: what breached and since when. Published in
 * the spec's status, it keeps the spec halted at the same revision after the breach clears
 * (plan's `published`); an Approval with stage resume merged since, or a new revision of the
 * spec, releases it.
 */
export interface MetricHalt {
  /** The breaches, in words: `alert HighErrorRate firing since …`. */
  readonly breach: string;
  /** ISO 8601: when the earliest breach began. */
  readonly since: string;
  /**
   * The resume Approval in force when the halt began (the commit that merged it), which does not
   * release it: only one merged since does. Git's order, not clocks, says which came first.
   */
  readonly resumeSeen?: string;
}

/** Something that holds progress back, with a reason a person can act on. */
export interface Wait {
  readonly spec: SpecRef;
  readonly node?: string;
  readonly code: WaitCode;
  /** e.g. "PDB default/web allows 0 disruptions". */
  readonly reason: string;
  /** ISO 8601: the earliest time this wait can end by itself, if known. */
  readonly until?: string;
  /** A wait for an approval: the file that ends it. */
  readonly approval?: ApprovalWanted;
  /** A halt by a metric gate (code halted): what breached, so status can keep it. */
  readonly metricHalt?: MetricHalt;
}

export interface Note {
  readonly spec: SpecRef;
  readonly node?: string;
  readonly text: string;
}

export interface Condition {
  readonly type: 'Ready' | 'Progressing' | 'Stalled' | 'Degraded';
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

/** NotSupported: a spec this build reads but does not act on yet (src/plan/unsupported.ts). */
export type SpecPhase =
  'Pending' | 'Waiting' | 'Progressing' | 'Halted' | 'Complete' | 'Failed' | 'NotSupported' | MaintenancePhase;

/** A NodeMaintenance's phase, as medik8s names them, plus Ended once its file left Git. */
export type MaintenancePhase = 'Running' | 'Succeeded' | 'Failed' | 'Ended';

/** A pod a NodeMaintenance still has to move, and what holds it there. */
export interface PendingPod {
  /** namespace/name. */
  readonly pod: string;
  /** namespace/name of the PDB that allows no disruption of it now. */
  readonly pdb?: string;
  /** Why the drain options do not move it (a pod without controller, emptyDir data, ...). */
  readonly blockedBy?: string;
}

/** NodeMaintenance's own status, named as in medik8s' NodeMaintenance status. */
export interface MaintenanceReport {
  readonly nodeName: string;
  readonly reason: string;
  /** Pods on the node when the maintenance took it. */
  readonly totalPods: number;
  /** Of those, the pods to be moved (DaemonSet and mirror pods stay). */
  readonly evictionPods: number;
  readonly pendingPods: readonly PendingPod[];
  /** Percent of evictionPods gone from the node. */
  readonly drainProgress: number;
  /** ISO 8601: when this status last changed. */
  readonly lastUpdate?: string;
  /** ISO 8601: when the file left Git and the node was released. */
  readonly endedAt?: string;
}

/** One node's row in a spec's status. */
export interface NodeRow {
  readonly node: string;
  readonly instance?: string;
  readonly phase: NodePhase | 'Outdated' | 'UpToDate' | 'Joining';
  readonly since?: string;
  readonly image?: string;
  readonly replacedBy?: string;
  readonly message?: string;
  /** Node operations: the Job run on the node (namespace/name), its attempts, its last error. */
  readonly job?: string;
  readonly attempts?: number;
  readonly lastError?: string;
  /** The termination message of the node's last finished Job (kept after the Job is deleted). */
  readonly jobMessage?: string;
  /** ISO 8601 estimate of when the node is done: the end of its wave in the forecast. */
  readonly eta?: string;
}

/** A cloud instance that should become a node, or is leaving (Constellation's PendingNode). */
export interface PendingNode {
  readonly groupId: string;
  readonly instanceId: string;
  readonly providerID: string;
  readonly goal: 'Join' | 'Leave';
  /** ISO 8601: after this a joining instance is given up. */
  readonly deadline?: string;
  readonly nodeName?: string;
}

/** An approval the planner counts for a spec (its file as the spec loader named it). */
export interface ApprovalInForce {
  readonly stage: 'start' | 'afterCanary' | 'resume';
  readonly name: string;
  readonly file: string;
  /** Who merged it, when the source knows (the Git source does). */
  readonly approvedBy?: { readonly name: string; readonly email: string; readonly commit: string; readonly at: string };
}

export interface SpecStatus {
  readonly spec: SpecRef;
  readonly revision: string;
  readonly phase: SpecPhase;
  readonly progress: { readonly done: number; readonly total: number };
  /** NodeImage only, when its nodes are updated in place rather than replaced. */
  readonly strategy?: 'inPlace';
  /**
   * A Bottlerocket NodeImage: the version its nodes are moved to (the pinned one, or what
   * `latest` resolved to on its first node); absent while `latest` is not resolved yet.
   */
  readonly resolvedImage?: string;
  /** In-place kinds that change the OS: how a node's update is verified, or that it is not verified by the OS. */
  readonly verification?: string;
  readonly failures: number;
  /** With rollout.maxFailures: its Failed nodes against it, in words ("1 of 2 failures allowed: …"). */
  readonly failureBudget?: string;
  /** Set while a pause written in Git holds its new starts: who paused it, since which commit. */
  readonly paused?: string;
  /** Set while a metric gate with onBreach halt halts it at this revision. */
  readonly metricHalt?: MetricHalt;
  readonly conditions: readonly Condition[];
  readonly nodes: readonly NodeRow[];
  readonly pending: readonly PendingNode[];
  /** The first wait, in words: what it is waiting for now. */
  readonly waitingFor?: string;
  readonly lastError?: string;
  /** The approvals in force for the spec as it is now; absent when there are none. */
  readonly approvals?: readonly ApprovalInForce[];
  /** When it waits for an approval first: the file to merge. */
  readonly approvalWanted?: ApprovalWanted;
  /** NodeMaintenance only. */
  readonly maintenance?: MaintenanceReport;
  /**
   * ISO 8601 estimate of when every node of the spec is done (the forecast's last wave); absent
   * when nothing is left, or while it waits for a person (an approval, a halt).
   */
  readonly eta?: string;
}

export interface Wave {
  readonly index: number;
  readonly spec: SpecRef;
  /** 'canary' for the canary wave. */
  readonly label: string;
  readonly nodes: readonly string[];
  /** ISO 8601 estimates. */
  readonly start: string;
  readonly end: string;
}

export interface Forecast {
  readonly waves: readonly Wave[];
  /** Each spec with waves: the per-node time its waves were given, and where it came from. */
  readonly paces?: readonly Pace[];
  /** ISO 8601 estimate of when every spec is complete; undefined when blocked indefinitely. */
  readonly eta?: string;
}

/** A rollout's metric gates as `drydock plan` shows them. */
export interface MetricGateView {
  readonly prometheus: string;
  readonly alertmanager?: string;
  readonly onBreach: 'hold' | 'halt';
  /** `alert HighErrorRate{severity="page"} firing`, `query error-rate (…) > 0.05`. */
  readonly checks: readonly string[];
  /** The specs whose rollout uses them (`NodeImage/workers`). */
  readonly specs: readonly string[];
  /** This round's reading: passing, breached (what, since when), or why it could not be read. */
  readonly state: string;
}

export interface Plan {
  readonly actions: readonly Action[];
  readonly waits: readonly Wait[];
  readonly notes: readonly Note[];
  readonly specs: readonly SpecStatus[];
  readonly forecast: Forecast;
  /** ISO 8601: the earliest time a wait ends by itself; the service wakes then. */
  readonly wakeAt?: string;
  /** The rollouts' metric gates; absent when no rollout has any. */
  readonly metricGates?: readonly MetricGateView[];
  /**
   * With drydock.yaml budget.windows: the cluster budget in force and when the next one
   * starts, a line per kind a window names and one for the rest.
   */
  readonly budget?: readonly string[];
}

/** What one node's step is: a new node replacing it, or a Job (and reboot) on it. */
export type PaceKind = 'replace' | 'inPlace' | 'nodeOp';

/**
 * The per-node time a forecast used, and where it came from: observed nodes of the same spec,
 * of the same kind of step on other specs, the default, or the perNodeSeconds option.
 */
export interface Pace {
  readonly spec: SpecRef;
  readonly kind: PaceKind;
  readonly perNodeSeconds: number;
  readonly basis: 'observed' | 'default' | 'option';
  /** basis observed: how many nodes the median is of, and whether they are of this spec. */
  readonly observed?: number;
  readonly sameSpec?: boolean;
}
