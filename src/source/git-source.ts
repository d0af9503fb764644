/**
 * The Git source: follows one branch of one repository. For an http(s) remote it keeps a bare
 * cache clone (init + fetch of the one branch, not clone: see http.ts for why) reused across
 * restarts; a local path is read in place. A fetch reports the new tip, whether it moved, and
 * whether history was rewritten (force-push: the previous tip is not an ancestor of the new).
 *
 * The cache's refs/heads/<branch> is drydock's own record of the last tip fetched completely:
 * it is written only once the pack is stored, and it is what isomorphic-git offers the server
 * as "have", which keeps a fetch incremental.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import git, { type HttpClient } from 'isomorphic-git';
import pRetry, { AbortError } from 'p-retry';
import { pino, type Logger } from 'pino';
import { authorOf, setBy, type Authorship } from './authorship.js';
import { cacheFs as fs } from './cache-fs.js';
import { repairLooseObjects } from './cache-repair.js';
import { classifyGitError, type ClassifyContext } from './classify.js';
import { basicAuthHeader, secretsOf, type GitCredentials } from './credentials.js';
import { errorCode, GitSourceError } from './errors.js';
import { createHttpClient } from './http.js';
import { cacheDirFor, defaultCacheRoot, parseLocation, type RepoLocation } from './location.js';
import { redactText } from './redact.js';
import { verifyCommitSignature, type Keyring, type SignatureVerdict } from './signatures.js';
import { createTreeReader, type TreeReader } from './tree-reader.js';

export interface GitSourceOptions {
  /** An http(s) URL or the path of a local repository. */
  readonly repo: string;
  /** The tracked branch (default main). */
  readonly branch?: string;
  /** Subdirectory holding the specs (default: the repository root). */
  readonly path?: string;
  /** Credentials from resolveCredentials(); credentials in the URL are used when absent. */
  readonly credentials?: GitCredentials;
  /** Root of cache clones (default $XDG_CACHE_HOME/drydock/git). */
  readonly cacheRoot?: string;
  readonly logger?: Logger;
  /** Extra attempts of a fetch that failed transiently (default 2). */
  readonly retries?: number;
  /** First retry delay in ms (default 250; doubles each time). */
  readonly retryDelayMs?: number;
  /** A request whose connection stays silent this long is given up as unreachable (default 30 s). */
  readonly idleTimeoutMs?: number;
}

export interface FetchResult {
  /** The branch's tip now. */
  readonly commit: string;
  /** The tip before this fetch, when one was known (from the cache or an earlier fetch). */
  readonly previous?: string;
  readonly changed: boolean;
  /** History was rewritten: the previous tip is not an ancestor of the new one. */
  readonly rewritten: boolean;
}

export class GitSource {
  readonly branch: string;
  readonly root: string;
  /** The repository as it may be shown: credentials stripped. */
  readonly display: string;
  readonly gitdir: string;
  /** isomorphic-git's object cache: packs are parsed once and reused across calls. */
  readonly cache: object = {};
  private readonly location: RepoLocation;
  private readonly credentials: GitCredentials | undefined;
  private readonly log: Logger;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly http: HttpClient;
  private lastTip: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private opening: Promise<void> | undefined;

  constructor(opts: GitSourceOptions) {
    this.location = parseLocation(opts.repo);
    this.branch = opts.branch ?? 'main';
    this.root = (opts.path ?? '')
      .split('/')
      .filter((s) => s !== '' && s !== '.')
      .join('/');
    this.display = this.location.display;
    this.credentials = opts.credentials ?? (this.location.kind === 'remote' ? this.location.urlCredentials : undefined);
    this.gitdir =
      this.location.kind === 'local'
        ? this.location.gitdir
        : cacheDirFor(this.location.url, opts.cacheRoot ?? defaultCacheRoot());
    this.log = (opts.logger ?? pino({ level: 'silent' })).child({ repo: this.display, branch: this.branch });
    this.retries = opts.retries ?? 2;
    this.retryDelayMs = opts.retryDelayMs ?? 250;
    this.http = createHttpClient(opts.idleTimeoutMs);
    if (this.branch === '' || /\s|\.\.|^-/.test(this.branch)) {
      throw new GitSourceError('invalid-option', `--branch ${JSON.stringify(this.branch)} is not a valid branch name`, {
        branch: this.branch,
      });
    }
  }

  get isRemote(): boolean {
    return this.location.kind === 'remote';
  }

  /** Secret values to scrub from any text that leaves the process. */
  get secrets(): string[] {
    return secretsOf(this.credentials);
  }

  /** Runs fetches one at a time: a webhook and the poller never fetch into the cache at once. */
  fetch(): Promise<FetchResult> {
    const run = this.queue.then(() => this.fetchNow());
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Opens the cache clone before objects are written into it: created on first use, repaired of
   * objects a killed drydock left damaged. A local repository is used as it is.
   */
  async open(): Promise<void> {
    if (this.location.kind === 'remote') await this.ensureCache(this.location.url);
  }

  /** One opening shared by every caller: a repair must not race a write into the cache. */
  private ensureCache(url: string): Promise<void> {
    this.opening ??= this.openCache(url).catch((err: unknown) => {
      this.opening = undefined;
      throw err;
    });
    return this.opening;
  }

  private async openCache(url: string): Promise<void> {
    await mkdir(this.gitdir, { recursive: true });
    // A drydock killed while writing an object may have left it empty or cut short.
    const repaired = await repairLooseObjects(this.gitdir);
    if (repaired.empty + repaired.corrupt + repaired.temporary > 0) {
      this.log.warn({ gitdir: this.gitdir, ...repaired }, 'damaged cache objects removed');
    }
    await git.init({ fs, gitdir: this.gitdir, bare: true, defaultBranch: this.branch });
    await git.setConfig({ fs, gitdir: this.gitdir, path: 'remote.origin.url', value: url });
    await git.setConfig({
      fs,
      gitdir: this.gitdir,
      path: 'remote.origin.fetch',
      value: '+refs/heads/*:refs/remotes/origin/*',
    });
  }

  private ctx(branch: string, operation: 'fetch' | 'push'): ClassifyContext {
    return { repo: this.display, branch, operation, authenticated: this.credentials !== undefined };
  }

  private authOptions(): {
    headers?: Record<string, string>;
    onAuth?: () => GitCredentials;
    onAuthFailure?: () => { cancel: true };
  } {
    const creds = this.credentials;
    return creds
      ? {
          headers: { Authorization: basicAuthHeader(creds) },
          onAuth: () => creds,
          onAuthFailure: () => ({ cancel: true }),
        }
      : {};
  }

  /**
   * Fetches `branch` into the cache (retrying transient failures) and returns its tip, without
   * moving drydock's own ref. A local repository is read in place. Throws GitSourceError.
   */
  async fetchBranch(branch: string): Promise<string> {
    if (this.location.kind === 'local') {
      const found = await this.resolveOwn(branch);
      if (found === undefined) {
        throw new GitSourceError(
          'branch-missing',
          `branch ${branch} does not exist in ${this.display}; create it or fix the branch name`,
          { repo: this.display, branch },
        );
      }
      return found;
    }
    const url = this.location.url;
    await this.ensureCache(url);
    const ctx = this.ctx(branch, 'fetch');
    const attempt = async (): Promise<string> => {
      try {
        const res = await git.fetch({
          fs,
          http: this.http,
          gitdir: this.gitdir,
          url,
          remote: 'origin',
          ref: branch,
          remoteRef: `refs/heads/${branch}`,
          singleBranch: true,
          tags: false,
          cache: this.cache,
          ...this.authOptions(),
        });
        if (!res.fetchHead)
          throw new GitSourceError(
            'branch-missing',
            `branch ${branch} does not exist in ${this.display} (the repository is empty); push it or fix the branch name`,
            { ...ctx },
          );
        return res.fetchHead;
      } catch (err) {
        const e = classifyGitError(err, ctx);
        throw e.retry === 'stalled' || e.code === 'branch-missing' ? new AbortError(e) : e;
      }
    };
    let tip: string;
    try {
      tip = await pRetry(attempt, {
        retries: this.retries,
        minTimeout: this.retryDelayMs,
        factor: 2,
        onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
          const code = error instanceof GitSourceError ? error.code : 'git';
          this.log.warn({ code, attempt: attemptNumber, retriesLeft, fetched: branch }, 'fetch failed');
        },
      });
    } catch (err) {
      throw classifyGitError(err, ctx);
    }
    // Proves the pack holding the tip was stored before anyone relies on it.
    await git.readCommit({ fs, gitdir: this.gitdir, oid: tip, cache: this.cache });
    return tip;
  }

  /**
   * The tip of `branch` to read (never to write): a remote's branch is fetched; in a local clone
   * the branch is usually only a remote-tracking ref (origin/<branch>, which `git clone` and
   * `git fetch` keep), and may be named that way too. Throws 'branch-missing' naming what exists.
   */
  async readBranchTip(branch: string): Promise<string> {
    if (this.location.kind === 'remote') return this.fetchBranch(branch);
    for (const ref of [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`, `refs/remotes/${branch}`]) {
      const tip = await this.resolveRef(ref);
      if (tip !== undefined) return tip;
    }
    const local = await git.listBranches({ fs, gitdir: this.gitdir });
    const tracking = (await git.listBranches({ fs, gitdir: this.gitdir, remote: 'origin' }))
      .filter((b) => b !== 'HEAD')
      .map((b) => `origin/${b}`);
    const existing = [...local, ...tracking].sort();
    throw new GitSourceError(
      'branch-missing',
      `${this.display} has no branch ${branch}, nor origin/${branch}: run \`git fetch origin\` in it if drydock has written the branch since the clone` +
        (existing.length > 0 ? ` (branches here: ${existing.join(', ')})` : ''),
      { repo: this.display, branch, existing: existing.join(', ') },
    );
  }

  private async resolveRef(ref: string): Promise<string | undefined> {
    try {
      return await git.resolveRef({ fs, gitdir: this.gitdir, ref });
    } catch (err) {
      if (errorCode(err) === 'NotFoundError') return undefined;
      throw err;
    }
  }

  /** drydock's own record of `branch` in the cache (or the branch itself, for a local repository). */
  resolveOwn(branch: string): Promise<string | undefined> {
    return this.resolveRef(`refs/heads/${branch}`);
  }

  /** Records `commit` as drydock's own tip of `branch` in the cache (never in a local repository). */
  async recordOwn(branch: string, commit: string): Promise<void> {
    if (this.location.kind === 'local') return;
    await git.writeRef({ fs, gitdir: this.gitdir, ref: `refs/heads/${branch}`, value: commit, force: true });
  }

  /**
   * Publishes `commit` as the new tip of `branch`, which must be `expected` now (undefined: the
   * branch must not exist). Never forced: a remote that moved meanwhile rejects the push, and a
   * GitSourceError 'push-rejected' with data.conflict true tells the caller to rebuild on the new tip.
   */
  async pushBranch(branch: string, commit: string, expected: string | undefined): Promise<void> {
    const ref = `refs/heads/${branch}`;
    if (this.location.kind === 'local') {
      const now = await this.resolveOwn(branch);
      if (now !== expected) {
        throw new GitSourceError('push-rejected', `${branch} moved in ${this.display} while drydock wrote it`, {
          repo: this.display,
          branch,
          conflict: true,
        });
      }
      await git.writeRef({ fs, gitdir: this.gitdir, ref, value: commit, force: true });
      return;
    }
    const ctx = this.ctx(branch, 'push');
    await this.recordOwn(branch, commit);
    let result;
    try {
      result = await git.push({
        fs,
        http: this.http,
        gitdir: this.gitdir,
        url: this.location.url,
        remote: 'origin',
        ref,
        remoteRef: ref,
        cache: this.cache,
        ...this.authOptions(),
      });
    } catch (err) {
      if (errorCode(err) === 'PushRejectedError') {
        throw new GitSourceError(
          'push-rejected',
          `push to ${branch} of ${this.display} rejected: the branch moved (another writer)`,
          { repo: this.display, branch, conflict: true },
        );
      }
      throw classifyGitError(err, ctx);
    }
    const status = result.refs[ref];
    if (!result.ok || (status && !status.ok)) {
      const reason = status?.error ?? result.error ?? 'rejected';
      // The server's own fast-forward check (the remote moved after we looked) reads as a conflict too.
      const conflict = /non-fast-forward|fetch first|stale info|failed to lock/i.test(reason);
      throw new GitSourceError('push-rejected', `push to ${branch} of ${this.display} rejected by the server`, {
        repo: this.display,
        branch,
        conflict,
        reason: this.redact(reason),
      });
    }
  }

  private async fetchNow(): Promise<FetchResult> {
    const started = Date.now();
    let tip: string;
    let previous: string | undefined;
    if (this.location.kind === 'remote') {
      previous = (await this.resolveOwn(this.branch)) ?? this.lastTip;
      tip = await this.fetchBranch(this.branch);
      // The pack is stored; only now does the tip become drydock's own ref (the fetch's "have").
      await this.recordOwn(this.branch, tip);
    } else {
      previous = this.lastTip;
      tip = await this.fetchBranch(this.branch);
    }
    const changed = previous !== tip;
    const rewritten = previous !== undefined && changed && !(await this.isAncestor(previous, tip));
    this.lastTip = tip;
    const fields = { commit: tip, previous, ms: Date.now() - started };
    if (rewritten) this.log.warn(fields, 'branch history rewritten; following the new tip');
    else if (changed) this.log.info(fields, 'new commit fetched');
    else this.log.debug(fields, 'no new commit');
    return { commit: tip, ...(previous !== undefined ? { previous } : {}), changed, rewritten };
  }

  private async isAncestor(ancestor: string, oid: string): Promise<boolean> {
    try {
      return await git.isDescendent({ fs, gitdir: this.gitdir, oid, ancestor, depth: -1, cache: this.cache });
    } catch (err) {
      // The old tip's objects are gone (a pruned cache): its ancestry cannot be shown.
      if (errorCode(err) === 'NotFoundError') return false;
      throw err;
    }
  }

  /** The specs' tree of `commit` (rooted at --path), for the loader. */
  readTree(commit: string): TreeReader {
    return createTreeReader({ gitdir: this.gitdir, commit, root: this.root, cache: this.cache });
  }

  /** Who gave `file` (relative to --path) its content as of `commit`. */
  authorOf(file: string, commit: string, maxCommits?: number): Promise<Authorship | undefined> {
    const repoPath = this.root ? path.posix.join(this.root, file) : file;
    return authorOf(
      { gitdir: this.gitdir, cache: this.cache, ...(maxCommits !== undefined ? { maxCommits } : {}) },
      repoPath,
      commit,
    );
  }

  /** Who set what `holds` reads in `file` (relative to --path), held since, as of `commit` (authorship.ts setBy). */
  setBy(file: string, commit: string, holds: (text: string) => boolean): Promise<Authorship | undefined> {
    const repoPath = this.root ? path.posix.join(this.root, file) : file;
    return setBy({ gitdir: this.gitdir, cache: this.cache }, repoPath, commit, holds);
  }

  verifyCommit(commit: string, keys: Keyring): Promise<SignatureVerdict> {
    return verifyCommitSignature({ gitdir: this.gitdir, cache: this.cache, commit, keys });
  }

  /** Any text about this source, made safe to log or show. */
  redact(text: string): string {
    return redactText(text, this.secrets);
  }
}
