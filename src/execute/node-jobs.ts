/**
 * The executor's side of the objects drydock runs on nodes: create an operation or gate Job
 * or a reboot pod exactly once (the name is deterministic, so AlreadyExists means "found the
 * one made before", provided it is ours), read a Job's outcome, and delete a finished Job or
 * a reboot pod once the outcome is recorded. Each call is safe to repeat.
 */
import type { BatchV1Api, CoreV1Api, V1Job, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { ForeignObjectError } from './foreign-object.js';
import type { Outcome } from './classify.js';
import { httpStatus } from './classify.js';
import { JOB_LABELS } from '../protocol/jobs.js';
import { JOB_NAME_LABEL, jobOutcome, type JobOutcome } from '../protocol/job-outcome.js';
import { noteWrite, type WriteListener } from '../kube/written.js';

export interface JobApis {
  readonly core: CoreV1Api;
  readonly batch: BatchV1Api;
}

export interface JobDeps {
  readonly kube: JobApis;
  /** Told of each object written, with the version it was given (src/kube/written.ts). */
  readonly wrote?: WriteListener;
  readonly fieldManager: string;
}

export { ForeignObjectError } from './foreign-object.js';
export { JOB_NAME_LABEL } from '../protocol/job-outcome.js';

const IDENTITY = [
  JOB_LABELS.managedBy,
  JOB_LABELS.operation,
  JOB_LABELS.revision,
  JOB_LABELS.node,
  JOB_LABELS.step,
] as const;

function sameIdentity(want: V1ObjectMeta | undefined, found: V1ObjectMeta | undefined): boolean {
  return IDENTITY.every((k) => want?.labels?.[k] === found?.labels?.[k]);
}

function where(meta: V1ObjectMeta | undefined): { namespace: string; name: string } {
  return { namespace: meta?.namespace ?? '', name: meta?.name ?? '' };
}

/**
 * Creates `object` unless it exists. An existing one with drydock's labels for the same
 * operation, revision, node and step is the one made before (skipped); any other is refused.
 */
async function createOnce<T extends { metadata?: V1ObjectMeta }>(
  kind: string,
  object: T,
  create: () => Promise<T>,
  read: () => Promise<T>,
  wrote?: (created: T) => void,
): Promise<Outcome> {
  try {
    wrote?.(await create());
    return { kind: 'done' };
  } catch (err) {
    if (httpStatus(err) !== 409) throw err;
  }
  const found = await read();
  if (!sameIdentity(object.metadata, found.metadata)) throw new ForeignObjectError({ kind, ...where(object.metadata) });
  return { kind: 'skipped', reason: `${kind} ${where(object.metadata).name} already exists` };
}

/** Creates an operation or gate Job once (nodeJob, gateJob build it). */
export function createJob(job: V1Job, d: JobDeps): Promise<Outcome> {
  const { namespace, name } = where(job.metadata);
  return createOnce(
    'Job',
    job,
    () => d.kube.batch.createNamespacedJob({ namespace, body: job, fieldManager: d.fieldManager }),
    () => d.kube.batch.readNamespacedJob({ namespace, name }),
    (created) => noteWrite(d.wrote, 'jobs', created),
  );
}

/** Creates a reboot pod once (rebootPod builds it). */
export function createRebootPod(pod: V1Pod, d: JobDeps): Promise<Outcome> {
  const { namespace, name } = where(pod.metadata);
  return createOnce(
    'Pod',
    pod,
    () => d.kube.core.createNamespacedPod({ namespace, body: pod, fieldManager: d.fieldManager }),
    () => d.kube.core.readNamespacedPod({ namespace, name }),
    (created) => noteWrite(d.wrote, 'pods', created),
  );
}

/** The Job's outcome with its last pod's termination message; undefined when there is no such Job. */
export async function readJobOutcome(kube: JobApis, namespace: string, name: string): Promise<JobOutcome | undefined> {
  let job: V1Job;
  try {
    job = await kube.batch.readNamespacedJob({ namespace, name });
  } catch (err) {
    if (httpStatus(err) === 404) return undefined;
    throw err;
  }
  const pods = await kube.core.listNamespacedPod({ namespace, labelSelector: `${JOB_NAME_LABEL}=${name}` });
  return jobOutcome(job, pods.items);
}

/**
 * Deletes a Job that has finished, and its pods with it (Background propagation). A Job still
 * running is left alone: its outcome is not recorded yet, and deleting it would run it again.
 */
export async function deleteFinishedJob(namespace: string, name: string, d: JobDeps): Promise<Outcome> {
  const outcome = await readJobOutcome(d.kube, namespace, name);
  if (outcome === undefined) return { kind: 'skipped', reason: `Job ${namespace}/${name} already gone` };
  if (outcome.state === 'running')
    return { kind: 'skipped', reason: `Job ${namespace}/${name} is still running; not deleted` };
  try {
    await d.kube.batch.deleteNamespacedJob({ namespace, name, propagationPolicy: 'Background' });
  } catch (err) {
    if (httpStatus(err) === 404) return { kind: 'skipped', reason: `Job ${namespace}/${name} already gone` };
    throw err;
  }
  return { kind: 'done' };
}

/** Deletes a reboot pod once the reboot is verified (the pod has nothing left to do). */
export async function deleteRebootPod(namespace: string, name: string, d: JobDeps): Promise<Outcome> {
  try {
    await d.kube.core.deleteNamespacedPod({ namespace, name });
  } catch (err) {
    if (httpStatus(err) === 404) return { kind: 'skipped', reason: `pod ${namespace}/${name} already gone` };
    throw err;
  }
  return { kind: 'done' };
}
