/**
 * Where `drydock run` and `drydock plan` get desired state from, and where status goes: a Git
 * remote (src/source's GitSource: a cache clone, commit trees read directly) or a local
 * directory.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { GitSource } from '../source/git-source.js';
import { resolveCredentials } from '../source/credentials.js';
import { loadFromSource } from '../spec/load.js';
import { directoryDesiredSource } from './directory-source.js';
import type { DesiredRevision, DesiredSource, StatusSink } from './service.js';

export interface SourceFlags {
  readonly repo: string;
  readonly branch: string;
  readonly path: string;
  readonly statusBranch?: string;
  readonly cacheDir?: string;
  readonly webhookSecret?: string;
}

export function isRemote(repo: string): boolean {
  return /^(https?|git|ssh):\/\//.test(repo);
}

/** Follows the branch of a Git remote; each new tip is loaded from its tree (no checkout). */
export function gitDesiredSource(flags: SourceFlags, logger: Logger): DesiredSource & { readonly git: GitSource } {
  const credentials = resolveCredentials({ url: flags.repo });
  const git = new GitSource({
    repo: flags.repo,
    branch: flags.branch,
    path: flags.path,
    ...(credentials ? { credentials } : {}),
    ...(flags.cacheDir ? { cacheRoot: flags.cacheDir } : {}),
    logger,
  });
  let last: DesiredRevision | undefined;
  return {
    git,
    async sync(): Promise<DesiredRevision> {
      const fetched = await git.fetch();
      if (last && last.commit === fetched.commit) return last;
      const load = await loadFromSource(git.readTree(fetched.commit));
      last = { commit: fetched.commit, load };
      return last;
    },
  };
}

export async function createDesiredSource(flags: SourceFlags, logger: Logger): Promise<DesiredSource> {
  if (isRemote(flags.repo)) return gitDesiredSource(flags, logger);
  return directoryDesiredSource(path.resolve(flags.repo, flags.path));
}

/** The status-branch writer for a Git remote; none for a directory (status is then only logged and served). */
export async function createStatusSink(flags: SourceFlags, _logger: Logger): Promise<StatusSink | undefined> {
  if (!isRemote(flags.repo)) return undefined;
  return undefined;
}
