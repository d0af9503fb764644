/**
 * `drydock validate [DIR]`: load every spec under DIR the way the service would, and print
 * every error compiler-style (or as JSON, or as GitHub annotations). Exit 0 when valid,
 * 1 when not, 2 when DIR cannot be read or the flags are wrong.
 */
import { Option, type Command } from 'commander';
import type { ErrorFormat } from '../spec/index.js';
import type { ExitCode } from './exit.js';

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('validate')
    .description('check every spec in a repository directory; print errors as path:line:column')
    .argument('[dir]', 'repository directory', '.')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json', 'github']).default('text'))
    .option('--cluster <name>', 'in a fleet: check this cluster only (default: all)')
    .action(async (dir: string, options: { format: ErrorFormat; cluster?: string }) => {
      const { runValidate } = await import('./actions/validate.js');
      done(
        await runValidate(
          dir,
          options.format,
          (s) => process.stdout.write(s),
          (s) => process.stderr.write(s),
          options.cluster,
        ),
      );
    });
}
