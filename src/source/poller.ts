/**
 * Polling on a node-cron schedule: one the user gives (--poll-schedule), or the one an
 * --interval turns into, with a seconds field (node-cron 4 accepts six fields): 30s →
 * "*\/30 * * * * *", 5m → "0 *\/5 * * * *", 1h → "0 0 * * * *". durationToCron refuses a
 * duration a cron step cannot express evenly (90s, 7m), naming the nearest ones that work;
 * the service polls those on a plain timer instead (service/polling.ts).
 */
import cron from 'node-cron';
import { parseDuration as parseDurationMs } from '../duration.js';
import { GitSourceError } from './errors.js';

/** Whole seconds in a poll interval like 30s, 1m, 5m, 2h (a bare number is seconds). */
export function parseDuration(text: string): number {
  const ms = parseDurationMs(text);
  const n = ms === undefined || ms % 1000 !== 0 ? Number.NaN : ms / 1000;
  if (!Number.isFinite(n) || n <= 0) {
    throw new GitSourceError(
      'invalid-option',
      `--interval ${JSON.stringify(text)} is not a duration; write it like 30s, 1m or 5m`,
      { interval: text },
    );
  }
  return n;
}

function divisors(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
}

/** A six-field cron expression firing every `text` (30s, 1m, 5m, 1h ...). */
export function durationToCron(text: string): string {
  const seconds = parseDuration(text);
  const refuse = (unit: string, ok: string[]): never => {
    throw new GitSourceError(
      'invalid-option',
      `--interval ${text} does not divide ${unit} evenly; use one of ${ok.join(', ')}`,
      { interval: text },
    );
  };
  if (seconds < 60)
    return seconds === 1
      ? '* * * * * *'
      : 60 % seconds === 0
        ? `*/${seconds} * * * * *`
        : refuse(
            'a minute',
            divisors(60).map((d) => `${d}s`),
          );
  if (seconds % 60 !== 0)
    return refuse(
      'a minute',
      divisors(60).map((d) => `${d}m`),
    );
  const minutes = seconds / 60;
  if (minutes < 60)
    return minutes === 1
      ? '0 * * * * *'
      : 60 % minutes === 0
        ? `0 */${minutes} * * * *`
        : refuse(
            'an hour',
            divisors(60).map((d) => `${d}m`),
          );
  if (minutes % 60 !== 0)
    return refuse(
      'an hour',
      divisors(24).map((d) => `${d}h`),
    );
  const hours = minutes / 60;
  if (hours === 24) return '0 0 0 * * *';
  return hours === 1
    ? '0 0 * * * *'
    : 24 % hours === 0
      ? `0 0 */${hours} * * *`
      : refuse(
          'a day',
          divisors(24).map((d) => `${d}h`),
        );
}

export interface Poller {
  readonly expression: string;
  stop(): Promise<void>;
}

/** Whether node-cron accepts `expression` (five fields, or six with seconds first). */
export function isCronSchedule(expression: string): boolean {
  return cron.validate(expression);
}

/**
 * Calls `tick` on the cron `schedule`, or every `interval` a cron step expresses; a tick still
 * running when the next is due is skipped (noOverlap).
 */
export function createPoller(
  opts: { interval: string; tick: () => Promise<void> | void } | { schedule: string; tick: () => Promise<void> | void },
): Poller {
  const expression = 'schedule' in opts ? opts.schedule : durationToCron(opts.interval);
  if (!isCronSchedule(expression))
    throw new GitSourceError(
      'invalid-option',
      `--poll-schedule ${JSON.stringify(expression)} is not a cron expression; write e.g. '*/5 * * * *'`,
      { schedule: expression },
    );
  const task = cron.schedule(
    expression,
    async () => {
      await opts.tick();
    },
    { noOverlap: true, name: 'drydock-git-poll' },
  );
  return {
    expression,
    async stop() {
      await task.stop();
      await task.destroy();
    },
  };
}
