/**
 * The service's Git polling: on the node-cron schedule of --interval (src/source/poller.ts),
 * a tick still running when the next is due is skipped; bursts are coalesced further by the
 * source itself. An interval in milliseconds (embedding, tests) runs on a plain timer instead.
 */
import { createPoller } from '../source/poller.js';

export interface Polling {
  stop(): Promise<void>;
}

export function startPolling(opts: { readonly interval?: string; readonly intervalMs?: number; readonly tick: () => Promise<void> }): Polling {
  if (opts.interval !== undefined) {
    const poller = createPoller({ interval: opts.interval, tick: opts.tick });
    return { stop: () => poller.stop() };
  }
  const intervalMs = opts.intervalMs ?? 60_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const next = (): void => {
    timer = setTimeout(() => {
      void opts.tick().finally(() => {
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
