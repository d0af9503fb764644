/**
 * The planner's reading of the node annotation protocol (protocol/keys.ts):
 * who holds a node, in which phase, since when. Everything here is parsed defensively, because
 * annotations are editable by anyone with kubectl.
 */
import type { ObservedJob, ObservedNode } from '../observe/types.js';
import { ANNOTATIONS, NODE_PHASES, nodeImageRecordKey, type NodePhase } from '../protocol/keys.js';

/** Phases in which a node is unavailable to workloads. */
export const UNAVAILABLE_PHASES: ReadonlySet<NodePhase> = new Set([
  'Cordoned',
  'Draining',
  'Updating',
  'Rebooting',
  'Verifying',
]);

export interface OperationRef {
  readonly kind: string;
  readonly name: string;
  readonly revision: string;
}

/** `Kind/name@revision`, the value of drydock.dev/operation. */
export function lockValue(kind: string, name: string, revision: string): string {
  return `${kind}/${name}@${revision}`;
}

export function parseLock(value: string | undefined): OperationRef | undefined {
  if (value === undefined) return undefined;
  const match = /^([A-Za-z]+)\/([^@]+)@(.*)$/.exec(value);
  if (!match) return undefined;
  return { kind: match[1] ?? '', name: match[2] ?? '', revision: match[3] ?? '' };
}

/**
 * A node's place in the protocol, read from its annotations in one go: the planner reads this,
 * never the raw annotations, so every part of it means the same by "held", "settled" or "ours
 * to uncordon". A round parses each observed node once (view.ts' stateOf).
 */
export interface NodeState {
  /** drydock.dev/operation as written, readable or not (shown to people as is). */
  readonly lockText: string | undefined;
  /** The lock read, or undefined when absent or unreadable. */
  readonly lock: OperationRef | undefined;
  /** drydock.dev/phase, when it is one of NODE_PHASES. */
  readonly phase: NodePhase | undefined;
  /** drydock.dev/phase as written, readable or not (shown to people as is). */
  readonly phaseText: string | undefined;
  /** When the phase was entered (drydock.dev/phase-since), in ms; undefined when absent or malformed. */
  readonly since: number | undefined;
  /** drydock.dev/phase-since as written: what status rows show. */
  readonly sinceText: string | undefined;
  /**
   * Whether the node is held by an operation: the lock is released by Done (a replacement
   * node keeps its annotations as a record) and kept by Failed (a person must look first).
   * A lock nobody can read holds the node too.
   */
  readonly holds: boolean;
  /**
   * Whether the operation holding the node is finished with it without Done: Failed or Skipped
   * (plan/outcome.ts). The lock stays as the record; nothing of it is in flight.
   */
  readonly settled: boolean;
  /** drydock cordoned the node (drydock.dev/cordoned), so drydock may uncordon it. */
  readonly cordonedByUs: boolean;
  /** Cordoned by drydock and cordoned still: the node drydock keeps from its workloads. */
  readonly keptCordoned: boolean;
  /** Why the node is Failed, Skipped or held (drydock.dev/reason). */
  readonly reason: string | undefined;
  /** Replacement attempts that failed (drydock.dev/failures); 0 when absent or malformed. */
  readonly failures: number;
  /** The Job the node's operation runs (drydock.dev/job, namespace/name). */
  readonly job: string | undefined;
  /** A Failed node whose failure halts its spec whatever stopOnFailure says (drydock.dev/halts). */
  readonly halts: boolean;
  /**
   * A NodeImage lock taken by the in-place machinery past its start (it names the node's Job,
   * and no replacement): a replace rollout of the same name never takes it over, the in-place
   * settling releases it.
   */
  readonly inPlaceHold: boolean;
  /** Whether drydock counts this node against the cluster-wide budget. */
  readonly unavailable: boolean;
}

/** The one reading of a node's protocol annotations (parsed defensively: anyone with kubectl may edit them). */
export function parseNodeState(node: ObservedNode): NodeState {
  const a = node.annotations;
  const lockText = a[ANNOTATIONS.operation];
  const lock = parseLock(lockText);
  const phaseText = a[ANNOTATIONS.phase];
  const phase = NODE_PHASES.find((p) => p === phaseText);
  const sinceText = a[ANNOTATIONS.phaseSince];
  const holds = lockText !== undefined && phase !== 'Done';
  const cordonedByUs = a[ANNOTATIONS.cordoned] === 'true';
  const keptCordoned = cordonedByUs && node.unschedulable;
  const job = a[ANNOTATIONS.job];
  const failures = a[ANNOTATIONS.failures];
  return {
    lockText,
    lock,
    phase,
    phaseText,
    since: parseInstant(sinceText),
    sinceText,
    holds,
    settled: phase === 'Failed' || phase === 'Skipped',
    cordonedByUs,
    keptCordoned,
    reason: a[ANNOTATIONS.reason],
    failures: failures === undefined || !/^\d+$/.test(failures) ? 0 : Number(failures),
    job,
    halts: a[ANNOTATIONS.halts] === 'true',
    // A replace rollout's node names a Job too when a gate Job failed it, but it names its
    // replacement (drydock.dev/replaced-by), which the in-place machinery never writes.
    inPlaceHold: lock?.kind === 'NodeImage' && job !== undefined && holds && a[ANNOTATIONS.replacedBy] === undefined,
    unavailable: keptCordoned || (phase !== undefined && lockText !== undefined && UNAVAILABLE_PHASES.has(phase)),
  };
}

/** Milliseconds since the epoch of an ISO annotation, or undefined when absent or malformed. */
export function parseInstant(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** What a replacement node records of the NodeImage revision that made it (nodeimage.drydock.dev/<name>). */
export interface ReplacementRecord {
  readonly revision: string;
  /** When the replacement was marked Done: a canary's soak counts from it. */
  readonly doneAt: number;
}

/** The record's annotation: "<revision> <ISO time>". */
export function replacementRecord(name: string, revision: string, doneAt: string): Record<string, string> {
  return { [nodeImageRecordKey(name)]: `${revision} ${doneAt}` };
}

export function readReplacementRecord(node: ObservedNode, name: string): ReplacementRecord | undefined {
  const value = node.annotations[nodeImageRecordKey(name)];
  const space = value?.lastIndexOf(' ') ?? -1;
  if (value === undefined || space <= 0) return undefined;
  const doneAt = parseInstant(value.slice(space + 1));
  return doneAt === undefined ? undefined : { revision: value.slice(0, space), doneAt };
}

/**
 * Every annotation an operation of any kind sets on a node while it holds it: cleared together
 * when it lets the node go (released, settled, or done), so no kind leaves another's key behind.
 * The records a kind keeps after (nodeop.drydock.dev/, nodeimage.drydock.dev/, drydock.dev/image,
 * done-at, job-message, maintenance) are not among them.
 */
export const HELD_ANNOTATIONS: Readonly<Record<string, null>> = {
  [ANNOTATIONS.operation]: null,
  [ANNOTATIONS.phase]: null,
  [ANNOTATIONS.phaseSince]: null,
  [ANNOTATIONS.cordoned]: null,
  [ANNOTATIONS.replacedBy]: null,
  [ANNOTATIONS.reason]: null,
  [ANNOTATIONS.failures]: null,
  [ANNOTATIONS.halts]: null,
  [ANNOTATIONS.bootID]: null,
  [ANNOTATIONS.job]: null,
  [ANNOTATIONS.evicted]: null,
};

/**
 * Labels never copied from an old node to its replacement: the kubelet, the cloud or drydock
 * set them per instance, so copying would make the new node lie about itself.
 */
const SKIPPED_LABEL_KEYS = new Set(['kubernetes.io/hostname', 'kubernetes.io/arch', 'kubernetes.io/os']);
const SKIPPED_LABEL_PREFIXES = [
  'beta.kubernetes.io/',
  'failure-domain.beta.kubernetes.io/',
  'topology.kubernetes.io/',
  'node.kubernetes.io/',
  'topology.',
];

export function isCopiedLabel(key: string): boolean {
  if (SKIPPED_LABEL_KEYS.has(key)) return false;
  if (SKIPPED_LABEL_PREFIXES.some((p) => key.startsWith(p))) return false;
  const slash = key.indexOf('/');
  if (slash > 0) {
    const domain = key.slice(0, slash);
    if (domain === 'drydock.dev' || domain.endsWith('.drydock.dev')) return false;
  }
  return true;
}

/** The labels to copy from `from` to `to`: the copied ones `to` lacks or has differently. */
export function labelsToCopy(from: ObservedNode, to: ObservedNode): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(from.labels).sort()) {
    const value = from.labels[key];
    if (value === undefined || !isCopiedLabel(key)) continue;
    if (to.labels[key] !== value) out[key] = value;
  }
  return out;
}

/**
 * A Job drydock may delete once its outcome is on the node: it finished, and the Job controller
 * has recorded that on the Job (one read as succeeded from its pod alone is kept until then),
 * so every Job shows its own outcome before it goes.
 */
export function jobOutcomeRecorded(job: ObservedJob): boolean {
  return (job.succeeded || job.failed) && job.unrecorded !== true;
}
