/**
 * `drydock plan`: what drydock would do now — the changes, the waves, the ETA, the blockers —
 * for a repository (directory or URL), a cluster and its cloud. Strictly read-only: it lists
 * the cluster once (get/list rights suffice) and reads the cloud; it never writes, and needs no
 * leader election. Exit 1 when the plan is blocked or the specs are invalid, 0 otherwise.
 */
import type { PlanFlags } from './flags.js';
import { Option, type Command } from 'commander';
import { PLAN_FORMATS } from '../report/plan-render.js';
import type { ExitCode } from './exit.js';

const FORMATS = [...PLAN_FORMATS, 'github'] as const;

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('plan')
    .description('show what drydock would change now: nodes, waves, ETA and blockers (read-only)')
    .addOption(
      new Option('--repo <url|dir>', 'Git repository URL or local directory holding the specs')
        .env('DRYDOCK_REPO')
        .default('.'),
    )
    .addOption(new Option('--branch <name>', 'branch (for a URL)').env('DRYDOCK_BRANCH').default('main'))
    .addOption(
      new Option('--path <dir>', 'directory inside the repository where drydock.yaml lives')
        .env('DRYDOCK_PATH')
        .default('.'),
    )
    .addOption(
      new Option('--kubeconfig <file>', 'kubeconfig of the cluster (read access is enough)').env('DRYDOCK_KUBECONFIG'),
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
    .addOption(
      new Option(
        '--base <ref>',
        'pull request: the branch merged into (in a local clone also a tag, a commit or HEAD, each with ~N/^N steps: HEAD~1); needs --head',
      ),
    )
    .addOption(
      new Option(
        '--head <ref>',
        'pull request: the branch (or, in a local clone, HEAD or a commit) to plan against the live cluster',
      ),
    )
    .addOption(
      new Option(
        '--format <format>',
        'output format; markdown is one pull-request comment, github adds workflow annotations (with --base/--head)',
      )
        .choices(FORMATS)
        .default('text'),
    )
    .addOption(
      new Option('--cluster <name>', "cluster name shown (default: drydock.yaml's); in a fleet, the cluster planned")
        .env('DRYDOCK_CLUSTER')
        .default(''),
    )
    .addOption(
      new Option('--namespace <ns>', 'namespace drydock run uses (its node Jobs and reboot pods run there)')
        .env('DRYDOCK_NAMESPACE')
        .default('kube-system'),
    )
    .addOption(new Option('--git-username <name>', 'Git basic-auth user').env('DRYDOCK_GIT_USERNAME'))
    .addOption(
      new Option('--git-password <password>', 'Git basic-auth password').env('DRYDOCK_GIT_PASSWORD').hideHelp(),
    )
    .addOption(new Option('--git-token <token>', 'Git token').env('DRYDOCK_GIT_TOKEN').hideHelp())
    .addHelpText(
      'after',
      '\nA pull request: drydock plan --repo . --base main --head my-branch --format markdown\n' +
        'shows what the head changes, the approvals to merge, what blocks it now and its validation errors;\n' +
        'without cluster credentials the live part is skipped and said so.\n' +
        '\nExit status: 0 the plan can proceed, 1 it is blocked (approval, PDB, halted) or the specs are invalid, 2 error.',
    )
    .action(async (flags: PlanFlags) => {
      const { runPlan } = await import('./actions/plan.js');
      done(await runPlan(flags, (s) => process.stdout.write(s)));
    });
}
