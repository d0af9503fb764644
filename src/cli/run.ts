/**
 * `drydock run`: the service. Flags and DRYDOCK_* environment variables configure it; logs are
 * JSON lines on stdout; SIGTERM/SIGINT finish the action in flight, release the lease and exit 0.
 */
import type { RunFlags } from './flags.js';
import { Option, type Command } from 'commander';
import type { ExitCode } from './exit.js';

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('run')
    .description('run the service: follow the repository, roll out node changes safely, report to the status branch')
    .addOption(
      new Option('--repo <url|dir>', 'Git repository URL (or a local directory) holding the specs')
        .env('DRYDOCK_REPO')
        .makeOptionMandatory(),
    )
    .addOption(new Option('--branch <name>', 'branch to follow').env('DRYDOCK_BRANCH').default('main'))
    .addOption(
      new Option('--path <dir>', 'directory inside the repository where drydock.yaml lives')
        .env('DRYDOCK_PATH')
        .default('.'),
    )
    .addOption(
      new Option(
        '--kubeconfig <file>',
        'kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, in-cluster)',
      ).env('DRYDOCK_KUBECONFIG'),
    )
    .addOption(
      new Option('--provider <name>', 'cloud provider of the scaling groups')
        .choices(['sim', 'aws', 'gcp', 'azure'])
        .env('DRYDOCK_PROVIDER')
        .default('sim'),
    )
    .addOption(
      new Option('--cloud-endpoint <url>', 'URL of the simulated cloud (provider sim)').env('DRYDOCK_CLOUD_ENDPOINT'),
    )
    .addOption(new Option('--sim-cloud-url <url>', 'same as --cloud-endpoint').hideHelp())
    .addOption(
      new Option('--interval <duration>', 'Git polling interval (e.g. 30s, 1m)').env('DRYDOCK_INTERVAL').default('1m'),
    )
    .addOption(new Option('--poll-interval <duration>', 'same as --interval').hideHelp())
    .addOption(
      new Option(
        '--poll-schedule <cron>',
        "Git polling on this cron schedule instead of --interval (e.g. '*/5 * * * *')",
      ).env('DRYDOCK_POLL_SCHEDULE'),
    )
    .addOption(
      new Option('--cache-dir <dir>', 'where the local clone of the repository is kept').env('DRYDOCK_CACHE_DIR'),
    )
    .addOption(
      new Option('--status-branch <name>', 'branch the status reports are committed to')
        .env('DRYDOCK_STATUS_BRANCH')
        .default('drydock/status'),
    )
    .addOption(
      new Option('--listen <addr>', 'address of /healthz, /readyz, /metrics and the webhook')
        .env('DRYDOCK_LISTEN')
        .default(':8080'),
    )
    .addOption(
      new Option('--leader-elect <bool>', 'elect a leader through a Lease so only one replica acts')
        .env('DRYDOCK_LEADER_ELECT')
        .default(true),
    )
    .addOption(
      new Option(
        '--namespace <ns>',
        'namespace of the leader-election Lease, and of the Jobs and reboot pods drydock runs on nodes',
      )
        .env('DRYDOCK_NAMESPACE')
        .default('kube-system'),
    )
    .addOption(
      new Option('--cluster <name>', "cluster name in status reports (default: drydock.yaml's)")
        .env('DRYDOCK_CLUSTER')
        .default(''),
    )
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
        .env('DRYDOCK_LOG_LEVEL')
        .default('info'),
    )
    .addOption(
      new Option('--lease-duration <duration>', 'how long a leader may go unrenewed before another takes over')
        .env('DRYDOCK_LEASE_DURATION')
        .default('15s'),
    )
    .addOption(
      new Option('--renew-deadline <duration>', 'a leader that cannot renew for this long stops acting')
        .env('DRYDOCK_RENEW_DEADLINE')
        .default('10s'),
    )
    .addOption(
      new Option('--retry-period <duration>', 'how often the Lease is renewed or tried')
        .env('DRYDOCK_RETRY_PERIOD')
        .default('2s'),
    )
    .addOption(
      new Option('--resync <duration>', 'longest sleep between reconciles when nothing happens')
        .env('DRYDOCK_RESYNC')
        .default('1m'),
    )
    .addOption(
      new Option('--webhook-secret <secret>', 'shared secret of the Git webhook (prefer the env variable)')
        .env('DRYDOCK_WEBHOOK_SECRET')
        .hideHelp(),
    )
    .addOption(new Option('--git-username <name>', 'Git basic-auth user').env('DRYDOCK_GIT_USERNAME'))
    .addOption(
      new Option('--git-password <password>', 'Git basic-auth password (prefer the env variable)')
        .env('DRYDOCK_GIT_PASSWORD')
        .hideHelp(),
    )
    .addOption(
      new Option('--git-token <token>', 'Git token (prefer the env variable)').env('DRYDOCK_GIT_TOKEN').hideHelp(),
    )
    .addOption(
      new Option('--git-token-file <file>', 'file holding the Git token (a mounted Secret)').env(
        'DRYDOCK_GIT_TOKEN_FILE',
      ),
    )
    .addOption(
      new Option('--git-password-file <file>', 'file holding the Git basic-auth password').env(
        'DRYDOCK_GIT_PASSWORD_FILE',
      ),
    )
    .addOption(
      new Option('--webhook-secret-file <file>', 'file holding the shared secret of the Git webhook').env(
        'DRYDOCK_WEBHOOK_SECRET_FILE',
      ),
    )
    .addOption(
      new Option('--verify-commits', 'apply only commits signed by a key of --keyring').env('DRYDOCK_VERIFY_COMMITS'),
    )
    .addOption(
      new Option('--keyring <file>', 'armored OpenPGP public keys whose signatures --verify-commits accepts').env(
        'DRYDOCK_KEYRING',
      ),
    )
    .addHelpText(
      'after',
      '\nSecrets (DRYDOCK_GIT_PASSWORD, DRYDOCK_GIT_TOKEN, DRYDOCK_WEBHOOK_SECRET) are read from the environment or from\nfiles (--git-token-file, --git-password-file, --webhook-secret-file; files win) and never logged.',
    )
    .action(async (flags: RunFlags) => {
      const { run } = await import('./actions/run.js');
      done(await run(flags));
    });
}
