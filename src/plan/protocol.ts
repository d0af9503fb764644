/**
 * The planner's reading of the node annotation protocol (protocol/keys.ts):
 * who holds a node, in which phase, since when. Everything here is parsed defensively, because
 * annotations are editable by anyone with kubectl.
 */
import type { ObservedNode } from '../observe/types.js';
import { ANNOTATIONS, NODE_PHASES, nodeImageRecordKey, type NodePhase } from '../protocol/keys.js';
import type { SpecKind } from '../spec/model.js';

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
export function lockValue(kind: SpecKind, name: string, revision: string): string {
  return `${kind}/${name}@${revision}`;
}

export function parseLock(value: string | undefined): OperationRef | undefined {
  if (value === undefined) return undefined;
  const match = /^([A-Za-z]+)\/([^@]+)@(.*)$/.exec(value);
  if (!match) return undefined;
  return { kind: match[1] ?? '', name: match[2] ?? '', revision: match[3] ?? '' };
}

/**
 * A NodeImage lock taken by the in-place machinery past its start (it names the node's Job):
 * a replace rollout of the same name never takes it over, the in-place settling releases it.
 */
export function isInPlaceHold(node: ObservedNode): boolean {
  return (
    parseLock(node.annotations[ANNOTATIONS.operation])?.kind === 'NodeImage' &&
    node.annotations[ANNOTATIONS.job] !== undefined &&
    holdsLock(node)
  );
}

export function nodePhase(node: ObservedNode): NodePhase | undefined {
  const value = node.annotations[ANNOTATIONS.phase];
  return NODE_PHASES.find((p) => p === value);
}

/**
 * Whether the operation holding the node is finished with it without Done: Failed or Skipped
 * (plan/outcome.ts). The lock stays as the record; nothing of it is in flight.
 */
export function isSettled(node: ObservedNode): boolean {
  const phase = nodePhase(node);
  return phase === 'Failed' || phase === 'Skipped';
}

/**
 * Whether the node is held by an operation: the lock is released by Done (a replacement
 * node keeps its annotations as a record) and kept by Failed (a person must look first).
 */
export function holdsLock(node: ObservedNode): boolean {
  const op = node.annotations[ANNOTATIONS.operation];
  if (op === undefined) return false;
  return nodePhase(node) !== 'Done';
}

/** Whether drydock counts this node against the cluster-wide budget. */
export function isUnavailable(node: ObservedNode): boolean {
  if (node.annotations[ANNOTATIONS.cordoned] === 'true' && node.unschedulable) return true;
  const phase = nodePhase(node);
  return phase !== undefined && node.annotations[ANNOTATIONS.operation] !== undefined && UNAVAILABLE_PHASES.has(phase);
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

export function failureCount(node: ObservedNode): number {
  const value = node.annotations[ANNOTATIONS.failures];
  if (value === undefined || !/^\d+$/.test(value)) return 0;
  return Number(value);
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
