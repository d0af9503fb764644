/**
 * What the real clouds' providers share: the per-call deadline, reading a Retry-After header,
 * and the error a call that ran out of time becomes.
 */
import { CloudError, type CloudErrorCode, type CloudErrorData } from './provider.js';

/** Per API call, unless the provider is configured otherwise. Long-running operations have their own. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** How long a provider waits for a cloud's long-running operation before it reports Transient. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 600_000;
/** Throttled without a Retry-After: wait this long (the clouds' documented minimum backoff is about 1 s; be kinder). */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(header: string | null | undefined, now = Date.now()): number | undefined {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  const trimmed = header.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Math.max(1, Math.ceil(Number(trimmed)));
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/** An AbortSignal that fires after `ms`, for one call. */
export function deadline(ms: number): AbortSignal {
  return AbortSignal.timeout(ms);
}

/** Whether `err` is the abort of a call's deadline (or any abort: drydock only aborts on deadlines). */
export function isTimeout(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown } | null;
  return (
    e !== null &&
    typeof e === 'object' &&
    (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'ABORT_ERR')
  );
}

export function timeoutError(context: string, ms: number, data: CloudErrorData): CloudError {
  return new CloudError('Transient', `${context}: no answer within ${ms} ms; retry`, data);
}

/** Runs `fn` with a deadline of `ms`; a call still running then is abandoned as Transient. */
export async function withDeadline<T>(
  context: string,
  ms: number,
  data: CloudErrorData,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const signal = deadline(ms);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError(context, ms, data)), ms);
  });
  try {
    return await Promise.race([fn(signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Stable, sorted by id, as GroupDescription promises. */
export function byId<T extends { readonly id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** What a person (or the planner) does next, the last words of every cloud error: `quotaOf` names whose quota, `access` what grants drydock its permissions. */
export function nextStep(
  code: CloudErrorCode,
  words: { readonly quotaOf: string; readonly access: string; readonly notFound?: string },
): string {
  switch (code) {
    case 'Throttled':
      return 'retry later';
    case 'Transient':
      return 'retry';
    case 'QuotaExceeded':
      return `wait for instances to go or raise the ${words.quotaOf} quota`;
    case 'NotFound':
      return words.notFound ?? "check the ScalingGroup's groupId";
    case 'Permanent':
      return `fix the request or ${words.access}`;
  }
}

/**
 * When an instance was first seen, for one whose cloud does not (yet) say when it was created:
 * a join timeout then counts from the first sighting (after a restart, from the new one), which
 * errs towards waiting longer, never towards removing a new instance at once.
 */
export class FirstSeen {
  private readonly seen = new Map<string, string>();
  at(key: string, now = new Date()): string {
    let t = this.seen.get(key);
    if (t === undefined) {
      t = now.toISOString();
      this.seen.set(key, t);
    }
    return t;
  }
}
