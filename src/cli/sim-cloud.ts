/**
 * `drydock sim-cloud`: the simulated cloud as its own process with an HTTP API, so drydock
 * (and the sandbox) reach it over the network as they would a real cloud. Runs until
 * SIGINT/SIGTERM; all state is in --state-dir, so a restart loses nothing.
 */
import { access } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { LevelWithSilent } from 'pino';
import { runSimCloud } from '../cloud/sim/process.js';
import { SimConfigError } from '../cloud/sim/config.js';
import { SimStateError } from '../cloud/sim/state.js';
import { createLogger } from '../service/logger.js';
import { EXIT_ERROR, EXIT_OK, type ExitCode } from './exit.js';

interface SimCloudFlags {
  stateDir: string;
  config: string;
  kubeconfig?: string;
  cluster: boolean;
  port: string;
  host: string;
  logLevel: LevelWithSilent;
}

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('sim-cloud')
    .description('run the simulated cloud: scaling groups whose instances join a cluster as KWOK nodes, behind an HTTP API')
    .addOption(new Option('--state-dir <dir>', 'directory holding the cloud state (created if missing)').env('DRYDOCK_SIM_STATE_DIR').makeOptionMandatory())
    .addOption(new Option('--config <file>', 'groups file (YAML): groups, boot delays, quotas, faults').env('DRYDOCK_SIM_CONFIG').makeOptionMandatory())
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig of the cluster the instances join').env('DRYDOCK_KUBECONFIG'))
    .option('--no-cluster', 'keep Nodes in memory instead of creating them in a cluster')
    .addOption(new Option('--port <port>', 'port of the HTTP API (0: any free port)').env('DRYDOCK_SIM_PORT').default('7070'))
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
      done(await run(flags));
    });
}

function fail(message: string): ExitCode {
  process.stderr.write(`drydock sim-cloud: ${message}\n`);
  return EXIT_ERROR;
}

async function run(flags: SimCloudFlags): Promise<ExitCode> {
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port) || port > 65535) {
    return fail(`--port ${JSON.stringify(flags.port)} is not a port number (0-65535)`);
  }
  // An empty DRYDOCK_KUBECONFIG means unset.
  if (flags.kubeconfig === '') delete flags.kubeconfig;
  if (flags.cluster && flags.kubeconfig === undefined) {
    return fail('no cluster to join: pass --kubeconfig FILE (or DRYDOCK_KUBECONFIG), or --no-cluster to keep Nodes in memory');
  }
  if (flags.cluster && flags.kubeconfig !== undefined) {
    try {
      await access(flags.kubeconfig);
    } catch {
      return fail(`--kubeconfig ${flags.kubeconfig}: file not found`);
    }
  }
  const logger = createLogger(flags.logLevel, process.stderr).child({ component: 'sim-cloud' });
  let running;
  try {
    running = await runSimCloud({
      config: flags.config,
      stateDir: flags.stateDir,
      ...(flags.cluster && flags.kubeconfig !== undefined ? { kubeconfigPath: flags.kubeconfig } : {}),
      host: flags.host,
      port,
      logger,
    });
  } catch (err) {
    if (err instanceof SimConfigError || err instanceof SimStateError) return fail(err.message);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') return fail(`port ${port} on ${flags.host} is in use; pick another with --port (0: any free port)`);
    return fail(err instanceof Error ? err.message : String(err));
  }
  process.stdout.write(`sim cloud listening on ${running.url}\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  logger.info({ signal }, 'sim cloud shutting down');
  await running.stop();
  return EXIT_OK;
}
