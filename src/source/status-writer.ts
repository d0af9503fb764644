/**
 * Writes the status report as a commit on the status branch (default drydock/status, one per
 * cluster) and pushes it: built with isomorphic-git's object API (blobs, trees, a commit), no
 * working tree. A commit only when the tree changed. The branch starts as an orphan. A push
 * rejected because another writer moved the branch is fetched, re-applied on the new tip
 * and retried with backoff; nothing is ever forced, and no other branch is written.
 */
import git from 'isomorphic-git';
import pRetry, { AbortError } from 'p-retry';
import { pino, type Logger } from 'pino';
import { renderStatusDocs, summarizeChange } from '../report/status-docs.js';
import { readSpecStatuses, type SpecStatusDoc } from '../report/status-read.js';
import type { SpecStatus } from '../plan/types.js';
import type { StatusReport } from '../report/types.js';
import { GitSourceError, isGitSourceError } from './errors.js';
import type { GitSource } from './git-source.js';
import { CLUSTER_TRAILER, DEFAULT_STATUS_BRANCH, parseTrailers, SOURCE_TRAILER, statusMessage } from './trailers.js';
import { readFilesTree, TreeWriter } from './tree-writer.js';
import { cacheFs as fs } from './cache-fs.js';

export { DEFAULT_STATUS_BRANCH };

export interface StatusWriterOptions {
  /** The source whose repository (and cache clone and credentials) the status branch lives in. */
  readonly source: GitSource;
  readonly branch?: string;
  readonly cluster: string;
  readonly author?: { readonly name: string; readonly email: string };
  readonly logger?: Logger;
  /** Attempts after a rejected push (default 5). */
  readonly retries?: number;
  readonly retryDelayMs?: number;
  readonly now?: () => Date;
  /**
   * In a fleet: a report unchanged for this long is committed again all the same, so the
   * clusters after this one can tell a quiet cluster from one whose drydock stopped (plan/fleet.ts).
   */
  readonly heartbeatMs?: () => number | undefined;
}

export interface WriteResult {
  /** The status branch's tip after the write. */
  readonly commit?: string;
  readonly changed: boolean;
  readonly timings: WriteTimings;
}

/** Where a write's time went, in milliseconds of wall time (also logged with "status written"). */
export interface WriteTimings {
  /** The report laid out as files; each spec's rows compared with its last render. */
  readonly renderMs: number;
  /** New blobs and trees written into the object database. */
  readonly treeMs: number;
  /** The message, the parent commit looked up and read, the commit object; for every attempt. */
  readonly commitMs: number;
  /** Pack and push to the remote (two HTTP requests each attempt); 0 when nothing changed. */
  readonly pushMs: number;
}

/** The status branch's tip as drydock reads it back after a restart. */
export interface AppliedRecord {
  readonly commit: string;
  /** Drydock-Source: the source commit that was in force. */
  readonly sourceCommit?: string;
  readonly cluster?: string;
}

export class StatusWriter {
  readonly branch: string;
  private readonly source: GitSource;
  private readonly cluster: string;
  private readonly author: { name: string; email: string };
  private readonly log: Logger;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly now: () => Date;
  private readonly heartbeatMs: () => number | undefined;
  private synced = false;
  /** The report the branch holds now, as this process wrote it: the next message says what changed since. */
  private lastWritten: StatusReport | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly trees: TreeWriter;

  constructor(opts: StatusWriterOptions) {
    this.source = opts.source;
    this.branch = opts.branch ?? DEFAULT_STATUS_BRANCH;
    this.cluster = opts.cluster;
    this.author = { name: opts.author?.name ?? 'drydock', email: opts.author?.email ?? 'drydock@localhost' };
    this.log = (opts.logger ?? pino({ level: 'silent' })).child({ statusBranch: this.branch });
    this.retries = opts.retries ?? 5;
    this.retryDelayMs = opts.retryDelayMs ?? 100;
    this.heartbeatMs = opts.heartbeatMs ?? (() => undefined);
    this.now = opts.now ?? (() => new Date());
    this.trees = new TreeWriter(opts.source.gitdir);
    if (this.branch === opts.source.branch) {
      throw new GitSourceError(
        'invalid-option',
        `the status branch ${this.branch} is the tracked branch; drydock never writes a user branch: pick another --status-branch`,
        { branch: this.branch },
      );
    }
  }

  /** The remote's tip of the status branch, fetched; undefined when it does not exist yet. */
  private async fetchTip(): Promise<string | undefined> {
    try {
      const tip = await this.source.fetchBranch(this.branch);
      await this.source.recordOwn(this.branch, tip);
      this.synced = true;
      return tip;
    } catch (err) {
      if (isGitSourceError(err, 'branch-missing')) {
        this.synced = true;
        return undefined;
      }
      throw err;
    }
  }

  /** Writes the report; one write at a time. */
  write(report: StatusReport): Promise<WriteResult> {
    const run = this.queue.then(() => this.writeNow(report));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async writeNow(report: StatusReport): Promise<WriteResult> {
    const gitdir = this.source.gitdir;
    // Before any object is written: an object a killed drydock left damaged would be trusted.
    await this.source.open();
    const clock = lap();
    const docs = renderStatusDocs(report);
    const renderMs = clock();
    const tree = await this.trees.write(docs);
    const treeMs = clock();
    const message = statusMessage(summarizeChange(report, this.lastWritten), this.cluster, report.sourceCommit);
    let commitMs = 0;
    let pushMs = 0;
    const timings = (): WriteTimings => ({ renderMs, treeMs, commitMs, pushMs });
    let parent = this.synced ? await this.source.resolveOwn(this.branch) : await this.fetchTip();
    commitMs += clock();
    const result = await pRetry(
      async (): Promise<Omit<WriteResult, 'timings'>> => {
        clock(); // not the backoff before a retry
        if (parent !== undefined) {
          const { commit: head } = await git.readCommit({ fs, gitdir, oid: parent, cache: this.source.cache });
          const owner = parseTrailers(head.message).get(CLUSTER_TRAILER);
          if (owner !== undefined && owner !== this.cluster) {
            // Two clusters on one branch would overwrite each other's report on every write.
            throw new AbortError(
              new GitSourceError(
                'invalid-option',
                `the status branch ${this.branch} holds the status of cluster ${owner}, not ${this.cluster}; give each cluster its own --status-branch (e.g. drydock/status-${this.cluster})`,
                {
                  branch: this.branch,
                  owner,
                  cluster: this.cluster,
                },
              ),
            );
          }
          const quietMs = this.now().getTime() - head.committer.timestamp * 1000;
          const beat = this.heartbeatMs();
          if (head.tree === tree && (beat === undefined || quietMs < beat)) {
            commitMs += clock();
            return { commit: parent, changed: false };
          }
        }
        const when = { ...this.author, timestamp: Math.floor(this.now().getTime() / 1000), timezoneOffset: 0 };
        const commit = await git.writeCommit({
          fs,
          gitdir,
          commit: { tree, parent: parent === undefined ? [] : [parent], author: when, committer: when, message },
        });
        commitMs += clock();
        try {
          await this.source.pushBranch(this.branch, commit, parent);
          pushMs += clock();
          this.synced = true;
        } catch (err) {
          pushMs += clock();
          // The local ref already names the commit (a push sends the local ref) though the remote
          // does not have it: read the remote's tip again before the next write, or a report
          // identical to this one would look written and never be pushed.
          this.synced = false;
          if (isGitSourceError(err, 'push-rejected') && err.data.conflict === true) {
            this.log.info({ attempted: commit }, 'status branch moved; re-applying on the new tip');
            parent = await this.fetchTip();
            throw err;
          }
          throw isGitSourceError(err) && err.retry === 'stalled' ? new AbortError(err) : err;
        }
        this.log.info({ commit, sourceCommit: report.sourceCommit, ...timings() }, 'status written');
        return { commit, changed: true };
      },
      { retries: this.retries, minTimeout: this.retryDelayMs, factor: 2, randomize: true },
    );
    this.lastWritten = report;
    return { ...result, timings: timings() };
  }

  /**
   * The spec statuses the status branch's tip holds, fetched (none when the branch does not
   * exist); a file that does not read back as a status is left out and logged.
   */
  async readSpecs(): Promise<SpecStatus[]> {
    const tip = await this.fetchTip();
    if (tip === undefined) return [];
    const out: SpecStatus[] = [];
    for (const [file, read] of readSpecStatuses(await readStatusFiles(this.source, tip))) {
      // The file's source commit is the report's, not a field of the spec's status.
      if (read.ok) out.push(withoutSourceCommit(read.status));
      else this.log.warn({ commit: tip, file, why: read.why }, 'status file not read back');
    }
    return out;
  }

  /** The status branch's tip and its trailers, fetched; undefined when the branch does not exist. */
  async readApplied(): Promise<AppliedRecord | undefined> {
    const tip = await this.fetchTip();
    return tip === undefined ? undefined : readRecord(this.source, tip);
  }
}

function withoutSourceCommit(doc: SpecStatusDoc): SpecStatus {
  const status: SpecStatus & { sourceCommit?: string } = { ...doc };
  delete status.sourceCommit;
  return status;
}

/** A stopwatch: each call returns the milliseconds since the previous call (or its creation). */
function lap(): () => number {
  let at = performance.now();
  return () => {
    const t = performance.now();
    const ms = t - at;
    at = t;
    return ms;
  };
}

export async function readRecord(source: GitSource, commit: string): Promise<AppliedRecord> {
  const { commit: c } = await git.readCommit({ fs, gitdir: source.gitdir, oid: commit, cache: source.cache });
  const trailers = parseTrailers(c.message);
  const sourceCommit = trailers.get(SOURCE_TRAILER);
  const cluster = trailers.get(CLUSTER_TRAILER);
  return { commit, ...(sourceCommit ? { sourceCommit } : {}), ...(cluster ? { cluster } : {}) };
}

/** The status branch's files at `commit`. */
export function readStatusFiles(source: GitSource, commit: string): Promise<Map<string, string>> {
  return readFilesTree(source.gitdir, commit, source.cache);
}
