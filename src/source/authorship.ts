/**
 * Who put a file into the tracked branch in its current form: the approver of an Approval is
 * the author of that commit (DESIGN.md, Approval). Walks the branch's first-parent line back
 * from the commit while the file is unchanged; the oldest such commit introduced this content
 * (for a pull request merged with a merge commit, that is the merge: whoever merged approved).
 * An edited approval names whoever edited it last. Bounded: past `maxCommits` it gives up.
 */
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import { errorCode } from './errors.js';

export interface Authorship {
  readonly commit: string;
  readonly name: string;
  readonly email: string;
  /** ISO 8601 author date. */
  readonly at: string;
}

export interface AuthorshipOptions {
  readonly gitdir: string;
  readonly cache?: object;
  /** Commits walked at most (default 1000). */
  readonly maxCommits?: number;
}

async function blobAt(opts: AuthorshipOptions, commit: string, filepath: string): Promise<string | undefined> {
  const dir = path.posix.dirname(filepath);
  const name = path.posix.basename(filepath);
  try {
    const { tree } = await git.readTree({
      fs,
      gitdir: opts.gitdir,
      oid: commit,
      ...(dir !== '.' ? { filepath: dir } : {}),
      cache: opts.cache ?? {},
    });
    return tree.find((e) => e.path === name && e.type === 'blob')?.oid;
  } catch (err) {
    const code = errorCode(err);
    if (code === 'NotFoundError' || code === 'ObjectTypeError') return undefined;
    throw err;
  }
}

/** The commit that gave `filepath` (repo-relative) its content as of `commit`; undefined when absent or past the bound. */
export async function authorOf(
  opts: AuthorshipOptions,
  filepath: string,
  commit: string,
): Promise<Authorship | undefined> {
  const max = opts.maxCommits ?? 1000;
  const blob = await blobAt(opts, commit, filepath);
  if (blob === undefined) return undefined;
  let current = commit;
  for (let i = 0; i < max; i += 1) {
    const { commit: c } = await git.readCommit({ fs, gitdir: opts.gitdir, oid: current, cache: opts.cache ?? {} });
    const parent = c.parent[0];
    let same = false;
    if (parent !== undefined) {
      try {
        same = (await blobAt(opts, parent, filepath)) === blob;
      } catch (err) {
        // A shallow or pruned history ends the walk: this commit is the oldest we can see.
        if (errorCode(err) !== 'NotFoundError') throw err;
      }
    }
    if (!same) {
      return {
        commit: current,
        name: c.author.name,
        email: c.author.email,
        at: new Date(c.author.timestamp * 1000).toISOString(),
      };
    }
    current = parent ?? current;
  }
  return undefined;
}

async function textAt(opts: AuthorshipOptions, oid: string): Promise<string> {
  const { blob } = await git.readBlob({ fs, gitdir: opts.gitdir, oid, cache: opts.cache ?? {} });
  return Buffer.from(blob).toString('utf8');
}

/**
 * The commit that set what `holds` reads in `filepath` (a pause: spec.paused, drydock.yaml's
 * paused) and has held since, as of `commit`: walks the first-parent line back while the file
 * still says so; the oldest such commit set it, and its author paused. Unchanged content is
 * not parsed again. Undefined when it does not hold at `commit` or the walk passes its bound.
 */
export async function setBy(
  opts: AuthorshipOptions,
  filepath: string,
  commit: string,
  holds: (text: string) => boolean,
): Promise<Authorship | undefined> {
  const max = opts.maxCommits ?? 1000;
  let blob = await blobAt(opts, commit, filepath);
  if (blob === undefined || !holds(await textAt(opts, blob))) return undefined;
  let current = commit;
  for (let i = 0; i < max; i += 1) {
    const { commit: c } = await git.readCommit({ fs, gitdir: opts.gitdir, oid: current, cache: opts.cache ?? {} });
    const parent = c.parent[0];
    let before: string | undefined;
    if (parent !== undefined) {
      try {
        before = await blobAt(opts, parent, filepath);
      } catch (err) {
        // A shallow or pruned history ends the walk: this commit is the oldest we can see.
        if (errorCode(err) !== 'NotFoundError') throw err;
      }
    }
    const still = before !== undefined && (before === blob || holds(await textAt(opts, before)));
    if (!still || parent === undefined) {
      return {
        commit: current,
        name: c.author.name,
        email: c.author.email,
        at: new Date(c.author.timestamp * 1000).toISOString(),
      };
    }
    blob = before;
    current = parent;
  }
  return undefined;
}
