/**
 * Every wait the sandbox does has a deadline and says what it waits for, so a stuck start-up
 * ends with "timed out after 120s waiting for <what>" and the log to read, never a hang.
 */
import { SandboxError } from './errors.js';

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Checked before each probe: a failure elsewhere (a process died) ends the wait at once. */
  readonly failure?: () => SandboxError | undefined;
  /** Ends the wait early with Interrupted. */
  readonly signal?: AbortSignal;
  /** The log to point at when the wait times out. */
  readonly log?: string;
  readonly step?: string;
}

/** What a probe reports when not done yet: the reason, shown if the wait times out. */
export interface NotYet {
  readonly notYet: string;
}

export function notYet(reason: string): NotYet {
  return { notYet: reason };
}

function isNotYet(value: unknown): value is NotYet {
  return (
    typeof value === 'object' && value !== null && 'notYet' in value && typeof (value as NotYet).notYet === 'string'
  );
}

/** Resolves after `ms`, or at once when `signal` aborts. The timer never keeps the process alive past it. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Calls `probe` until it returns a value that is not NotYet. A probe that throws counts as
 * not yet (the thing may still be starting); its message is kept as the last problem.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | NotYet>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 500;
  let lastProblem: string | undefined;
  for (;;) {
    const failed = options.failure?.();
    if (failed !== undefined) throw failed;
    if (options.signal?.aborted) {
      throw new SandboxError('Interrupted', `interrupted while waiting for ${what}`, {
        waitingFor: what,
        ...(options.step === undefined ? {} : { step: options.step }),
      });
    }
    try {
      const value = await probe();
      if (!isNotYet(value)) return value;
      lastProblem = value.notYet;
    } catch (err) {
      lastProblem = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline) {
      const seconds = Math.round(options.timeoutMs / 1000);
      throw new SandboxError('Timeout', `timed out after ${seconds}s waiting for ${what}`, {
        waitingFor: what,
        timeoutSeconds: seconds,
        ...(lastProblem === undefined ? {} : { lastProblem }),
        ...(options.log === undefined ? {} : { log: options.log }),
        ...(options.step === undefined ? {} : { step: options.step }),
      });
    }
    await delay(Math.min(interval, Math.max(0, deadline - Date.now())), options.signal);
  }
}
