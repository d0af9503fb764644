/**
 * Which commit's specs are in force (DESIGN.md principle 3: a commit is applied whole or not
 * at all): the newest commit loaded, and the newest one that was valid as a whole, which stays
 * in force while later commits are refused. The one record of it: Sync keeps one for the Git
 * source, every other source one of its own, and the service reads the source's.
 */
import type { DesiredState, LoadResult } from '../spec/model.js';

/** A commit of the tracked branch and what the loader made of it. */
export interface DesiredRevision {
  readonly commit: string;
  readonly load: LoadResult;
}

/** A commit valid as a whole: its specs are the ones in force. */
export interface AppliedCommit {
  readonly commit: string;
  readonly desired: DesiredState;
  readonly files: readonly string[];
}

/** What readers of the record see: the two commits, never a way to move them. */
export interface CommitsView {
  readonly newest: DesiredRevision | undefined;
  readonly inForce: AppliedCommit | undefined;
}

export class CommitsInForce implements CommitsView {
  private newestRev: DesiredRevision | undefined;
  private inForceRev: AppliedCommit | undefined;

  get newest(): DesiredRevision | undefined {
    return this.newestRev;
  }

  get inForce(): AppliedCommit | undefined {
    return this.inForceRev;
  }

  /**
   * A commit loaded: it is the newest, and in force when valid as a whole. The newest commit
   * loaded again changes nothing (false); a new one does (true).
   */
  loaded(rev: DesiredRevision): boolean {
    if (rev.commit === this.newestRev?.commit) return false;
    this.newestRev = rev;
    if (rev.load.ok) this.inForceRev = { commit: rev.commit, desired: rev.load.desired, files: rev.load.files };
    return true;
  }

  /**
   * The commit in force before a restart (read back from the status branch), loaded again: in
   * force only while no commit is, so it never replaces one applied since. Whether it was taken.
   */
  restored(applied: AppliedCommit): boolean {
    if (this.inForceRev !== undefined) return false;
    this.inForceRev = applied;
    return true;
  }
}
