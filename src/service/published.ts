/**
 * What the status branch holds, for the planner's `published` option: an ended maintenance's
 * record leaves its node once the branch holds the ending, and the Ended row is carried from
 * the branch from then on; a metric gate's halt (onBreach halt) stays while the branch shows it.
 * Within a leadership that is the last snapshot this replica wrote; before its first write (at
 * startup, and on every takeover: another replica may have written since) the branch's tip is
 * read, and its Ended NodeMaintenance rows and metric halts stand for it. Until that
 * read succeeded no status is written: a write whose plan lacked the carried rows would drop
 * their files, and with the record gone from the node the ending would be lost.
 */
import type { Logger } from 'pino';
import { describeError } from '../errors.js';
import type { SpecStatus } from '../plan/types.js';
import type { StatusSnapshot } from './status.js';

export interface PublishedStatusesOptions {
  /** Reads the spec statuses of the branch's tip for a cluster; absent without a status branch. */
  readonly read?: (cluster: string) => Promise<readonly SpecStatus[]>;
  /** The last snapshot written in this leadership (StatusPublisher.written). */
  readonly written: () => StatusSnapshot | undefined;
  readonly logger: Logger;
}

/**
 * The branch's rows a new leader carries (the rest is planned afresh): its ended maintenances,
 * and the specs a metric gate halted, whose halt outlasts the breach and the process.
 */
export function carriedRows(specs: readonly SpecStatus[]): SpecStatus[] {
  return specs.filter((s) => (s.spec.kind === 'NodeMaintenance' && s.phase === 'Ended') || s.metricHalt !== undefined);
}

export class PublishedStatuses {
  /** What the branch holds, as this leadership knows it: read from the tip, then as written. */
  private held: readonly SpecStatus[] | undefined;
  /** Whether the last round's plan had what the branch holds. */
  private planHadBranch = false;
  /** Every spec status of the branch's tip as read before this leadership's first write. */
  private tip: readonly SpecStatus[] | undefined;

  constructor(private readonly opts: PublishedStatusesOptions) {}

  /** A new leadership: what the branch holds is read again before the first write. */
  forget(): void {
    this.held = undefined;
    this.planHadBranch = false;
    this.tip = undefined;
  }

  /**
   * What the branch held before this leadership wrote to it (the notifications' history when
   * there is no sent-log yet); undefined until read, and without a status branch.
   */
  branchTip(): readonly SpecStatus[] | undefined {
    return this.tip;
  }

  /**
   * The statuses for this round's plan: undefined without a status branch, or while the tip
   * could not be read (the records then stay on the nodes). A standby does not read the tip.
   */
  async forPlan(cluster: string, leading: boolean): Promise<readonly SpecStatus[] | undefined> {
    if (this.opts.read === undefined) return undefined;
    const written = this.opts.written();
    // A failed round's report has no specs (that round made no plan): the endings known before
    // it are carried on, so the next round's write puts back the files it dropped.
    if (written !== undefined && written.lastError === undefined) this.held = written.specs;
    else if (this.held === undefined && leading && cluster !== '') {
      try {
        this.tip = await this.opts.read(cluster);
        this.held = carriedRows(this.tip);
        this.opts.logger.info({ carried: this.held.length }, 'status branch read before the first status write');
      } catch (err) {
        this.opts.logger.warn({ err: describeError(err) }, 'status branch not read; no status written until it is');
      }
    }
    this.planHadBranch = this.held !== undefined;
    return this.held;
  }

  /** Whether this round's snapshot may be written: its plan had what the branch holds. */
  mayWrite(): boolean {
    return this.opts.read === undefined || this.planHadBranch;
  }
}
