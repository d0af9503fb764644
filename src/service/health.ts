/**
 * The service's health, as /healthz and /readyz report it. Liveness fails while shutting down
 * and when a round has run longer than `stuckAfterMs` (requests to the API server have no
 * deadline of their own; a round stuck on one would stop the loop for good, so liveness fails
 * and the pod is restarted). Readiness waits for the cluster caches and a valid commit. The
 * clock is injected, like the service's.
 */
import { shortRevision } from '../commit.js';
import type { Readiness } from './http.js';

export interface Liveness {
  readonly ok: boolean;
  readonly reason?: string;
}

export class RoundWatch {
  private startedAt: number | undefined;
  private stopping = false;

  /** `clock`: milliseconds since the epoch. */
  constructor(
    private readonly clock: () => number,
    private readonly stuckAfterMs: number,
  ) {}

  roundStarted(): void {
    this.startedAt = this.clock();
  }

  roundEnded(): void {
    this.startedAt = undefined;
  }

  shuttingDown(): void {
    this.stopping = true;
  }

  liveness(): Liveness {
    if (this.stopping) return { ok: false, reason: 'shutting down' };
    if (this.startedAt === undefined) return { ok: true };
    const runningMs = this.clock() - this.startedAt;
    if (runningMs > this.stuckAfterMs)
      return { ok: false, reason: `a reconcile has been running for ${Math.round(runningMs / 1000)}s` };
    return { ok: true };
  }
}

export interface ReadinessInput {
  readonly synced: boolean;
  /** The commit in force (the newest valid one), if any. */
  readonly inForce?: string;
  /** The newest commit fetched, valid or not. */
  readonly newest?: string;
}

export function readiness(input: ReadinessInput): Readiness {
  const reasons: string[] = [];
  if (!input.synced) reasons.push('cluster caches not synced');
  if (input.inForce === undefined) {
    reasons.push(
      input.newest !== undefined
        ? `no valid commit yet (newest ${shortRevision(input.newest)} was refused)`
        : 'no commit fetched yet',
    );
  }
  return { ready: reasons.length === 0, reasons };
}
