/** What `drydock status` does once its flags are parsed (loaded only when it runs). */
import { parse } from 'yaml';
import { EXIT_ERROR, EXIT_OK, type ExitCode } from '../exit.js';
import { GitSource, isGitSourceError, readRecord, readStatusFiles, resolveCredentials } from '../../source/index.js';
import type { StatusCommandOptions } from '../status.js';

export async function runStatus(opts: StatusCommandOptions, out: (s: string) => void, err: (s: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  try {
    const credentials = resolveCredentials({ env, url: opts.repo, ...(opts.gitTokenFile ? { tokenFile: opts.gitTokenFile } : {}) });
    // The tracked branch plays no part here; the status branch is named explicitly.
    const source = new GitSource({ repo: opts.repo, ...(credentials ? { credentials } : {}), ...(opts.cacheDir ? { cacheRoot: opts.cacheDir } : {}), retries: 1 });
    let tip: string;
    try {
      tip = await source.readBranchTip(opts.statusBranch);
    } catch (e) {
      if (isGitSourceError(e, 'branch-missing') && source.isRemote) {
        err(
          `drydock status: ${source.display} has no branch ${opts.statusBranch} yet: drydock writes it once it has run against this repository; ` +
            `if its drydock.yaml names another statusBranch (or drydock runs with --status-branch), pass that name as --status-branch\n`,
        );
        return EXIT_ERROR;
      }
      throw e;
    }
    const files = await readStatusFiles(source, tip);
    if (opts.format === 'json') {
      const record = await readRecord(source, tip);
      const specs: unknown[] = [];
      for (const [p, text] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (p.startsWith('status/') && p.endsWith('.yaml')) specs.push(parse(text));
      }
      const errorsText = files.get('errors.yaml');
      out(`${JSON.stringify({ statusCommit: tip, cluster: record.cluster ?? null, sourceCommit: record.sourceCommit ?? null, specs, errors: errorsText ? parse(errorsText) : null }, null, 2)}\n`);
      return EXIT_OK;
    }
    out(files.get('README.md') ?? `(the status branch ${opts.statusBranch} has no README.md)\n`);
    return EXIT_OK;
  } catch (e) {
    if (isGitSourceError(e)) {
      err(`drydock status: ${e.message}\n`);
      return EXIT_ERROR;
    }
    throw e;
  }
}
