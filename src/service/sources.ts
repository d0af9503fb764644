/**
 * Where `drydock run` and `drydock plan` get desired state from, and where status goes: a Git
 * remote (through src/source) or a local directory.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { directoryDesiredSource } from './directory-source.js';
import type { DesiredSource, StatusSink } from './service.js';
import { OptionError } from './options.js';

export interface SourceFlags {
  readonly repo: string;
  readonly branch: string;
  readonly path: string;
  readonly statusBranch?: string;
  readonly webhookSecret?: string;
  readonly gitUsername?: string;
  readonly gitPassword?: string;
  readonly gitToken?: string;
}

export function isRemote(repo: string): boolean {
  return /^(https?|git|ssh):\/\//.test(repo);
}

export async function createDesiredSource(flags: SourceFlags, _logger: Logger): Promise<DesiredSource> {
  if (isRemote(flags.repo)) {
    throw new OptionError(`--repo ${flags.repo}: Git remotes need the Git source, which this build lacks; pass a local directory`, { flag: '--repo', value: flags.repo });
  }
  return directoryDesiredSource(path.resolve(flags.repo, flags.path));
}

/** The status-branch writer for a Git remote; none for a directory (status is then only logged and served). */
export async function createStatusSink(flags: SourceFlags, _logger: Logger): Promise<StatusSink | undefined> {
  if (!isRemote(flags.repo)) return undefined;
  return undefined;
}
