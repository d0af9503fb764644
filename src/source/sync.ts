/**
 * A commit is applied whole or not at all (DESIGN.md principle 3). Sync fetches the tracked
 * branch, loads the new tip through the injected loader, and records it in `commits` (in-force.ts),
 * which puts it in force only when the whole commit is valid (and, with --verify-commits, signed
 * by a known key). A refused commit changes nothing and its errors are returned for errors.yaml;
 * a failed fetch keeps the last valid commit in force and is returned typed.
 *
 * Nothing here must survive a restart: the status branch's Drydock-Source trailer names the
 * commit that was in force, and `restore` loads it again when the newest tip is refused.
 */
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { SpecSourceError } from '../spec/errors.js';
import { loadFromSource } from '../spec/load.js';
import type { Approval, DesiredState, LoadResult, SpecError } from '../spec/model.js';
import { CommitsInForce } from './in-force.js';
import { withPausers } from './pauses.js';
import type { Authorship } from './authorship.js';
import { GitSourceError } from './errors.js';
import type { FetchResult, GitSource } from './git-source.js';
import type { Keyring, SignatureVerdict } from './signatures.js';
import type { TreeReader } from './tree-reader.js';
import { shortCommit } from '../commit.js';

/** Loads a commit's tree; the real one is the spec loader's loadFromSource. */
export type Loader = (source: TreeReader) => Promise<LoadResult>;

export interface SyncOptions {
  readonly source: GitSource;
  /** Defaults to the spec loader's loadFromSource. */
  readonly load?: Loader;
  /** --verify-commits: only commits signed by one of these keys are applied. */
  readonly keys?: Keyring;
  /** The commit last in force, read back from the status branch (Drydock-Source) at startup. */
  readonly restore?: () => Promise<string | undefined>;
  readonly logger?: Logger;
}

export type SyncOutcome =
  | { readonly kind: 'applied'; readonly commit: string; readonly fetch: FetchResult; readonly desired: DesiredState }
  | { readonly kind: 'unchanged'; readonly commit: string; readonly fetch: FetchResult }
  /** The commit's specs are invalid: nothing changes; errors go to errors.yaml. */
  | {
      readonly kind: 'refused';
      readonly commit: string;
      readonly fetch: FetchResult;
      readonly errors: readonly SpecError[];
    }
  /** --verify-commits: unsigned or signed by an unknown key. */
  | {
      readonly kind: 'unverified';
      readonly commit: string;
      readonly fetch: FetchResult;
      readonly verdict: Exclude<SignatureVerdict, { ok: true }>;
    }
  | { readonly kind: 'fetch-failed'; readonly error: GitSourceError };

/** Loader errors name files relative to --path; the status branch shows repository paths. */
function repoRelative(errors: readonly SpecError[], root: string): SpecError[] {
  return errors.map((e) => (root && e.file ? { ...e, file: path.posix.join(root, e.file) } : e));
}

export class Sync {
  private readonly source: GitSource;
  private readonly load: Loader;
  private readonly keys: Keyring | undefined;
  private readonly restoreFrom: (() => Promise<string | undefined>) | undefined;
  private readonly log: Logger;
  /** The newest commit loaded and the one in force: the record the service reads too. */
  readonly commits = new CommitsInForce();
  private restored = false;

  constructor(opts: SyncOptions) {
    this.source = opts.source;
    this.load = opts.load ?? ((s) => loadFromSource(s));
    this.keys = opts.keys;
    this.restoreFrom = opts.restore;
    this.log = (opts.logger ?? pino({ level: 'silent' })).child({ repo: opts.source.display });
  }

  private async loadCommit(commit: string): Promise<LoadResult> {
    let result: LoadResult;
    try {
      result = await this.load(this.source.readTree(commit));
    } catch (err) {
      // The tree itself cannot be read (--path missing, or a file and not a directory).
      if (!(err instanceof SpecSourceError)) throw err;
      const where = this.source.root || '.';
      return {
        ok: false,
        files: [],
        errors: [
          {
            file: where,
            line: 1,
            column: 1,
            code: 'path-missing',
            message: `${where} cannot be read in commit ${shortCommit(commit)}: ${err.message}`,
            hint: 'fix --path, or add the directory holding drydock.yaml and the specs',
          },
        ],
      };
    }
    if (!result.ok) return { ...result, errors: repoRelative(result.errors, this.source.root) };
    const approved = await this.withApprovers(result.desired, commit);
    return { ...result, desired: await this.withPausers(approved, commit) };
  }

  /**
   * Each Approval's approver: the author of the commit that gave its file its content on the
   * tracked branch (only that branch is read, so only merged approvals count). An approval
   * whose history cannot be read keeps no approver and is logged.
   */
  private async withApprovers(desired: DesiredState, commit: string): Promise<DesiredState> {
    if (!desired.approvals || desired.approvals.length === 0) return desired;
    const approvals: Approval[] = [];
    for (const a of desired.approvals) {
      let by: Authorship | undefined;
      try {
        by = await this.source.authorOf(a.source.file, commit);
      } catch (err) {
        this.log.warn(
          { commit, file: a.source.file, code: err instanceof GitSourceError ? err.code : 'history' },
          'cannot tell who approved; the approval is kept without an approver',
        );
      }
      approvals.push(by ? { ...a, approvedBy: { name: by.name, email: by.email, commit: by.commit, at: by.at } } : a);
    }
    return { ...desired, approvals };
  }

  /** Each pause's author: who set it in the commit that paused (pauses.ts). */
  private withPausers(desired: DesiredState, commit: string): Promise<DesiredState> {
    return withPausers(
      desired,
      (file, holds) => this.source.setBy(file, commit, holds),
      (file, err) =>
        this.log.warn(
          { commit, file, code: err instanceof GitSourceError ? err.code : 'history' },
          'cannot tell who paused; the pause holds without a name',
        ),
    );
  }

  /** Loads the commit named by the status branch once, when nothing is in force yet. */
  private async restore(): Promise<void> {
    if (this.restored || this.commits.inForce || !this.restoreFrom) return;
    this.restored = true;
    let commit: string | undefined;
    try {
      commit = await this.restoreFrom();
      if (commit === undefined) return;
      if (this.keys && !(await this.source.verifyCommit(commit, this.keys)).ok) return;
      const result = await this.loadCommit(commit);
      if (result.ok && this.commits.restored({ commit, desired: result.desired, files: result.files }))
        this.log.info({ commit }, 'restored the commit in force from the status branch');
    } catch (err) {
      this.log.warn(
        { commit, code: err instanceof GitSourceError ? err.code : 'load' },
        'could not restore the commit in force from the status branch',
      );
    }
  }

  /** Fetches and applies the tip if it is new and valid. Never throws for a bad commit or remote. */
  async run(): Promise<SyncOutcome> {
    let fetch: FetchResult;
    try {
      fetch = await this.source.fetch();
    } catch (err) {
      const error =
        err instanceof GitSourceError
          ? err
          : new GitSourceError('git', `fetch ${this.source.display} failed`, { repo: this.source.display });
      this.log.warn(
        { code: error.code, inForce: this.commits.inForce?.commit },
        'fetch failed; the last valid commit stays in force',
      );
      return { kind: 'fetch-failed', error };
    }
    const commit = fetch.commit;
    if (commit === this.commits.inForce?.commit || commit === this.commits.newest?.commit)
      return { kind: 'unchanged', commit, fetch };
    if (fetch.rewritten)
      this.log.warn({ commit, previous: fetch.previous }, 'history rewritten; following the new tip');
    if (this.keys) {
      const verdict = await this.source.verifyCommit(commit, this.keys);
      if (!verdict.ok) {
        await this.restore();
        this.commits.loaded({
          commit,
          load: {
            ok: false,
            files: [],
            errors: [
              {
                file: '',
                line: 1,
                column: 1,
                code: `signature-${verdict.reason}`,
                message: verdict.message,
                hint: 'sign the commit with a key of the --verify-commits keyring',
              },
            ],
          },
        });
        this.log.warn({ commit, reason: verdict.reason }, 'commit not applied: signature not verified');
        return { kind: 'unverified', commit, fetch, verdict };
      }
    }
    const result = await this.loadCommit(commit);
    this.commits.loaded({ commit, load: result });
    if (!result.ok) {
      await this.restore();
      this.log.warn(
        { commit, errors: result.errors.length, inForce: this.commits.inForce?.commit },
        'commit refused; the last valid commit stays in force',
      );
      return { kind: 'refused', commit, fetch, errors: result.errors };
    }
    this.log.info({ commit, files: result.files.length }, 'commit applied');
    return { kind: 'applied', commit, fetch, desired: result.desired };
  }
}
