/**
 * `drydock sandbox`: the embedded default environment (src/sandbox/). Ctrl-C (SIGINT), SIGTERM
 * or SIGHUP stops every process it started before the command returns.
 */
import path from 'node:path';
import type { SandboxFlags } from './flags.js';
import { Option, type Command } from 'commander';
import { DEFAULT_STATE_DIR, SCENARIOS } from '../sandbox/layout.js';
import type { ExitCode } from './exit.js';

/** "10m", "90s", "1h", or plain seconds; undefined when it is none of these (or zero). */
export { parsePositiveDuration as parseDuration } from '../duration.js';

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('sandbox')
    .description('start a local control plane, a simulated cloud, a Git server and drydock, and show the rollout live')
    .addOption(
      new Option('--state-dir <dir>', 'directory for all sandbox state and logs (kept between runs)')
        .env('DRYDOCK_SANDBOX_STATE_DIR')
        .default(DEFAULT_STATE_DIR),
    )
    .option('--reset', 'remove the state directory first and start from scratch', false)
    .addOption(
      new Option(
        '--scenario <name>',
        `run a scenario to the end and exit: 0 when it passed (in ${path.join(path.dirname(DEFAULT_STATE_DIR), 'scenario-<name>')}, emptied first, unless --state-dir is given)`,
      ).choices([...SCENARIOS]),
    )
    .addOption(new Option('--timeout <duration>', 'scenario: give up after this long (e.g. 10m, 600s)').default('10m'))
    .addOption(new Option('--start-timeout <duration>', 'give up on a start-up step after this long').default('3m'))
    .addOption(
      new Option('--repo-from <dir>', 'seed a new fleet repository from this directory instead of examples-repo/'),
    )
    .addOption(
      new Option('--no-live', 'append plain progress lines instead of redrawing (the default when not a terminal)'),
    )
    .addHelpText(
      'after',
      '\nState (fleet.git, the cloud, etcd, logs of every process) stays in --state-dir, so running it again resumes.\n' +
        'The Kubernetes binaries are built on first use (scripts/k8s-binaries.sh) unless DRYDOCK_K8S_BIN or\n' +
        'KUBEBUILDER_ASSETS points at them.\n' +
        '\nScenarios:\n' +
        "  upgrade  push a new image for every scaling group's NodeImage; check every instance and node on it\n" +
        '  nodeop   push a NodeOp with a reboot across every worker (2 at a time); check each worker ran its Job\n' +
        '           once, rebooted once (bootID changed once), is uncordoned and unlocked, and status Complete n/n\n' +
        '  bottlerocket\n' +
        "           add 2 Bottlerocket hosts and push a NodeImage that updates them in place through the host's\n" +
        '           update API; check each ran one update Job and rebooted once (bootID changed once), reports\n' +
        '           the new version in its osImage, is uncordoned and unlocked, and status Complete n/n\n' +
        '  fleet    two clusters (a control plane, sim cloud and drydock --cluster each) on one fleet repository\n' +
        '           with two stages and a 10s soak; push a shared image; check a rolls first, b says it waits\n' +
        "           for a's report and the soak, starts only after it, and both end on the image, Complete",
    )
    .action(async (flags: SandboxFlags, command: Command) => {
      const { runSandboxCommand } = await import('./actions/sandbox.js');
      done(
        await runSandboxCommand({ ...flags, stateDirGiven: command.getOptionValueSource('stateDir') !== 'default' }),
      );
    });
}
