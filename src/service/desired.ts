/**
 * What the service knows of the Git source: the newest revision fetched and the newest valid
 * one, which stays in force while later commits are refused. One home for both, so status,
 * readiness and the round read the same answer.
 */
import type { Logger } from 'pino';
import type { CloudProvider } from '../cloud/provider.js';
import type { DesiredState, LoadResult, Provider } from '../spec/model.js';
import { describeError } from '../errors.js';
import type { WebhookHandler } from './http.js';
import type { ServiceMetrics } from './metrics.js';

/** The newest commit of the tracked branch and what the loader made of it. */
export interface DesiredRevision {
  readonly commit: string;
  readonly load: LoadResult;
}

/** Where desired state comes from: a Git remote, or a directory (tests, `drydock plan`). */
export interface DesiredSource {
  /** Fetches if needed; resolves to the newest revision. Throws when the source is unreachable. */
  sync(): Promise<DesiredRevision>;
  /** A webhook route that calls `notify` when a push was received and verified. */
  webhook?: (notify: () => void) => WebhookHandler;
  close?(): Promise<void>;
}

export interface InForce {
  readonly commit: string;
  readonly desired: DesiredState;
}

export interface DesiredTrackerOptions {
  readonly source: DesiredSource;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  /** Milliseconds since the epoch. */
  readonly clock: () => number;
  /** Called when a new commit arrived (valid or not). */
  readonly onNewCommit: () => void;
}

export class DesiredTracker {
  private newestRev: DesiredRevision | undefined;
  private inForceRev: InForce | undefined;

  constructor(private readonly opts: DesiredTrackerOptions) {}

  get newest(): DesiredRevision | undefined {
    return this.newestRev;
  }

  get inForce(): InForce | undefined {
    return this.inForceRev;
  }

  /** Fetches the source; never throws (a failed sync is counted and logged, the last commit stays). */
  async sync(): Promise<void> {
    const { logger: log, metrics } = this.opts;
    try {
      const rev = await this.opts.source.sync();
      metrics.markGitSync(this.opts.clock());
      if (rev.commit === this.newestRev?.commit) return;
      this.newestRev = rev;
      if (rev.load.ok) {
        this.inForceRev = { commit: rev.commit, desired: rev.load.desired };
        log.info({ commit: rev.commit, files: rev.load.files.length }, 'commit loaded');
      } else {
        metrics.errors.inc({ kind: 'stalled', code: 'InvalidCommit' });
        log.warn(
          { commit: rev.commit, errors: rev.load.errors.length, inForce: this.inForceRev?.commit },
          'commit refused; the last valid commit stays in force',
        );
      }
      this.opts.onNewCommit();
    } catch (err) {
      metrics.errors.inc({ kind: 'git', code: String(describeError(err).code ?? 'sync') });
      log.warn({ err: describeError(err) }, 'git sync failed');
    }
  }

  /** The commits as status and state() show them. */
  commits(): { sourceCommit?: string; newestCommit?: string } {
    return {
      ...(this.inForceRev ? { sourceCommit: this.inForceRev.commit } : {}),
      ...(this.newestRev ? { newestCommit: this.newestRev.commit } : {}),
    };
  }

  /**
   * The cloud of a scaling group: the one its spec in force names, or the only one configured
   * (a group no spec names any more still has instances to clean up).
   */
  providerOf(groupId: string, providers: Partial<Record<Provider, CloudProvider>>): CloudProvider | undefined {
    const sg = this.inForceRev?.desired.scalingGroups.find((g) => g.groupId === groupId);
    if (sg) return providers[sg.provider];
    const configured = Object.values(providers).filter((p): p is CloudProvider => p !== undefined);
    return configured.length === 1 ? configured[0] : undefined;
  }
}
