/**
 * `drydock sim-cloud`: the simulated cloud as its own process with an HTTP API, so drydock
 * (and the sandbox) reach it over the network as they would a real cloud. Runs until
 * SIGINT/SIGTERM; all state is in --state-dir, so a restart loses nothing.
 */
import type { SimCloudFlags } from './flags.js';
import { Option, type Command } from 'commander';
import type { ExitCode } from './exit.js';

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('sim-cloud')
    .description(
      'run the simulated cloud: scaling groups whose instances join a cluster as KWOK nodes, behind an HTTP API',
    )
    .addOption(
      new Option('--state-dir <dir>', 'directory holding the cloud state (created if missing)')
        .env('DRYDOCK_SIM_STATE_DIR')
        .makeOptionMandatory(),
    )
    .addOption(
      new Option('--config <file>', 'groups file (YAML): groups, boot delays, quotas, faults')
        .env('DRYDOCK_SIM_CONFIG')
        .makeOptionMandatory(),
    )
    .addOption(
      new Option('--kubeconfig <file>', 'kubeconfig of the cluster the instances join').env('DRYDOCK_KUBECONFIG'),
    )
    .option('--no-cluster', 'keep Nodes in memory instead of creating them in a cluster')
    .addOption(
      new Option('--port <port>', 'port of the HTTP API (0: any free port)').env('DRYDOCK_SIM_PORT').default('7070'),
    )
    .addOption(new Option('--host <host>', 'address to listen on').env('DRYDOCK_SIM_HOST').default('127.0.0.1'))
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
        .env('DRYDOCK_LOG_LEVEL')
        .default('info'),
    )
    .addHelpText(
      'after',
      '\nThe API prints its URL on stdout ("sim cloud listening on http://…"); logs go to stderr.\n' +
        'Routes: GET /groups, GET /groups/:id, PUT /groups/:id/image, POST /groups/:id/capacity,\n' +
        'DELETE /groups/:id/instances/:iid, GET|PUT /faults, POST /faults/inject (ids percent-encoded).',
    )
    .action(async (flags: SimCloudFlags) => {
      const { runSimCloudCommand } = await import('./actions/sim-cloud.js');
      done(await runSimCloudCommand(flags));
    });
}
