/**
 * `drydock status`: reads the status branch (of a URL or a local repository) and prints its
 * README table, or with --format json the parsed status documents. Exit 2 when the branch does
 * not exist yet or the repository cannot be read.
 */
import { Option, type Command } from 'commander';
import { parse } from 'yaml';
import { EXIT_ERROR, EXIT_OK, type ExitCode } from './exit.js';
import { DEFAULT_STATUS_BRANCH, GitSource, isGitSourceError, readRecord, readStatusFiles, resolveCredentials } from '../source/index.js';

export interface StatusCommandOptions {
  readonly repo: string;
  readonly statusBranch: string;
  readonly format: 'text' | 'json';
  readonly gitTokenFile?: string;
  readonly cacheDir?: string;
}

export async function runStatus(opts: StatusCommandOptions, out: (s: string) => void, err: (s: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<ExitCode> {
  try {
    const credentials = resolveCredentials({ env, url: opts.repo, ...(opts.gitTokenFile ? { tokenFile: opts.gitTokenFile } : {}) });
    // The tracked branch plays no part here; the status branch is named explicitly.
    const source = new GitSource({ repo: opts.repo, ...(credentials ? { credentials } : {}), ...(opts.cacheDir ? { cacheRoot: opts.cacheDir } : {}), retries: 1 });
    let tip: string;
    try {
      tip = await source.fetchBranch(opts.statusBranch);
    } catch (e) {
      if (isGitSourceError(e, 'branch-missing')) {
        err(`drydock status: ${source.display} has no branch ${opts.statusBranch} yet: drydock writes it once it has run against this repository (or pass --status-branch)\n`);
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

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('status')
    .description('print the status branch: every spec, its phase, progress and what it waits for')
    .requiredOption('--repo <url|path>', 'repository holding the status branch (http(s) URL or local path)', process.env.DRYDOCK_REPO)
    .option('--status-branch <name>', 'the status branch', process.env.DRYDOCK_STATUS_BRANCH ?? DEFAULT_STATUS_BRANCH)
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--git-token-file <file>', 'file holding a Git token (or set DRYDOCK_GIT_TOKEN)')
    .option('--cache-dir <dir>', 'root of the Git cache clones')
    .action(async (options: StatusCommandOptions) => {
      done(await runStatus(options, (s) => process.stdout.write(s), (s) => process.stderr.write(s)));
    });
}
