/** What `drydock run` does once its flags are parsed (loaded only when it runs). */
import { plan, type PlanOptions } from '../../plan/index.js';
import { loadKubeConfig, KubeConfigError } from '../../observe/kube.js';
import { startService, type Service } from '../../service/service.js';
import type { PlannerContext } from '../../service/reconciler.js';
import { createLogger } from '../../service/logger.js';
import {
  CLOCK_OFFSET_ENV,
  OptionError,
  parseBool,
  parseClockOffset,
  parseDuration,
  providersFrom,
} from '../../service/options.js';
import { crashSettings } from '../../execute/crash-point.js';
import { createServiceSources, heartbeatOf } from '../../service/sources.js';
import { isCronSchedule } from '../../source/poller.js';
import { ListenError } from '../../service/http.js';
import { EXIT_ERROR, EXIT_OK, type ExitCode } from '../exit.js';
import type { RunFlags } from '../flags.js';

/** --interval: any duration longer than zero (one a cron step cannot express runs on a timer). */
function pollInterval(flag: string, value: string): string {
  parseDuration(flag, value);
  return value;
}

/** --poll-schedule: a cron expression node-cron runs (five fields, or six with seconds first). */
function pollSchedule(value: string): string {
  if (!isCronSchedule(value)) {
    throw new OptionError(
      `--poll-schedule ${JSON.stringify(value)} is not a cron expression; write e.g. '*/5 * * * *' (every five minutes)`,
      { flag: '--poll-schedule', value },
    );
  }
  return value;
}

/** An image flag: a reference a kubelet can pull, so neither empty nor holding blanks. */
function image(flag: string, value: string): string {
  if (value === '' || /\s/.test(value))
    throw new OptionError(`${flag} ${JSON.stringify(value)} is not a container image`, { flag, value });
  return value;
}

/**
 * What the planner is told by the flags: node Jobs and reboot pods run in drydock's own
 * namespace, where its RBAC allows creating them, with the images the flags name.
 */
export function planOptionsFrom(flags: RunFlags): PlanOptions {
  return {
    jobNamespace: flags.namespace,
    rebootImage: image('--reboot-image', flags.rebootImage),
    bottlerocketImage: image('--bottlerocket-image', flags.bottlerocketImage),
  };
}

function fail(message: string): ExitCode {
  process.stderr.write(`drydock run: ${message}\n`);
  return EXIT_ERROR;
}

export async function run(flags: RunFlags): Promise<ExitCode> {
  const logger = createLogger(flags.logLevel);
  let service: Service;
  try {
    const leaderElect = parseBool('--leader-elect', flags.leaderElect);
    // The reliability suite's hooks, checked up front so a typo fails the start, not a round.
    crashSettings();
    const clockOffsetMs = parseClockOffset(process.env[CLOCK_OFFSET_ENV]);
    const kubeConfig = loadKubeConfig(flags.kubeconfig || undefined);
    const providers = providersFrom(flags.provider, flags.cloudEndpoint || flags.simCloudUrl || undefined);
    const planOptions = planOptionsFrom(flags);
    const { source, status, statusHistory, fleet } = await createServiceSources(flags, logger);
    // Each round: the flags' options, what the service knows this round, and the fleet's view.
    const roundOptions = (context: PlannerContext): PlanOptions => {
      const round = fleet?.round();
      return { ...planOptions, ...context, ...(round !== undefined ? { fleet: round } : {}) };
    };
    service = await startService({
      kubeConfig,
      source,
      planner: (d, o, now, context) => plan(d, o, now, roundOptions(context)),
      ...(fleet ? { prepareRound: fleet.prepare, statusHeartbeatMs: () => heartbeatOf(fleet) } : {}),
      ...(clockOffsetMs !== 0 ? { now: () => new Date(Date.now() + clockOffsetMs) } : {}),
      providers,
      ...(status ? { status } : {}),
      ...(statusHistory ? { statusHistory } : {}),
      cluster: flags.cluster,
      logger,
      listen: flags.listen,
      leaderElection: leaderElect
        ? {
            namespace: flags.namespace,
            leaseDurationMs: parseDuration('--lease-duration', flags.leaseDuration),
            renewDeadlineMs: parseDuration('--renew-deadline', flags.renewDeadline),
            retryPeriodMs: parseDuration('--retry-period', flags.retryPeriod),
          }
        : false,
      pollInterval: pollInterval(
        flags.pollInterval ? '--poll-interval' : '--interval',
        flags.pollInterval || flags.interval,
      ),
      ...(flags.pollSchedule !== undefined ? { pollSchedule: pollSchedule(flags.pollSchedule) } : {}),
      resyncMs: parseDuration('--resync', flags.resync),
      notify: { namespace: flags.namespace, secretsDir: flags.notifySecretsDir },
    });
  } catch (err) {
    if (err instanceof OptionError || err instanceof KubeConfigError || err instanceof ListenError)
      return fail(err.message);
    const code = err && typeof err === 'object' && 'code' in err ? String(err.code) : undefined;
    return fail(`${err instanceof Error ? err.message : String(err)}${code ? ` (${code})` : ''}`);
  }
  process.stderr.write(`drydock listening on ${service.url ?? '(no http)'} as ${service.identity}\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  logger.info({ signal }, 'signal received');
  await service.stop();
  // Everything drydock started is stopped; a keep-alive socket a library still holds (seen with
  // the API server answering 502 during the stop) must not keep the process past its graceful
  // stop. Unref'd: a process that drains on its own exits at once.
  setTimeout(() => process.exit(EXIT_OK), 2_000).unref();
  return EXIT_OK;
}
