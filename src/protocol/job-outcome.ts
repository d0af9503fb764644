/**
 * What a Job drydock ran came to: still running, succeeded, or failed after its retries; how
 * many pods it took; and its last pod's termination message, which status keeps once the Job
 * itself is deleted.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';

/** The label the Job controller puts on a Job's pods. */
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

export type JobState = 'running' | 'succeeded' | 'failed';

export interface JobOutcome {
  readonly state: JobState;
  /** Pods that ended (succeeded + failed): the attempts the Job made. */
  readonly attempts: number;
  /** The Job's reason when it failed (BackoffLimitExceeded, DeadlineExceeded, ...). */
  readonly reason?: string;
  /** The last pod's container: termination message, exit code and reason, when it ended. */
  readonly lastPod?: {
    readonly name: string;
    readonly exitCode?: number;
    readonly reason?: string;
    readonly message?: string;
  };
  /** ISO instant the Job finished. */
  readonly finishedAt?: string;
  /**
   * Its success read from its pod (a Job of one completion) before the Job controller recorded
   * it: the Job does not show its outcome yet.
   */
  readonly fromPod?: true;
}

/** The limit on a termination message kept in status (the kubelet keeps up to 4 KiB). */
export const MAX_MESSAGE = 1024;

function condition(job: V1Job, type: string): { reason?: string; lastTransitionTime?: Date } | undefined {
  const c = job.status?.conditions?.find((x) => x.type === type && x.status === 'True');
  return c === undefined
    ? undefined
    : {
        ...(c.reason !== undefined ? { reason: c.reason } : {}),
        ...(c.lastTransitionTime !== undefined ? { lastTransitionTime: c.lastTransitionTime } : {}),
      };
}

function created(p: V1Pod): number {
  const t = p.metadata?.creationTimestamp;
  return t === undefined ? 0 : new Date(t).getTime();
}

/** The pod created last (tie-break on name), that is the Job's last attempt. */
function lastPod(pods: readonly V1Pod[]): V1Pod | undefined {
  return [...pods]
    .sort((a, b) => created(a) - created(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))
    .at(-1);
}

function podSummary(pod: V1Pod): NonNullable<JobOutcome['lastPod']> {
  const statuses = pod.status?.containerStatuses ?? [];
  // The first container that ended with an error explains a failure best; otherwise the first that ended.
  const ended = statuses.map((s) => s.state?.terminated).filter((t) => t !== undefined);
  const t = ended.find((x) => x.exitCode !== 0) ?? ended[0];
  const message = t?.message?.trim();
  return {
    name: pod.metadata?.name ?? '',
    ...(t !== undefined ? { exitCode: t.exitCode } : {}),
    ...(t?.reason !== undefined ? { reason: t.reason } : {}),
    ...(message !== undefined && message !== ''
      ? { message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message }
      : {}),
  };
}

/**
 * Pods the Job counted as ended: succeeded and failed, with those it has seen end but not yet
 * moved into those counts (status.uncountedTerminatedPods, while it removes their finalizers).
 */
function jobAttempts(job: V1Job): number {
  const s = job.status;
  const uncounted = s?.uncountedTerminatedPods;
  return (
    (s?.succeeded ?? 0) + (s?.failed ?? 0) + (uncounted?.succeeded?.length ?? 0) + (uncounted?.failed?.length ?? 0)
  );
}

/**
 * No pod of the Job runs or is still terminating. `status.terminating` is reported where the
 * Job controller counts terminating pods (the JobPodReplacementPolicy feature: on by default
 * since Kubernetes 1.29, always since 1.34); without it a pod being deleted counts neither in
 * `active` nor anywhere else, so nothing can be said and the answer is no.
 */
function nothingRunning(job: V1Job): boolean {
  const s = job.status;
  return s?.terminating === 0 && (s.active ?? 0) === 0;
}

/**
 * A Job that runs one pod at a time to one completion (drydock's operation and update Jobs; a
 * gate's template may ask for more): the first pod of it that succeeds is its success.
 */
function oneCompletion(job: V1Job): boolean {
  const s = job.spec;
  return (
    (s?.completions ?? 1) === 1 &&
    (s?.parallelism ?? 1) <= 1 &&
    (s?.completionMode ?? 'NonIndexed') === 'NonIndexed' &&
    s?.suspend !== true
  );
}

/** The label the Job controller puts on a Job's pods with the Job's uid (and, before 1.27, without the prefix). */
const CONTROLLER_UID_LABELS = ['batch.kubernetes.io/controller-uid', 'controller-uid'];

/** The pods this Job made, not a Job of the same name before it (by its uid, when it is known). */
function ownPods(job: V1Job, pods: readonly V1Pod[]): readonly V1Pod[] {
  const uid = job.metadata?.uid;
  if (uid === undefined) return pods;
  return pods.filter((p) => CONTROLLER_UID_LABELS.some((l) => p.metadata?.labels?.[l] === uid));
}

/** When the pod's last container ended. */
function podEnded(pod: V1Pod): Date | undefined {
  const ends = (pod.status?.containerStatuses ?? []).flatMap((c) => {
    const at = c.state?.terminated?.finishedAt;
    return at === undefined ? [] : [new Date(at).getTime()];
  });
  return ends.length === 0 ? undefined : new Date(Math.max(...ends));
}

/**
 * Whether the Job succeeded, failed or still runs. `Complete` and `Failed` are final. Since
 * Kubernetes 1.31 the Job controller first adds `SuccessCriteriaMet` or `FailureTarget` when
 * the outcome is decided, and the final condition a sync later, once every pod has terminated
 * and been counted (the pods' tracking finalizers removed): the two come milliseconds apart,
 * but as two watch events. A decided Job with no pod running or terminating is read as its
 * outcome then: nothing of it still runs on the node. One that still has a pod (a deadline
 * being enforced, a lingering pod of a success policy) waits for the final condition.
 *
 * Before either, a Job of one completion succeeded when its pod did: the Job controller syncs
 * a Job on its pods' events at most once a second (its batch period), so it may record the
 * outcome up to a second after the pod ended, and nothing of the Job runs on the node after
 * that pod. A failed pod is not read: the Job may try again (backoffLimit).
 */
function jobState(
  job: V1Job,
  pods: readonly V1Pod[],
): { state: JobState; by?: { reason?: string; lastTransitionTime?: Date }; fromPod?: true } {
  const complete = condition(job, 'Complete');
  if (complete !== undefined) return { state: 'succeeded', by: complete };
  const failed = condition(job, 'Failed');
  if (failed !== undefined) return { state: 'failed', by: failed };
  const target = condition(job, 'FailureTarget');
  if (target !== undefined) return nothingRunning(job) ? { state: 'failed', by: target } : { state: 'running' };
  const met = condition(job, 'SuccessCriteriaMet');
  if (met !== undefined && nothingRunning(job)) return { state: 'succeeded', by: met };
  const succeeded = oneCompletion(job) ? ownPods(job, pods).find((p) => p.status?.phase === 'Succeeded') : undefined;
  if (succeeded !== undefined) {
    const ended = podEnded(succeeded);
    return { state: 'succeeded', fromPod: true, ...(ended !== undefined ? { by: { lastTransitionTime: ended } } : {}) };
  }
  return { state: 'running' };
}

/** Pods that ended, as the Job counts them or, before it has, as they say. */
function attemptsOf(job: V1Job, pods: readonly V1Pod[]): number {
  const ended = pods.filter((p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed').length;
  return Math.max(jobAttempts(job), ended);
}

/** Reads `job` and the pods it made (select them with `batch.kubernetes.io/job-name`). */
export function jobOutcome(job: V1Job, pods: readonly V1Pod[]): JobOutcome {
  const { state, by, fromPod } = jobState(job, pods);
  const pod = lastPod(pods);
  const finished = by?.lastTransitionTime ?? job.status?.completionTime;
  return {
    state,
    attempts: attemptsOf(job, pods),
    ...(state === 'failed' && by?.reason !== undefined ? { reason: by.reason } : {}),
    ...(pod !== undefined ? { lastPod: podSummary(pod) } : {}),
    ...(state !== 'running' && finished !== undefined ? { finishedAt: new Date(finished).toISOString() } : {}),
    ...(fromPod === true ? { fromPod } : {}),
  };
}
