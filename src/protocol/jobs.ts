/**
 * The keys and names of the objects drydock runs on nodes (operation Jobs, gate Jobs, reboot
 * pods): labels that name the operation, revision, node and step, and deterministic object
 * names, so a restarted drydock finds the object it made before instead of making a second.
 */
import { createHash } from 'node:crypto';
import { JOB_ANNOTATIONS, JOB_LABELS } from './keys.js';

export { JOB_ANNOTATIONS, JOB_LABELS } from './keys.js';

export const MANAGED_BY = 'drydock';

export type JobStep = 'operation' | 'before' | 'after' | 'reboot';

/** The operation an object belongs to: its spec kind (NodeOp, NodeImage, ...), name and revision. */
export interface OperationRef {
  readonly kind: string;
  readonly name: string;
  readonly revision: string;
}

const MAX_NAME = 63;

function hash(parts: readonly string[], length: number): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, length);
}

/** Lower-case letters, digits and single dashes, no dash at either end. */
function dnsLabelPart(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * A DNS label (≤ 63 characters) made of `parts` joined by dashes, the same for the same parts.
 * When the readable form is too long, or had to be altered to be a valid name (so that two
 * different inputs could collide), its head is kept and a hash of all parts ends it.
 */
export function objectName(parts: readonly string[]): string {
  const clean = parts.map(dnsLabelPart).filter((p) => p !== '');
  const readable = clean.join('-');
  const exact = parts.join('-') === readable;
  if (exact && readable.length <= MAX_NAME && readable !== '') return readable;
  const suffix = hash(parts, 10);
  const head = readable.slice(0, MAX_NAME - suffix.length - 1).replace(/-+$/, '');
  return head === '' ? `x-${suffix}` : `${head}-${suffix}`;
}

const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** `value` when it is a valid label value; otherwise a cut, cleaned form with a hash (the exact value goes in an annotation). */
export function labelValue(value: string): string {
  if (LABEL_VALUE.test(value)) return value;
  const suffix = hash([value], 10);
  const head = value
    .replace(/[^-A-Za-z0-9_.]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 63 - suffix.length - 1)
    .replace(/[^A-Za-z0-9]+$/, '');
  return head === '' ? suffix : `${head}-${suffix}`;
}

/** The operation label value: Kind.name (a slash is not allowed in label values). */
export function operationLabel(op: OperationRef): string {
  return labelValue(`${op.kind}.${op.name}`);
}

/** Kind/name@revision, as the node's lock annotation. */
export function operationValue(op: OperationRef): string {
  return `${op.kind}/${op.name}@${op.revision}`;
}

/** The labels of an object run for `op` on `node` at `step`. */
export function jobLabels(op: OperationRef, node: string, step: JobStep): Record<string, string> {
  return {
    [JOB_LABELS.managedBy]: MANAGED_BY,
    [JOB_LABELS.operation]: operationLabel(op),
    [JOB_LABELS.revision]: labelValue(op.revision),
    [JOB_LABELS.node]: labelValue(node),
    [JOB_LABELS.step]: step,
  };
}

/** A label selector (string form) for every object of `op` on `node`, any step. */
export function jobSelector(op: OperationRef, node?: string): string {
  const terms = [
    `${JOB_LABELS.managedBy}=${MANAGED_BY}`,
    `${JOB_LABELS.operation}=${operationLabel(op)}`,
    `${JOB_LABELS.revision}=${labelValue(op.revision)}`,
  ];
  if (node !== undefined) terms.push(`${JOB_LABELS.node}=${labelValue(node)}`);
  return terms.join(',');
}

/** The annotations that name operation and node exactly. */
export function jobAnnotations(op: OperationRef, node: string): Record<string, string> {
  return { [JOB_ANNOTATIONS.operation]: operationValue(op), [JOB_ANNOTATIONS.node]: node };
}

/** The Job's name: operation, node and revision; ≤ 63 characters. */
export function nodeJobName(op: OperationRef, node: string): string {
  return objectName([op.kind.toLowerCase(), op.name, node, op.revision]);
}

/** The reboot pod's name: the node and the bootID it reboots from. */
export function rebootPodName(node: string, bootID: string): string {
  return objectName(['reboot', node, bootID.slice(0, 8)]);
}

/**
 * An UpgradeGate Job's name: the template's (or the gate's) name, step and position, node,
 * revision and operation, so a repeat finds the Job made before.
 */
export function gateJobName(input: {
  readonly operation: OperationRef;
  readonly gate: string;
  readonly step: 'before' | 'after';
  readonly index: number;
  readonly template: { readonly name?: string };
  readonly node: string;
}): string {
  const head = input.template.name ?? input.gate;
  return objectName([
    head,
    `${input.step}${input.index}`,
    input.node,
    input.operation.revision,
    input.operation.kind.toLowerCase(),
    input.operation.name,
  ]);
}

/** A taint on a node, as a Job pinned there must tolerate it. */
export interface NodeTaint {
  readonly key: string;
  readonly effect: string;
  readonly value?: string;
}

/** The job fields of a spec (NodeOp's, and the update Job of an inPlace NodeImage): what a node Job runs. */
export interface NodeJobSpec {
  readonly image: string;
  readonly command: readonly string[];
  readonly imagePullSecrets: readonly string[];
  readonly backoffLimit: number;
  readonly privileged: boolean;
  /** Where the host's root is mounted in the container; default /host. */
  readonly hostMountPath?: string;
  readonly env?: Readonly<Record<string, string>>;
}
