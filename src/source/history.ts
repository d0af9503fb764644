/**
 * Whether a directory existed in an earlier commit: Git keeps no empty folders, so a path
 * drydock.yaml lists vanishes from the tree when a commit deletes its last file (the last
 * approval once it is done). Such a path is read as empty with a warning; a path found in no
 * earlier commit stays an error, as it is likely a typo. Walks the first-parent line, bounded.
 */
import fs from 'node:fs';
import git from 'isomorphic-git';
import { errorCode } from './errors.js';

export interface HistoryOptions {
  readonly gitdir: string;
  readonly cache?: object;
  /** Commits walked at most (default 1000). */
  readonly maxCommits?: number;
}

async function hasDir(opts: HistoryOptions, commit: string, dir: string): Promise<boolean> {
  try {
    await git.readTree({
      fs,
      gitdir: opts.gitdir,
      oid: commit,
      ...(dir !== '' ? { filepath: dir } : {}),
      cache: opts.cache ?? {},
    });
    return true;
  } catch (err) {
    const code = errorCode(err);
    if (code === 'NotFoundError' || code === 'ObjectTypeError') return false;
    throw err;
  }
}

/**
 * Whether `dir` (repo-relative) is a directory in `from` or one of its first-parent ancestors,
 * `from` itself included when `self` says so. A history cut short (a shallow clone, a pruned
 * object) answers false: the path is then treated as never seen, the safe side.
 */
export async function dirInHistory(opts: HistoryOptions, dir: string, from: string, self: boolean): Promise<boolean> {
  const max = opts.maxCommits ?? 1000;
  let current: string | undefined = from;
  for (let i = 0; i < max && current !== undefined; i += 1) {
    try {
      if ((self || i > 0) && (await hasDir(opts, current, dir))) return true;
      const { commit } = await git.readCommit({ fs, gitdir: opts.gitdir, oid: current, cache: opts.cache ?? {} });
      current = commit.parent[0];
    } catch (err) {
      if (errorCode(err) === 'NotFoundError') return false;
      throw err;
    }
  }
  return false;
}
