/**
 * Where a repository lives: an http(s) remote (fetched into a bare cache clone, keyed by a
 * hash of the URL so restarts reuse it) or a local repository read in place (isomorphic-git
 * cannot fetch from a path, and reading the gitdir directly is what a path means anyway).
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { splitUrlCredentials, type GitCredentials } from './credentials.js';
import { GitSourceError } from './errors.js';
import { redactUrl } from './redact.js';

export type RepoLocation =
  | {
      readonly kind: 'remote';
      readonly url: string;
      readonly display: string;
      readonly urlCredentials?: GitCredentials;
    }
  | { readonly kind: 'local'; readonly gitdir: string; readonly display: string };

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The gitdir of a local repository (a work tree's .git, or a bare repository), or undefined. */
export function localGitdir(dir: string): string | undefined {
  const abs = path.resolve(dir);
  if (isDir(path.join(abs, '.git'))) return path.join(abs, '.git');
  if (existsSync(path.join(abs, 'HEAD')) && isDir(path.join(abs, 'objects')) && isDir(path.join(abs, 'refs')))
    return abs;
  return undefined;
}

export function parseLocation(repo: string): RepoLocation {
  if (/^https?:\/\//i.test(repo)) {
    const { url, credentials } = splitUrlCredentials(repo);
    return { kind: 'remote', url, display: redactUrl(url), ...(credentials ? { urlCredentials: credentials } : {}) };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/\\]+@[^:]+:/.test(repo)) {
    throw new GitSourceError(
      'invalid-repo',
      `unsupported repository address ${redactUrl(repo)}: drydock speaks Git over http(s); use an https:// URL or a local path`,
      {
        repo: redactUrl(repo),
      },
    );
  }
  const gitdir = localGitdir(repo);
  if (gitdir === undefined) {
    throw new GitSourceError(
      'invalid-repo',
      `${repo} is not a Git repository (no .git directory, not a bare repository); pass an http(s) URL or the path of a repository`,
      {
        repo,
      },
    );
  }
  return { kind: 'local', gitdir, display: path.resolve(repo) };
}

/** Default root of cache clones: $XDG_CACHE_HOME/drydock/git, else ~/.cache/drydock/git. */
export function defaultCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(base, 'drydock', 'git');
}

/** The cache clone's directory: one per URL (credentials stripped, so rotating them keeps it). */
export function cacheDirFor(url: string, root: string): string {
  const key = createHash('sha256').update(redactUrl(url)).digest('hex').slice(0, 24);
  return path.join(root, key);
}
