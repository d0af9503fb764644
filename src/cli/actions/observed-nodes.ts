/**
 * The nodes drydock saw done, from the status branch of the repository `drydock plan` reads:
 * the forecast's per-node times. A repository without the branch yet (drydock has not run
 * against it), or one that cannot be read, gives none, and the forecast says it used defaults.
 */
import type { Logger } from 'pino';
import type { NodeTiming } from '../../plan/pace.js';
import { gitSource, type SourceFlags } from '../../service/sources.js';
import type { GitSource } from '../../source/git-source.js';
import { isGitSourceError } from '../../source/index.js';
import { observedNodeTimings } from '../../source/status-history.js';

export async function observedNodes(
  from: GitSource | SourceFlags,
  statusBranch: string,
  logger: Logger,
): Promise<NodeTiming[]> {
  try {
    const source = 'gitdir' in from ? from : gitSource(from, logger);
    return await observedNodeTimings(source, statusBranch);
  } catch (err) {
    if (!isGitSourceError(err)) throw err;
    logger.debug({ err: err.message, statusBranch }, 'status branch not read; the forecast uses default times');
    return [];
  }
}
