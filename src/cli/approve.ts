/**
 * `drydock approve KIND/NAME [--stage start|afterCanary|resume]`: writes the Approval file for the
 * exact image or revision that waits into the working tree, ready to commit and merge through
 * review. Which revision waits is read from the status branch when there is one, so an approval
 * is never a hand-typed revision.
 */
import { Option, type Command } from 'commander';
import { DEFAULT_STATUS_BRANCH } from '../source/trailers.js';
import type { ExitCode } from './exit.js';
import type { ApproveFlags } from './flags.js';

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('approve')
    .description('write the Approval file for the revision that waits (commit and merge it to approve)')
    .argument('<kind/name>', 'the spec to approve, e.g. NodeImage/worker')
    .addOption(
      new Option(
        '--stage <stage>',
        'the stage to approve (default: resume for a spec a metric gate halted, else the one the spec requires)',
      ).choices(['start', 'afterCanary', 'resume']),
    )
    .addOption(new Option('--dir <dir>', 'the working tree of the specs repository').default('.'))
    .addOption(
      new Option('--path <dir>', 'directory inside the repository where drydock.yaml lives')
        .env('DRYDOCK_PATH')
        .default('.'),
    )
    .addOption(
      new Option('--status-repo <url|dir>', "where the status branch is read (default: the working tree's clone)"),
    )
    .addOption(
      new Option('--status-branch <name>', 'the status branch')
        .env('DRYDOCK_STATUS_BRANCH')
        .default(DEFAULT_STATUS_BRANCH),
    )
    .addHelpText(
      'after',
      '\nExample: drydock approve NodeImage/worker --stage afterCanary && git add approvals && git commit -m "approve worker after canary"',
    )
    .action(async (target: string, flags: ApproveFlags) => {
      const { runApprove } = await import('./actions/approve.js');
      done(
        await runApprove(
          target,
          flags,
          (s) => process.stdout.write(s),
          (s) => process.stderr.write(s),
        ),
      );
    });
}
