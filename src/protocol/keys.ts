/**
 * Every drydock.dev/ key drydock reads or writes on Kubernetes objects, and the node phases of
 * its coordination protocol (DESIGN.md). The one home of these names: the observer, the
 * planner, the executor and the service import them from here, never spell them out.
 */

/** The prefix of every drydock key: what the caches keep of foreign objects' annotations. */
export const DRYDOCK_PREFIX = 'drydock.dev/';

/** Annotations: the per-node lock and its phase, and what drydock remembers on other objects. */
export const ANNOTATIONS = {
  /** Kind/name@revision: the per-node lock. */
  operation: 'drydock.dev/operation',
  /** Where the node is in its operation: one of NODE_PHASES (Pending … Done, Failed). */
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
  /** Why the node is Failed / halted / Skipped, in words a person can act on. */
  reason: 'drydock.dev/reason',
  /**
   * "true" on a Failed node whose failure halts its spec whatever stopOnFailure says
   * (drain.onTimeout halt): the node stays cordoned and the report says why (plan/outcome.ts).
   */
  halts: 'drydock.dev/halts',
  /**
   * On an old node: how many replacement attempts failed (instances that did not join in
   * time, health gates timed out). Rebuildable: it lives on the node, and goes with it.
   */
  failures: 'drydock.dev/failures',
  /**
   * On a node in (or after) a NodeMaintenance: its status as JSON (phase, pod counters,
   * pending pods, lastError, lastUpdate, endedAt), medik8s' NodeMaintenance status readable
   * with kubectl. Once the maintenance ended it stays as an Ended record until the status
   * branch holds that ending, then leaves the node (the branch is the record); without a status
   * branch (a directory source) it stays, the only record of the ending.
   */
  maintenance: 'drydock.dev/maintenance',
  /**
   * On a MachineConfigPool drydock paused for an OpenShift upgrade: the MutexRunConfig that
   * paused it (MutexRunConfig/<name>), so drydock unpauses only the pools it paused.
   */
  pausedBy: 'drydock.dev/paused-by',
  /** On the autoscaler Deployment: its replicas before drydock scaled it to zero. */
  previousReplicas: 'drydock.dev/previous-replicas',
  /** Before a reboot: the node's status.nodeInfo.bootID, so the reboot is seen done when it changed. */
  bootID: 'drydock.dev/boot-id',
  /** The Job the node's operation runs (namespace/name); kept with a Failed phase to name it. */
  job: 'drydock.dev/job',
  /**
   * The termination message of the last finished Job of the node's operation (its last pod's
   * container message), written with the outcome so status keeps it once the Job is deleted.
   */
  jobMessage: 'drydock.dev/job-message',
  /**
   * The workloads (Kind/namespace/name, comma-separated) that had pods on the node when an
   * operation took it (in place: at its start; replace: at the old node's cordon): the health
   * gate waits until they are ready again before the node is done (replace: removed).
   */
  evicted: 'drydock.dev/evicted-workloads',
  /** ISO 8601 time a node's last in-place operation finished: a canary's soak counts from it. */
  doneAt: 'drydock.dev/done-at',
  /** On the leader Lease: a standby asks the leader for a round ("<ISO time> <identity>"). */
  syncRequested: 'drydock.dev/sync-requested',
  /**
   * Kind/name of the rollout that put DRAIN_PENDING_TAINT on the node; written and removed with
   * the taint, so drydock takes off only the taints it put on.
   */
  drainPending: 'drydock.dev/drain-pending',
} as const;

/**
 * The taint on a node a running rollout drains later (effect PreferNoSchedule: the scheduler
 * places pods elsewhere when it can, and still here when nothing else fits). The pods a drain
 * evicts then go to nodes already done rather than to the next ones to be drained, and are
 * moved once, not again and again. drydock takes it off as the node's turn passes.
 */
export const DRAIN_PENDING_TAINT = { key: 'drydock.dev/drain-pending', effect: 'PreferNoSchedule' } as const;

export const LABELS = {
  /** On objects drydock creates: which operation (Kind.name) they belong to. */
  operation: 'drydock.dev/operation',
  /** On objects drydock creates: which node they belong to. */
  node: 'drydock.dev/node',
  /**
   * On a node: the drydock.dev/phase annotation's value, kept in step with it, because
   * `kubectl get nodes -L` and label selectors read labels, never annotations.
   */
  phase: 'drydock.dev/phase',
  /** On objects drydock creates: "drydock", Kubernetes' well-known label for the tool that manages them. */
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

/** Labels on every Job and pod drydock runs for a node (LABELS holds operation, node, managedBy). */
export const JOB_LABELS = {
  ...LABELS,
  /** The spec revision the object runs for. */
  revision: 'drydock.dev/revision',
  /** Which step of the node's sequence: operation, before, after or reboot. */
  step: 'drydock.dev/step',
} as const;

/**
 * Annotations carrying what a label value cannot hold exactly (names longer than 63
 * characters, the slash of Kind/name@revision).
 */
export const JOB_ANNOTATIONS = {
  /** Kind/name@revision, the same value as the node's lock. */
  operation: ANNOTATIONS.operation,
  /** The node's full name. */
  node: LABELS.node,
  /** On an in-place update Job's pod: the image it applies to the node. */
  image: ANNOTATIONS.image,
  /** On a reboot pod: the node's bootID before the reboot, read back when the node's Rebooting was not written. */
  bootID: ANNOTATIONS.bootID,
} as const;

/** The value of drydock.dev/phase, in the order a node goes through them. */
export const NODE_PHASES = [
  'Pending',
  'Cordoned',
  'Draining',
  'Updating',
  'Rebooting',
  'Verifying',
  'Done',
  /**
   * Given back without its operation (drain.onTimeout skipNode): uncordoned, no failure; the
   * lock stays as the record that this revision is finished with the node (plan/outcome.ts).
   */
  'Skipped',
  'Failed',
] as const;

export type NodePhase = (typeof NODE_PHASES)[number];

/** The domain of the per-NodeOp record a node keeps: `nodeop.drydock.dev/<name>` = succeeded revision. */
export const NODEOP_RECORD_DOMAIN = 'nodeop.drydock.dev';

/**
 * The domain of a one-shot NodeOp's selection (followNewNodes false, the Kairos operator's
 * NodeOp): `selection.nodeop.drydock.dev/<name>` = "<revision> <ISO time it was first seen>" on
 * each node it selected then, with " later" appended on a node its selector matched only after.
 * Kept on every such node, so the time survives the nodes it ran on being replaced.
 */
export const NODEOP_SELECTION_DOMAIN = 'selection.nodeop.drydock.dev';

/**
 * The domain of the per-MutexRunConfig record a node keeps once the Machine Config Operator
 * upgraded it under that run: `mutexrun.drydock.dev/<name>` = the OpenShift version reached.
 */
export const MUTEXRUN_RECORD_DOMAIN = 'mutexrun.drydock.dev';

/**
 * The domain of the per-NodeImage record a replacement node keeps:
 * `nodeimage.drydock.dev/<name>` = "<revision> <ISO time it was marked Done>". Unlike the lock
 * (drydock.dev/operation, phase, phase-since), which the next operation on the node overwrites
 * and clears, no other operation ever writes it: the rollout's canary and soak are read from it.
 */
export const NODEIMAGE_RECORD_DOMAIN = 'nodeimage.drydock.dev';

/**
 * The domain of the version a Bottlerocket NodeImage's `latest` resolved to:
 * `bottlerocket.drydock.dev/<name>` = `<revision> <version>`, written on the first node whose
 * update Job found it, in the same patch that records the Job's outcome. Every later node of
 * that revision is pinned to it, so a release published mid-rollout does not split the fleet.
 */
export const BOTTLEROCKET_RECORD_DOMAIN = 'bottlerocket.drydock.dev';

/** An annotation name is at most 63 characters; a longer spec name is cut and ends with a hash of the whole name. */
function recordKey(domain: string, name: string): string {
  if (/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(name)) return `${domain}/${name}`;
  let h = 0;
  for (const c of name) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  const head = name
    .replace(/[^-A-Za-z0-9_.]+/g, '-')
    .slice(0, 54)
    .replace(/[^A-Za-z0-9]+$/, '');
  return `${domain}/${head === '' ? 'x' : head}-${h.toString(16).padStart(8, '0')}`;
}

/**
 * The annotation that records on a node the revision of NodeOp `name` that succeeded there, so
 * that revision never runs on it again whatever crashes happen, and whatever operation takes
 * the node later.
 */
export function nodeOpRecordKey(name: string): string {
  return recordKey(NODEOP_RECORD_DOMAIN, name);
}

/** The annotation that records on a node whether one-shot NodeOp `name` selected it when first seen, and when that was. */
export function nodeOpSelectionKey(name: string): string {
  return recordKey(NODEOP_SELECTION_DOMAIN, name);
}

export function mutexRunRecordKey(name: string): string {
  return recordKey(MUTEXRUN_RECORD_DOMAIN, name);
}

/** The annotation that records on a replacement node which revision of NodeImage `name` made it, and when. */
export function nodeImageRecordKey(name: string): string {
  return recordKey(NODEIMAGE_RECORD_DOMAIN, name);
}

/** The annotation that records on a node the version `latest` of Bottlerocket NodeImage `name` resolved to, and for which revision. */
export function bottlerocketRecordKey(name: string): string {
  return recordKey(BOTTLEROCKET_RECORD_DOMAIN, name);
}
