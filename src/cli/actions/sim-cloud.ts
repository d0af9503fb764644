/** What `drydock sim-cloud` does once its flags are parsed (loaded only when it runs). */
import { access } from 'node:fs/promises';
import { runSimCloud } from '../../sim-host/process.js';
import { SimConfigError } from '../../cloud/sim/config.js';
import { SimStateError } from '../../cloud/sim/state.js';
import { createLogger } from '../../service/logger.js';
import { EXIT_ERROR, EXIT_OK, type ExitCode } from '../exit.js';
import type { SimCloudFlags } from '../flags.js';

function fail(message: string): ExitCode {
  process.stderr.write(`drydock sim-cloud: ${message}\n`);
  return EXIT_ERROR;
}

export async function runSimCloudCommand(flags: SimCloudFlags): Promise<ExitCode> {
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port) || port > 65535) {
    return fail(`--port ${JSON.stringify(flags.port)} is not a port number (0-65535)`);
  }
  // An empty DRYDOCK_KUBECONFIG means unset.
  if (flags.kubeconfig === '') delete flags.kubeconfig;
  if (flags.cluster && flags.kubeconfig === undefined) {
    return fail(
      'no cluster to join: pass --kubeconfig FILE (or DRYDOCK_KUBECONFIG), or --no-cluster to keep Nodes in memory',
    );
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
    if (code === 'EADDRINUSE')
      return fail(`port ${port} on ${flags.host} is in use; pick another with --port (0: any free port)`);
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
