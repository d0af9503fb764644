/**
 * What the service knows of the desired state: the source's record of the newest commit
 * loaded and the one in force (source/in-force.ts), read, never kept a second time; a sync
 * counted, logged and turned into a round when a new commit arrived. One home, so status,
 * readiness and the round read the same answer.
 */
import type { Logger } from 'pino';
import type { CloudProvider } from '../cloud/provider.js';
import type { Provider } from '../spec/model.js';
import { describeError } from '../errors.js';
import { CommitsInForce, type AppliedCommit, type CommitsView, type DesiredRevision } from '../source/in-force.js';
import type { WebhookHandler } from './http.js';
import type { ServiceMetrics } from './metrics.js';

export type { AppliedCommit, DesiredRevision } from '../source/in-force.js';

/** Where desired state comes from: a Git remote, or a directory (tests, `drydock plan`). */
export interface DesiredSource {
  /**
   * Fetches if needed and loads a new commit into `commits`; resolves to the newest revision.
   * Throws when the source is unreachable.
   */
  sync(): Promise<DesiredRevision>;
  /** The newest commit loaded and the one in force: the source's record, which the service reads. */
  readonly commits: CommitsView;
  /** A webhook route that calls `notify` when a push was received and verified. */
  webhook?: (notify: () => void) => WebhookHandler;
  close?(): Promise<void>;
}

/**
 * A source that loads a whole revision on each sync (a directory, one read of a remote's tip):
 * each revision is recorded in a CommitsInForce of its own.
 */
export function revisionSource(load: () => Promise<DesiredRevision>): DesiredSource {
  const commits = new CommitsInForce();
  return {
    commits,
    async sync() {
      const rev = await load();
      commits.loaded(rev);
      return rev;
    },
  };
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
  constructor(private readonly opts: DesiredTrackerOptions) {}

  get newest(): DesiredRevision | undefined {
    return this.opts.source.commits.newest;
  }

  get inForce(): AppliedCommit | undefined {
    return this.opts.source.commits.inForce;
  }

  /** Fetches the source; never throws (a failed sync is counted and logged, the last commit stays). */
  async sync(): Promise<void> {
    const { logger: log, metrics } = this.opts;
    const before = this.newest?.commit;
    try {
      await this.opts.source.sync();
      metrics.markGitSync(this.opts.clock());
      const rev = this.newest;
      if (rev === undefined || rev.commit === before) return;
      if (rev.load.ok) {
        log.info({ commit: rev.commit, files: rev.load.files.length }, 'commit loaded');
      } else {
        metrics.errors.inc({ kind: 'stalled', code: 'InvalidCommit' });
        log.warn(
          { commit: rev.commit, errors: rev.load.errors.length, inForce: this.inForce?.commit },
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
      ...(this.inForce ? { sourceCommit: this.inForce.commit } : {}),
      ...(this.newest ? { newestCommit: this.newest.commit } : {}),
    };
  }

  /**
   * The cloud of a scaling group: the one its spec in force names, or the only one configured
   * (a group no spec names any more still has instances to clean up).
   */
  providerOf(groupId: string, providers: Partial<Record<Provider, CloudProvider>>): CloudProvider | undefined {
    const sg = this.inForce?.desired.scalingGroups.find((g) => g.groupId === groupId);
    if (sg) return providers[sg.provider];
    const configured = Object.values(providers).filter((p): p is CloudProvider => p !== undefined);
    return configured.length === 1 ? configured[0] : undefined;
  }
}
