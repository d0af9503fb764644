/** What `drydock status` does once its flags are parsed (loaded only when it runs). */
import fs from 'node:fs';
import git from 'isomorphic-git';
import { parse } from 'yaml';
import { parseDuration } from '../../duration.js';
import { readSpecDocs } from '../../report/status-nodes.js';
import { EXIT_ERROR, EXIT_OK, type ExitCode } from '../exit.js';
import { GitSource, isGitSourceError, readRecord, readStatusFiles, resolveCredentials } from '../../source/index.js';
import type { StatusCommandOptions } from '../flags.js';
import { DEFAULT_STATUS_BRANCH } from '../../source/trailers.js';
import { clusterStatusBranch } from '../../spec/cluster-view.js';

/** The commits after `since` up to `tip`, oldest first, as "time short subject" lines. */
async function newCommits(source: GitSource, tip: string, since: string): Promise<string[]> {
  const lines: string[] = [];
  for (const entry of await git.log({ fs, gitdir: source.gitdir, ref: tip, depth: 200, cache: source.cache })) {
    if (entry.oid === since) break;
    const c = entry.commit;
    lines.push(
      `${new Date(c.committer.timestamp * 1000).toISOString()} ${entry.oid.slice(0, 7)} ${c.message.split('\n')[0] ?? ''}`,
    );
  }
  return lines.reverse();
}

/** Polls the status branch until `signal` aborts, printing each new commit as it lands. */
export async function watchStatus(
  source: GitSource,
  branch: string,
  from: string,
  intervalMs: number,
  out: (s: string) => void,
  signal: AbortSignal,
): Promise<void> {
  let seen = from;
  while (!signal.aborted) {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, intervalMs);
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
    if (signal.aborted) return;
    const tip = await source.readBranchTip(branch);
    if (tip === seen) continue;
    for (const line of await newCommits(source, tip, seen)) out(`${line}\n`);
    seen = tip;
  }
}

export async function runStatus(
  opts: StatusCommandOptions,
  out: (s: string) => void,
  err: (s: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  signal?: AbortSignal,
): Promise<ExitCode> {
  try {
    const intervalMs = parseDuration(opts.interval ?? '5s', { unitRequired: true });
    if (intervalMs === undefined || intervalMs < 100) {
      err(
        `drydock status: --interval ${JSON.stringify(opts.interval)} is not a duration of at least 100ms; write e.g. 5s or 1m\n`,
      );
      return EXIT_ERROR;
    }
    const credentials = resolveCredentials({
      env,
      url: opts.repo,
      ...(opts.gitTokenFile ? { tokenFile: opts.gitTokenFile } : {}),
    });
    // The tracked branch plays a part only for --fleet, whose fleet file is read from it.
    const source = new GitSource({
      repo: opts.repo,
      ...(opts.branch ? { branch: opts.branch } : {}),
      ...(opts.path ? { path: opts.path } : {}),
      ...(credentials ? { credentials } : {}),
      ...(opts.cacheDir ? { cacheRoot: opts.cacheDir } : {}),
      retries: 1,
    });
    if (opts.fleet) {
      const { runFleetStatus } = await import('./status-fleet.js');
      return await runFleetStatus(source, source.branch, opts.format, out, err);
    }
    const statusBranch =
      opts.cluster && opts.statusBranch === DEFAULT_STATUS_BRANCH
        ? clusterStatusBranch(opts.cluster)
        : opts.statusBranch;
    opts = { ...opts, statusBranch };
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
      const specs = [...readSpecDocs(files).values()];
      const errorsText = files.get('errors.yaml');
      out(
        `${JSON.stringify({ statusCommit: tip, cluster: record.cluster ?? null, sourceCommit: record.sourceCommit ?? null, specs, errors: errorsText ? (parse(errorsText) as unknown) : null }, null, 2)}\n`,
      );
      return EXIT_OK;
    }
    out(files.get('README.md') ?? `(the status branch ${opts.statusBranch} has no README.md)\n`);
    if (opts.watch) {
      out(
        `\nwatching ${source.display} ${opts.statusBranch} every ${opts.interval ?? '5s'}${source.isRemote ? '' : ' (a local clone: its refs move when you git fetch)'}; Ctrl-C stops\n`,
      );
      await watchStatus(source, opts.statusBranch, tip, intervalMs, out, signal ?? stopOnSigint());
    }
    return EXIT_OK;
  } catch (e) {
    if (isGitSourceError(e)) {
      err(`drydock status: ${e.message}\n`);
      return EXIT_ERROR;
    }
    throw e;
  }
}

/** Ctrl-C ends a watch with exit 0 (only while a watch runs). */
function stopOnSigint(): AbortSignal {
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  return ac.signal;
}
