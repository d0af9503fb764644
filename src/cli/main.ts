import { Command, CommanderError } from 'commander';
import { EXIT_ERROR, EXIT_OK, type ExitCode } from './exit.js';
import { register as registerSimCloud } from './sim-cloud.js';
import { register as registerRun } from './run.js';
import { register as registerPlan } from './plan.js';
import { register as registerSandbox } from './sandbox.js';
import { register as registerValidate } from './validate.js';
import { register as registerStatus } from './status.js';
import { register as registerApprove } from './approve.js';

/**
 * Every subcommand lives in its own file and exports `register(program)`; its action
 * resolves to the exit code it wants (0 ok, 1 findings, 2 usage or runtime error).
 * A registrar imports only what its flags and help need; the command's implementation
 * (cli/actions/) is imported when the command runs, so one command never pays for loading
 * the others' dependencies (client-node, fastify, isomorphic-git…).
 */
type Registrar = (program: Command, done: (code: ExitCode) => void) => void;

const registrars: Registrar[] = [
  registerSimCloud,
  registerRun,
  registerPlan,
  registerSandbox,
  registerValidate,
  registerStatus,
  registerApprove,
];

export function buildProgram(done: (code: ExitCode) => void): Command {
  const program = new Command('drydock')
    .description('GitOps reconciliation of the Kubernetes node lifecycle')
    .exitOverride()
    .showHelpAfterError();
  for (const register of registrars) register(program, done);
  return program;
}

/** Runs the command line; resolves to the process exit code. */
export async function main(argv: string[]): Promise<ExitCode> {
  let code: ExitCode = EXIT_OK;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT_OK : EXIT_ERROR;
    }
    throw err;
  }
  return code;
}
