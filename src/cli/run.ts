/**
 * `drydock run`: the service. Flags and DRYDOCK_* environment variables configure it; logs are
 * JSON lines on stdout; SIGTERM/SIGINT finish the action in flight, release the lease and exit 0.
 */
import type { RunFlags } from './flags.js';
import { DEFAULT_SECRETS_DIR } from '../notify/secrets.js';
import { Option, type Command } from 'commander';
import { DEFAULT_BOTTLEROCKET_IMAGE } from '../execute/jobs/bottlerocket-update.js';
import { DEFAULT_REBOOT_IMAGE } from '../execute/jobs/reboot-pod.js';
import type { ExitCode } from './exit.js';

export function register(program: Command, done: (code: ExitCode) => void): void {
  const command = program
    .command('run')
    .description('run the service: follow the repository, roll out node changes safely, report to the status branch');
  for (const option of [
    ...sourceOptions(),
    ...clusterOptions(),
    ...nodeImageOptions(),
    ...serviceOptions(),
    ...secretsOptions(),
  ])
    command.addOption(option);
  command
    .addHelpText(
      'after',
      '\nSecrets (DRYDOCK_GIT_PASSWORD, DRYDOCK_GIT_TOKEN, DRYDOCK_WEBHOOK_SECRET) are read from the environment or from\nfiles (--git-token-file, --git-password-file, --webhook-secret-file; files win) and never logged.',
    )
    .action(async (flags: RunFlags) => {
      const { run } = await import('./actions/run.js');
      done(await run(flags));
    });
}

/** Where the specs come from and where status goes. */
function sourceOptions(): Option[] {
  return [
    new Option('--repo <url|dir>', 'Git repository URL (or a local directory) holding the specs')
      .env('DRYDOCK_REPO')
      .makeOptionMandatory(),
    new Option('--branch <name>', 'branch to follow').env('DRYDOCK_BRANCH').default('main'),
    new Option('--path <dir>', 'directory inside the repository where drydock.yaml lives')
      .env('DRYDOCK_PATH')
      .default('.'),
    new Option('--interval <duration>', 'Git polling interval (e.g. 30s, 1m)').env('DRYDOCK_INTERVAL').default('1m'),
    new Option('--poll-interval <duration>', 'same as --interval').hideHelp(),
    new Option(
      '--poll-schedule <cron>',
      "Git polling on this cron schedule instead of --interval (e.g. '*/5 * * * *')",
    ).env('DRYDOCK_POLL_SCHEDULE'),
    new Option('--cache-dir <dir>', 'where the local clone of the repository is kept').env('DRYDOCK_CACHE_DIR'),
    new Option('--status-branch <name>', 'branch the status reports are committed to')
      .env('DRYDOCK_STATUS_BRANCH')
      .default('drydock/status'),
    new Option('--verify-commits', 'apply only commits signed by a key of --keyring').env('DRYDOCK_VERIFY_COMMITS'),
    new Option('--keyring <file>', 'armored OpenPGP public keys whose signatures --verify-commits accepts').env(
      'DRYDOCK_KEYRING',
    ),
  ];
}

/** The cluster and cloud acted on. */
function clusterOptions(): Option[] {
  return [
    new Option(
      '--kubeconfig <file>',
      'kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, in-cluster)',
    ).env('DRYDOCK_KUBECONFIG'),
    new Option('--provider <name>', 'cloud provider of the scaling groups')
      .choices(['sim', 'aws', 'gcp', 'azure'])
      .env('DRYDOCK_PROVIDER')
      .default('sim'),
    new Option('--cloud-endpoint <url>', 'URL of the simulated cloud (provider sim)').env('DRYDOCK_CLOUD_ENDPOINT'),
    new Option('--sim-cloud-url <url>', 'same as --cloud-endpoint').hideHelp(),
    new Option(
      '--namespace <ns>',
      'namespace of the leader-election Lease, and of the Jobs and reboot pods drydock runs on nodes',
    )
      .env('DRYDOCK_NAMESPACE')
      .default('kube-system'),
    new Option(
      '--cluster <name>',
      "cluster name in status reports (default: drydock.yaml's); in a fleet, the cluster served",
    )
      .env('DRYDOCK_CLUSTER')
      .default(''),
    new Option(
      '--notify-secrets-dir <dir>',
      "directory of the notification receivers' secret files (drydock.yaml's urlFrom and secretFrom file names)",
    )
      .env('DRYDOCK_NOTIFY_SECRETS_DIR')
      .default(DEFAULT_SECRETS_DIR),
  ];
}

/** The images of the pods and Jobs drydock runs on nodes (registries a cluster cannot pull from need a mirror). */
function nodeImageOptions(): Option[] {
  return [
    new Option(
      '--reboot-image <image>',
      'image of the reboot pod of NodeOp and inPlace NodeImage nodes (needs nsenter)',
    )
      .env('DRYDOCK_REBOOT_IMAGE')
      .default(DEFAULT_REBOOT_IMAGE),
    new Option(
      '--bottlerocket-image <image>',
      'image of the Bottlerocket update Job and its reboot pod (needs sh, awk and curl)',
    )
      .env('DRYDOCK_BOTTLEROCKET_IMAGE')
      .default(DEFAULT_BOTTLEROCKET_IMAGE),
  ];
}

/** The process: its HTTP endpoints, logs, pacing and leader election. */
function serviceOptions(): Option[] {
  return [
    new Option('--listen <addr>', 'address of /healthz, /readyz, /metrics and the webhook')
      .env('DRYDOCK_LISTEN')
      .default(':8080'),
    new Option('--log-level <level>', 'log level')
      .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
      .env('DRYDOCK_LOG_LEVEL')
      .default('info'),
    new Option('--resync <duration>', 'longest sleep between reconciles when nothing happens')
      .env('DRYDOCK_RESYNC')
      .default('1m'),
    new Option('--leader-elect <bool>', 'elect a leader through a Lease so only one replica acts')
      .env('DRYDOCK_LEADER_ELECT')
      .default(true),
    new Option('--lease-duration <duration>', 'how long a leader may go unrenewed before another takes over')
      .env('DRYDOCK_LEASE_DURATION')
      .default('15s'),
    new Option('--renew-deadline <duration>', 'a leader that cannot renew for this long stops acting')
      .env('DRYDOCK_RENEW_DEADLINE')
      .default('10s'),
    new Option('--retry-period <duration>', 'how often the Lease is renewed or tried')
      .env('DRYDOCK_RETRY_PERIOD')
      .default('2s'),
  ];
}

/** Credentials: each from a flag (hidden), its environment variable, or a mounted file. */
function secretsOptions(): Option[] {
  return [
    new Option('--webhook-secret <secret>', 'shared secret of the Git webhook (prefer the env variable)')
      .env('DRYDOCK_WEBHOOK_SECRET')
      .hideHelp(),
    new Option('--git-username <name>', 'Git basic-auth user').env('DRYDOCK_GIT_USERNAME'),
    new Option('--git-password <password>', 'Git basic-auth password (prefer the env variable)')
      .env('DRYDOCK_GIT_PASSWORD')
      .hideHelp(),
    new Option('--git-token <token>', 'Git token (prefer the env variable)').env('DRYDOCK_GIT_TOKEN').hideHelp(),
    new Option('--git-token-file <file>', 'file holding the Git token (a mounted Secret)').env(
      'DRYDOCK_GIT_TOKEN_FILE',
    ),
    new Option('--git-password-file <file>', 'file holding the Git basic-auth password').env(
      'DRYDOCK_GIT_PASSWORD_FILE',
    ),
    new Option('--webhook-secret-file <file>', 'file holding the shared secret of the Git webhook').env(
      'DRYDOCK_WEBHOOK_SECRET_FILE',
    ),
  ];
}
