/**
 * The service's Git polling: on a node-cron schedule (--poll-schedule, or the one --interval
 * turns into, src/source/poller.ts), or on a plain timer for an interval no cron step
 * expresses (90s, 7m) and for intervals in milliseconds (embedding, tests). A tick still
 * running when the next is due is skipped; bursts are coalesced further by the source itself.
 */
import { parsePositiveDuration } from '../duration.js';
import { createPoller, durationToCron } from '../source/poller.js';

export interface Polling {
  stop(): Promise<void>;
}

export interface PollingOptions {
  /** A cron expression (five fields, or six with seconds); wins over the others. */
  readonly schedule?: string;
  /** A duration: 30s, 1m, 90s ... */
  readonly interval?: string;
  readonly intervalMs?: number;
  readonly tick: () => Promise<void>;
}

/** The cron expression for an interval a cron step divides evenly; undefined for any other. */
function cronFor(interval: string): string | undefined {
  try {
    return durationToCron(interval);
  } catch {
    return undefined;
  }
}

export function startPolling(opts: PollingOptions): Polling {
  const cron = opts.schedule ?? (opts.interval !== undefined ? cronFor(opts.interval) : undefined);
  if (cron !== undefined) {
    const poller = createPoller({ schedule: cron, tick: opts.tick });
    return { stop: () => poller.stop() };
  }
  const intervalMs =
    (opts.interval !== undefined ? parsePositiveDuration(opts.interval) : undefined) ?? opts.intervalMs ?? 60_000;
  return pollOnTimer(intervalMs, opts.tick);
}

function pollOnTimer(intervalMs: number, tick: () => Promise<void>): Polling {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const next = (): void => {
    timer = setTimeout(() => {
      void tick().finally(() => {
        if (!stopped) next();
      });
    }, intervalMs);
  };
  next();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
