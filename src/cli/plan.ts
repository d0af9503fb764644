/**
 * `drydock plan`: what drydock would do now — the changes, the waves, the ETA, the blockers —
 * for a repository (directory or URL), a cluster and its cloud. Strictly read-only: it lists
 * the cluster once (get/list rights suffice) and reads the cloud; it never writes, and needs no
 * leader election. Exit 1 when the plan is blocked or the specs are invalid, 0 otherwise.
 */
import { Option, type Command } from 'commander';
import { PLAN_FORMATS, type PlanFormat } from '../report/plan-render.js';
import type { ExitCode } from './exit.js';

export interface PlanFlags {
  repo: string;
  branch: string;
  path: string;
  kubeconfig?: string;
  provider: string;
  cloudEndpoint?: string;
  format: PlanFormat;
  cluster: string;
  namespace: string;
  gitUsername?: string;
  gitPassword?: string;
  gitToken?: string;
}

export function register(program: Command, done: (code: ExitCode) => void): void {
  program
    .command('plan')
    .description('show what drydock would change now: nodes, waves, ETA and blockers (read-only)')
    .addOption(new Option('--repo <url|dir>', 'Git repository URL or local directory holding the specs').env('DRYDOCK_REPO').default('.'))
    .addOption(new Option('--branch <name>', 'branch (for a URL)').env('DRYDOCK_BRANCH').default('main'))
    .addOption(new Option('--path <dir>', 'directory inside the repository where drydock.yaml lives').env('DRYDOCK_PATH').default('.'))
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig of the cluster (read access is enough)').env('DRYDOCK_KUBECONFIG'))
    .addOption(new Option('--provider <name>', 'cloud provider of the scaling groups').choices(['sim', 'aws', 'gcp', 'azure']).env('DRYDOCK_PROVIDER').default('sim'))
    .addOption(new Option('--cloud-endpoint <url>', 'URL of the simulated cloud (provider sim)').env('DRYDOCK_CLOUD_ENDPOINT'))
    .addOption(new Option('--format <format>', 'output format; markdown is ready to post on a pull request').choices(PLAN_FORMATS).default('text'))
    .addOption(new Option('--cluster <name>', 'cluster name shown (default: drydock.yaml\'s)').env('DRYDOCK_CLUSTER').default(''))
    .addOption(new Option('--namespace <ns>', 'namespace drydock run uses (its node Jobs and reboot pods run there)').env('DRYDOCK_NAMESPACE').default('kube-system'))
    .addOption(new Option('--git-username <name>', 'Git basic-auth user').env('DRYDOCK_GIT_USERNAME'))
    .addOption(new Option('--git-password <password>', 'Git basic-auth password').env('DRYDOCK_GIT_PASSWORD').hideHelp())
    .addOption(new Option('--git-token <token>', 'Git token').env('DRYDOCK_GIT_TOKEN').hideHelp())
    .addHelpText('after', '\nExit status: 0 the plan can proceed, 1 it is blocked (approval, PDB, halted) or the specs are invalid, 2 error.')
    .action(async (flags: PlanFlags) => {
      const { runPlan } = await import('./actions/plan.js');
      done(await runPlan(flags, (s) => process.stdout.write(s)));
    });
}
