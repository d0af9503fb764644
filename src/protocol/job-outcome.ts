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

/** Reads `job` and the pods it made (select them with `batch.kubernetes.io/job-name`). */
export function jobOutcome(job: V1Job, pods: readonly V1Pod[]): JobOutcome {
  const complete = condition(job, 'Complete');
  const failed = condition(job, 'Failed');
  const state: JobState = complete !== undefined ? 'succeeded' : failed !== undefined ? 'failed' : 'running';
  const attempts = (job.status?.succeeded ?? 0) + (job.status?.failed ?? 0);
  const pod = lastPod(pods);
  const finished = complete?.lastTransitionTime ?? failed?.lastTransitionTime ?? job.status?.completionTime;
  return {
    state,
    attempts,
    ...(state === 'failed' && failed?.reason !== undefined ? { reason: failed.reason } : {}),
    ...(pod !== undefined ? { lastPod: podSummary(pod) } : {}),
    ...(state !== 'running' && finished !== undefined ? { finishedAt: new Date(finished).toISOString() } : {}),
  };
}
