/**
 * `drydock status`: reads the status branch (of a URL or a local repository) and prints its
 * README table, or with --format json the parsed status documents. Exit 2 when the branch does
 * not exist yet or the repository cannot be read. --watch then follows the branch: each new
 * status commit's time and subject ("NodeImage/worker 6/12 replaced"), until Ctrl-C.
 */
import type { StatusCommandOptions } from './flags.js';
import { Option, type Command } from 'commander';
import { DEFAULT_STATUS_BRANCH } from '../source/trailers.js';
import type { ExitCode } from './exit.js';

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('status')
    .description('print the status branch: every spec, its phase, progress and what it waits for')
    .addOption(
      new Option('--repo <url|path>', 'repository holding the status branch (http(s) URL or local path)')
        .env('DRYDOCK_REPO')
        .makeOptionMandatory(),
    )
    .addOption(
      new Option('--status-branch <name>', 'the status branch')
        .env('DRYDOCK_STATUS_BRANCH')
        .default(DEFAULT_STATUS_BRANCH),
    )
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .addOption(new Option('--cluster <name>', "in a fleet: read this cluster's status branch").env('DRYDOCK_CLUSTER'))
    .option('--fleet', 'in a fleet: every cluster × spec: phase, revision, wait')
    .addOption(
      new Option('--branch <name>', 'with --fleet: the branch holding fleet/fleet.yaml')
        .env('DRYDOCK_BRANCH')
        .default('main'),
    )
    .addOption(
      new Option('--path <dir>', 'with --fleet: directory where fleet/ lives').env('DRYDOCK_PATH').default('.'),
    )
    .option('--git-token-file <file>', 'file holding a Git token (or set DRYDOCK_GIT_TOKEN)')
    .option('--cache-dir <dir>', 'root of the Git cache clones')
    .option('--watch', 'after the README, follow the branch and print each status commit as it lands (Ctrl-C stops)')
    .option('--interval <duration>', 'with --watch: how often to fetch the branch', '5s')
    .action(async (options: StatusCommandOptions) => {
      const { runStatus } = await import('./actions/status.js');
      done(
        await runStatus(
          options,
          (s) => process.stdout.write(s),
          (s) => process.stderr.write(s),
        ),
      );
    });
}
